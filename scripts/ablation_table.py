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
  print(markdown, end="")
  if args.out:
    pathlib.Path(args.out).write_text(markdown, encoding="utf-8")
  if args.json:
    pathlib.Path(args.json).write_text(json.dumps(table, indent=2) + "\n", encoding="utf-8")
  return 0


if __name__ == "__main__":
  raise SystemExit(main())
