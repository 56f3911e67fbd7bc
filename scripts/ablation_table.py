r"""Turns ablation runs into a Markdown table: mean ± standard error over seeds, deltas against
each ablation's baseline, the papers' reference numbers beside ours, and trajectory-length
statistics (P10/P90 and their ratio, the spread that motivates PPO's critic over GRPO).
Lengths are the trainer's logged `length/tokens_p*` (averaged over iterations) when present,
else pooled from the logged episodes.

  .venv/bin/python scripts/ablation_table.py runs/ablations               # print the table
  .venv/bin/python scripts/ablation_table.py runs/ablations --out docs/ablations.md --json runs/table.json

Reads ROOT/<config>/<seed dir>/metrics.jsonl (per-iteration scalars), summary.json and, when
present, trajectories/*.jsonl (token lengths of every episode).
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import sys
from typing import Any, Iterable, Sequence

import numpy as np

# Each ablation is compared with the config it changes.
BASELINES = {
    "no_instrumentation": "mle", "no_self_improve": "mle", "dag_off": "mle", "dag_inverse_log": "mle",
    "no_antihack": "rules_only", "judge_on": "rules_only",
    "grpo": "ppo", "drgrpo": "ppo", "rloo": "ppo", "reinforce_pp": "ppo",
}

_PPO_VS_GRPO = ("claim: with uneven trajectory lengths (high P90/P10) a token-level critic (PPO+GAE) "
                "beats group-relative advantages")
PAPER_REFERENCES = {
    "mle": "Yang et al. 2025: PPO on Qwen2.5-3B beats prompted frontier models by 22% on average",
    "no_instrumentation": "Yang et al. 2025: instrumentation +22% on average (removing it should hurt)",
    "dag_off": "Yang et al. 2025: duration-aware gradients +3.85% on average",
    "no_self_improve": "Yang et al. 2025: improve-previous prompts better on 10 of 12 tasks",
    "grpo": _PPO_VS_GRPO, "drgrpo": _PPO_VS_GRPO, "rloo": _PPO_VS_GRPO,
    "no_antihack": "expected: reward rises faster than held-out pass@1 (hacking) without the filter",
}

# (column, source, how): "last_frac" = mean over the last fraction of iterations; "last" = last
# logged value; "mean" = mean over the run; "summary" = summary.json.
COLUMNS = (
    ("reward", "train/reward_mean", "last_frac"),
    ("success", "train/success_rate", "last_frac"),
    ("eval pass@1", "eval/pass@1", "last"),
    ("held-out pass@1", "heldout_pass@1_final", "summary"),
    ("flag rate", "antihack/flag_rate", "mean"),
    ("wall s", "wall_time_s", "summary"),
)
PRIMARY = "reward"


def read_jsonl(path: pathlib.Path) -> list[dict[str, Any]]:
  rows = []
  with open(path, encoding="utf-8") as f:
    for lineno, line in enumerate(f, 1):
      if not line.strip():
        continue
      try:
        rows.append(json.loads(line))
      except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{lineno}: not JSON ({e.msg})") from None
  return rows


def _finite(values: Iterable[Any]) -> list[float]:
  out = []
  for v in values:
    if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
      out.append(float(v))
  return out


def run_values(run_dir: pathlib.Path, *, last_frac: float = 0.1) -> dict[str, float]:
  """One run's numbers: the table's columns plus trajectory-length statistics."""
  metrics_path = run_dir / "metrics.jsonl"
  rows = read_jsonl(metrics_path) if metrics_path.is_file() else []
  rows = [r for r in rows if "step" in r]
  rows.sort(key=lambda r: r["step"])
  summary_path = run_dir / "summary.json"
  summary = json.loads(summary_path.read_text(encoding="utf-8")) if summary_path.is_file() else {}
  out: dict[str, float] = {}
  for column, key, how in COLUMNS:
    if how == "summary":
      vals = _finite([summary.get(key)])
    else:
      series = _finite(r.get(key) for r in rows)
      if how == "last_frac" and series:
        series = series[-max(1, int(math.ceil(len(series) * last_frac))):]
      elif how == "last" and series:
        series = series[-1:]
      vals = series
    if vals:
      out[column] = float(np.mean(vals))
  # Prefer the trainer's own per-iteration percentiles (whole sequences, prompt included, as
  # trained on), averaged over the run; else pool the logged episodes' action+observation tokens.
  logged = [_finite(r.get(f"length/tokens_{p}") for r in rows) for p in ("p10", "p50", "p90")]
  if all(logged):
    p10, p50, p90 = (float(np.mean(v)) for v in logged)
  else:
    lengths = trajectory_lengths(run_dir)
    p10, p50, p90 = np.percentile(lengths, [10, 50, 90]) if lengths else (np.nan, np.nan, np.nan)
  if not math.isnan(p10) and not math.isnan(p90):
    out.update({"len p10": float(p10), "len p50": float(p50), "len p90": float(p90),
                "len p90/p10": float(p90 / max(p10, 1.0))})
  out["iterations"] = float(len(rows))
  return out


def trajectory_lengths(run_dir: pathlib.Path) -> list[float]:
  """Tokens (action + observation) of every logged episode, from trajectories/*.jsonl."""
  lengths = []
  for path in sorted((run_dir / "trajectories").glob("*.jsonl*")) if (run_dir / "trajectories").is_dir() else []:
    if path.suffix not in (".jsonl",) and ".jsonl." not in path.name:
      continue
    for record in read_jsonl(path):
      total = 0
      for step in record.get("steps", []):
        tokens = step.get("tokens") or {}
        total += int(tokens.get("action", 0) or 0) + int(tokens.get("observation", 0) or 0)
      if total:
        lengths.append(float(total))
  return lengths


def mean_se(values: Sequence[float]) -> tuple[float, float | None]:
  """Mean and standard error of the mean (None for a single seed)."""
  x = np.asarray(values, dtype=np.float64)
  if x.size == 0:
    raise ValueError("mean_se needs at least one value")
  if x.size == 1:
    return float(x[0]), None
  return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))


def collect(root: pathlib.Path, *, last_frac: float = 0.1) -> dict[str, list[dict[str, float]]]:
  """{config: [per-seed values]} for every ROOT/<config>/<run>/ holding metrics or a summary."""
  if not root.is_dir():
    raise FileNotFoundError(f"ablation root {root} does not exist")
  runs: dict[str, list[dict[str, float]]] = {}
  for config_dir in sorted(p for p in root.iterdir() if p.is_dir()):
    for run_dir in sorted(p for p in config_dir.iterdir() if p.is_dir()):
      if (run_dir / "metrics.jsonl").is_file() or (run_dir / "summary.json").is_file():
        runs.setdefault(config_dir.name, []).append(run_values(run_dir, last_frac=last_frac))
  return runs


def aggregate(runs: dict[str, list[dict[str, float]]], *, default_baseline: str = "ppo") -> dict[str, dict]:
  table: dict[str, dict] = {}
  for config, seeds in runs.items():
    row: dict[str, Any] = {"seeds": len(seeds)}
    for key in sorted({k for s in seeds for k in s}):
      vals = [s[key] for s in seeds if key in s]
      if vals:
        row[key] = mean_se(vals)
    table[config] = row
  for config, row in table.items():
    baseline = BASELINES.get(config)
    if baseline not in table:  # the natural baseline was not run: compare with the default one
      baseline = default_baseline if config != default_baseline else None
    row["baseline"] = baseline if baseline in table else None
    if row["baseline"] and PRIMARY in row and PRIMARY in table[baseline]:
      ours, base = row[PRIMARY][0], table[baseline][PRIMARY][0]
      row["delta"] = ours - base
      row["delta_rel"] = (ours - base) / abs(base) if abs(base) > 1e-12 else None
    row["paper"] = PAPER_REFERENCES.get(config, "")
  return table


def _fmt(cell: tuple[float, float | None] | None, digits: int = 3) -> str:
  if cell is None:
    return "—"
  mean, se = cell
  return f"{mean:.{digits}f} ± {se:.{digits}f}" if se is not None else f"{mean:.{digits}f}"


def to_markdown(table: dict[str, dict]) -> str:
  headers = ["config", "seeds"] + [c for c, _, _ in COLUMNS] + [
      f"Δ {PRIMARY} vs baseline", "tokens P10 / P90 (P90/P10)", "paper reference"]
  lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
  for config in sorted(table, key=lambda c: (table[c].get("baseline") is not None, c)):
    row = table[config]
    cells = [config, str(row["seeds"])]
    for column, _, _ in COLUMNS:
      cells.append(_fmt(row.get(column), 1 if column == "wall s" else 3))
    if row.get("delta") is not None:
      rel = f" ({row['delta_rel'] * 100:+.1f}%)" if row.get("delta_rel") is not None else ""
      cells.append(f"{row['delta']:+.3f}{rel} vs {row['baseline']}")
    else:
      cells.append("—")
    if "len p10" in row:
      cells.append(f"{row['len p10'][0]:.0f} / {row['len p90'][0]:.0f} ({row['len p90/p10'][0]:.2f})")
    else:
      cells.append("—")
    cells.append(row.get("paper") or "")
    lines.append("| " + " | ".join(cells) + " |")
  lines.append("")
  lines.append("Mean ± standard error over seeds (no ± with one seed). reward and success: mean over the "
               "last 10% of iterations; eval pass@1: last evaluation; flag rate: mean over the run; "
               "tokens: the trainer's per-iteration length percentiles averaged over the run (else episode "
               "lengths pooled from the trajectory logs).")
  return "\n".join(lines) + "\n"


# -- the paper's features on MLE tasks (configs/experiments/mle.py and its ablations) ---------------

def competition_of(task_id: str) -> str:
  """mle-tabular-churn-v500 -> tabular-churn (the task ids of rl.tasks.mle.build.task_id_for)."""
  name = task_id[len("mle-"):] if task_id.startswith("mle-") else task_id
  head, _, tail = name.rpartition("-v")
  return head if head and tail.isdigit() else name


def mle_run_values(run_dir: pathlib.Path, *, last_frac: float = 0.1) -> dict[str, float]:
  """One MLE run's numbers: held-out score per competition and overall (valid programs; the
  summary's heldout_mle_final), held-out and training valid rates, execution time, and the
  training episodes' scores split by prompt kind (improve-previous vs from scratch) per
  competition, from the trajectory records. {} for a run that is not an MLE run."""
  summary_path = run_dir / "summary.json"
  summary = json.loads(summary_path.read_text(encoding="utf-8")) if summary_path.is_file() else {}
  final = summary.get("heldout_mle_final")
  if not final:
    return {}
  out: dict[str, float] = {"heldout valid": float(final.get("valid_rate", 0.0))}
  by_competition: dict[str, list[float]] = {}
  for task_id, task in final.get("per_task", {}).items():
    if "score_mean" in task:
      by_competition.setdefault(competition_of(task_id), []).append(task["score_mean"])
  for competition, scores in by_competition.items():
    out[f"heldout/{competition}"] = float(np.mean(scores))
  sft = summary.get("heldout_mle_sft") or {}
  if "valid_rate" in sft:
    out["heldout valid sft"] = float(sft["valid_rate"])
  metrics_path = run_dir / "metrics.jsonl"
  rows = sorted((r for r in (read_jsonl(metrics_path) if metrics_path.is_file() else []) if "step" in r),
                key=lambda r: r["step"])
  for column, key, how in (("train valid first", "mle/valid_rate", "first"), ("train valid", "mle/valid_rate", "last_frac"),
                           ("train score", "mle/score_mean", "last_frac"), ("exec s", "mle/exec_time_s", "mean"),
                           ("stages", "mle/stage_mean", "mean")):
    series = _finite(r.get(key) for r in rows)
    if how == "first":
      series = series[:1]
    elif how == "last_frac":
      series = series[-max(1, int(math.ceil(len(series) * last_frac))):]
    if series:
      out[column] = float(np.mean(series))
  kinds: dict[str, list[float | None]] = {}  # "<kind>/<competition>" -> scores (None: invalid)
  for path in sorted((run_dir / "trajectories").glob("*.jsonl")) if (run_dir / "trajectories").is_dir() else []:
    for record in read_jsonl(path):
      grade = (record.get("mle") or {}).get("grade")
      if grade is not None:
        kind = "improve" if record.get("prompt_origin") else "scratch"
        score = float(grade["normalized_score"]) if grade.get("valid") else None
        kinds.setdefault(f"{kind}/{competition_of(record['task_id'])}", []).append(score)
  for key, scores in kinds.items():
    kind, competition = key.split("/", 1)
    valid = [x for x in scores if x is not None]
    out[f"{kind}_valid/{competition}"] = len(valid) / len(scores)
    out[f"{kind}_n/{competition}"] = float(len(scores))
    if valid:
      out[key] = float(np.mean(valid))
  return out


def mle_markdown(root: pathlib.Path, *, last_frac: float = 0.1) -> str:
  """The paper-feature tables (empty when ROOT holds no MLE run): per config, held-out score per
  competition and valid rates; improve-previous vs from scratch per competition (the paper's
  Table 4 form); execution time beside score for the duration-aware variants."""
  runs: dict[str, list[dict[str, float]]] = {}
  for config_dir in sorted(p for p in root.iterdir() if p.is_dir()):
    for run_dir in sorted(p for p in config_dir.iterdir() if p.is_dir()):
      values = mle_run_values(run_dir, last_frac=last_frac)
      if values:
        runs.setdefault(config_dir.name, []).append(values)
  if not runs:
    return ""

  def cell(config: str, key: str, digits: int = 3) -> str:
    vals = [r[key] for r in runs[config] if key in r]
    return _fmt(mean_se(vals), digits) + (f" (n={len(vals)})" if len(vals) != len(runs[config]) else "") if vals else "—"

  competitions = sorted({k.split("/", 1)[1] for rs in runs.values() for r in rs for k in r if k.startswith("heldout/")})
  order = sorted(runs, key=lambda c: (c != "mle", c))
  lines = ["### Paper features on the MLE competitions", "",
           "Held-out score: mean normalised score (higher is better) of the valid programs on the held-out "
           "data variants, after RL; valid: share of valid submissions (held-out after SFT / after RL; "
           "training at the first iteration / last 10%).", ""]
  headers = (["config", "seeds"] + [f"held-out {c}" for c in competitions]
             + ["held-out valid SFT → RL", "train valid first → last", "exec s", "stages", "paper reference"])
  lines += ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
  for config in order:
    cells = [config, str(len(runs[config]))] + [cell(config, f"heldout/{c}") for c in competitions]
    cells += [f"{cell(config, 'heldout valid sft', 2)} → {cell(config, 'heldout valid', 2)}",
              f"{cell(config, 'train valid first', 2)} → {cell(config, 'train valid', 2)}",
              cell(config, "exec s", 2), cell(config, "stages", 2), PAPER_REFERENCES.get(config, "")]
    lines.append("| " + " | ".join(cells) + " |")
  table4 = [c for c in order if any(k.startswith("improve_valid/") for r in runs[c] for k in r)]
  if table4:
    lines += ["", "Improve-previous vs from-scratch prompts (the paper's Table 4 form), per competition over the "
              "training episodes: mean normalised score of the valid programs, mean ± standard error over seeds, "
              "then [valid rate, episodes]; wins: competitions where improve-previous scores higher.", ""]
    headers = ["config"] + [f"{c}: improve / scratch" for c in competitions] + ["improve wins"]
    lines += ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for config in table4:
      cells, wins, compared = [config], 0, 0
      for c in competitions:
        parts = []
        for kind in ("improve", "scratch"):
          scores = [r[f"{kind}/{c}"] for r in runs[config] if f"{kind}/{c}" in r]
          rate = [r[f"{kind}_valid/{c}"] for r in runs[config] if f"{kind}_valid/{c}" in r]
          n = sum(r.get(f"{kind}_n/{c}", 0.0) for r in runs[config])
          parts.append(f"{_fmt(mean_se(scores)) if scores else '—'} [{np.mean(rate) if rate else 0:.2f}, {n:.0f}]")
        imp = [r[f"improve/{c}"] for r in runs[config] if f"improve/{c}" in r]
        scr = [r[f"scratch/{c}"] for r in runs[config] if f"scratch/{c}" in r]
        if imp and scr:
          compared += 1
          wins += mean_se(imp)[0] > mean_se(scr)[0]
        cells.append(" / ".join(parts))
      cells.append(f"{wins} of {compared}")
      lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Paper (Yang et al. 2025, Table 4): improve-previous better on 10 of 12 tasks."]
  return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("root", help="the --root of run_ablations.py: ROOT/<config>/<seed>/")
  parser.add_argument("--baseline", default="ppo", help="baseline for configs without a natural one")
  parser.add_argument("--last-frac", type=float, default=0.1, help="fraction of final iterations averaged")
  parser.add_argument("--out", default="", help="also write the Markdown table here")
  parser.add_argument("--json", default="", help="also write the aggregated numbers as JSON here")
  args = parser.parse_args(argv)
  if not 0 < args.last_frac <= 1:
    parser.error("--last-frac must be in (0, 1]")
  try:
    runs = collect(pathlib.Path(args.root), last_frac=args.last_frac)
  except (FileNotFoundError, ValueError) as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  if not runs:
    print(f"error: no runs (metrics.jsonl or summary.json) under {args.root}/<config>/<seed>/", file=sys.stderr)
    return 2
  table = aggregate(runs, default_baseline=args.baseline)
  markdown = to_markdown(table)
  mle = mle_markdown(pathlib.Path(args.root), last_frac=args.last_frac)
  if mle:
    markdown += "\n" + mle
  print(markdown, end="")
  if args.out:
    pathlib.Path(args.out).write_text(markdown, encoding="utf-8")
  if args.json:
    pathlib.Path(args.json).write_text(json.dumps(table, indent=2) + "\n", encoding="utf-8")
  return 0


if __name__ == "__main__":
  raise SystemExit(main())
