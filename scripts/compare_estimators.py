r"""Compares advantage estimators run over the same seeds: a table of mean ± standard error over
seeds, a paired test of each estimator against a baseline, and a plot of success per iteration
(mean and a band of one standard error over seeds). Made for the long-horizon comparison
(docs/ablations.md); works on any run_ablations.py root whose configs share seeds.

  .venv/bin/python scripts/compare_estimators.py runs/abl_long5 --baseline long_horizon \
      --record docs/results/long_horizon.json --plot docs/images/long_horizon_success.png
  # later, or on another machine: the same table and plot from the committed record alone
  .venv/bin/python scripts/compare_estimators.py docs/results/long_horizon.json --baseline long_horizon

A run is ROOT/<config>/seed<S>/ with metrics.jsonl and a finished summary.json (runs still going
are left out). `--record FILE` writes the per-run numbers this script uses (a few KB per run), so
a table survives the run directories; the record merges into an existing file, newer runs
replacing older ones of the same config and seed.

Paired test: for each estimator and each seed both it and the baseline finished, the difference
of a quantity (held-out pass@1 after RL, train-task pass@1 gain, success over the last iterations);
the table gives the mean difference ± its standard error, Student's t-test p-value and the exact
sign-flip (permutation) p-value over the 2^n sign assignments. With 5 seeds the smallest possible
sign-flip p-value is 2/32 = 0.0625.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import pathlib
import sys
from typing import Any, Sequence

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from ablation_table import mean_se  # noqa: E402  # mean and standard error over seeds

LAST_ITERATIONS = 2  # "success, last": the mean over the final iterations

# Per-run scalars: (name, how it is read). Series are kept whole in the record.
SERIES = ("train/success_rate", "critic/explained_variance", "groups/zero_variance_frac",
          "adv_len/long_success_early", "adv_len/short_failure", "adv_len/long_success_frac",
          "adv_len/short_failure_frac", "length/turns_p10", "length/turns_p50", "length/turns_p90",
          "length/tokens_p10", "length/tokens_p90")
SUMMARY = ("heldout_pass@1_sft", "heldout_pass@1_final", "train_pass@1_start", "train_pass@1_end",
           "wall_time_s")


def read_run(run_dir: pathlib.Path) -> dict[str, Any] | None:
  """One finished run's record: its summary numbers and per-iteration series; None if unfinished."""
  try:
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
  except (OSError, ValueError):
    return None
  if "wall_time_s" not in summary:
    return None
  rows = []
  with open(run_dir / "metrics.jsonl", encoding="utf-8") as f:
    for lineno, line in enumerate(f, 1):
      if line.strip():
        try:
          rows.append(json.loads(line))
        except json.JSONDecodeError as e:
          raise ValueError(f"{run_dir / 'metrics.jsonl'}:{lineno}: not JSON ({e.msg})") from None
  rows.sort(key=lambda r: r.get("step", 0))
  series = {key: [r.get(key) for r in rows] for key in SERIES}
  return {"summary": {k: summary.get(k) for k in SUMMARY}, "series": series}


def collect(root: pathlib.Path) -> dict[str, dict[str, Any]]:
  """{config: {seed: record}} from ROOT/<config>/seed<S>/, or from a record file written by --record."""
  if root.is_file():
    return json.loads(root.read_text(encoding="utf-8"))["runs"]
  if not root.is_dir():
    raise FileNotFoundError(f"{root}: neither a run root nor a record file")
  runs: dict[str, dict[str, Any]] = {}
  for config_dir in sorted(p for p in root.iterdir() if p.is_dir()):
    for run_dir in sorted(config_dir.glob("seed*")):
      record = read_run(run_dir) if (run_dir / "metrics.jsonl").is_file() else None
      if record is not None:
        runs.setdefault(config_dir.name, {})[run_dir.name.removeprefix("seed")] = record
  return runs


def _finite(values: Sequence[Any]) -> list[float]:
  return [float(v) for v in values
          if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)]


def run_values(record: dict[str, Any]) -> dict[str, float]:
  """The table's numbers for one run."""
  s, series = record["summary"], record["series"]
  out: dict[str, float] = {}
  for key in SUMMARY:
    if isinstance(s.get(key), (int, float)):
      out[key] = float(s[key])
  if "heldout_pass@1_sft" in out and "heldout_pass@1_final" in out:
    out["heldout_gain"] = out["heldout_pass@1_final"] - out["heldout_pass@1_sft"]
  if "train_pass@1_start" in out and "train_pass@1_end" in out:
    out["train_gain"] = out["train_pass@1_end"] - out["train_pass@1_start"]
  success = series.get("train/success_rate") or []
  if _finite(success[:1]):
    out["success_first"] = float(success[0])
  if _finite(success[-LAST_ITERATIONS:]):
    out["success_last"] = float(np.mean(_finite(success[-LAST_ITERATIONS:])))
  # The first iteration's lengths: the SFT policy's episodes, before any estimator acted.
  for key in ("length/turns_p10", "length/turns_p50", "length/turns_p90", "length/tokens_p10", "length/tokens_p90"):
    first = _finite((series.get(key) or [])[:1])
    if first:
      out[key] = first[0]
  if "length/turns_p10" in out and "length/turns_p90" in out:
    out["turns_p90_over_p10"] = out["length/turns_p90"] / max(out["length/turns_p10"], 1.0)
  if "length/tokens_p10" in out and "length/tokens_p90" in out:
    out["tokens_p90_over_p10"] = out["length/tokens_p90"] / max(out["length/tokens_p10"], 1.0)
  for key in ("critic/explained_variance", "groups/zero_variance_frac", "adv_len/long_success_early",
              "adv_len/short_failure"):
    values = _finite(series.get(key) or [])
    if key == "critic/explained_variance":
      values = _finite((series.get(key) or [])[1:])  # the first iteration's critic is untrained
    if values:
      out[key] = float(np.mean(values))
  return out


def sign_flip_p(diffs: Sequence[float]) -> float:
  """Exact two-sided p-value of the paired sign-flip test: the share of the 2^n sign assignments
  whose mean is at least as far from zero as the observed one."""
  d = np.asarray(diffs, np.float64)
  observed = abs(d.mean())
  signs = np.array(list(itertools.product((1.0, -1.0), repeat=d.size)))
  means = np.abs((signs * d).mean(axis=1))
  return float(np.mean(means >= observed - 1e-12))


def t_test_p(diffs: Sequence[float]) -> float | None:
  """Two-sided p-value of the paired t-test (None below 2 pairs; 1.0 when every difference is 0)."""
  d = np.asarray(diffs, np.float64)
  if d.size < 2:
    return None
  sd = d.std(ddof=1)
  if sd == 0:
    return 1.0 if d.mean() == 0 else 0.0
  from scipy import stats  # pylint: disable=import-outside-toplevel  # scikit-learn's dependency
  t = d.mean() / (sd / math.sqrt(d.size))
  return float(2 * stats.t.sf(abs(t), df=d.size - 1))


PAIRED = (("heldout_pass@1_final", "held-out pass@1 after RL"), ("train_gain", "train-task pass@1 gain"),
          ("success_last", f"success, last {LAST_ITERATIONS} iterations"))


def paired(runs: dict[str, dict[str, Any]], config: str, baseline: str, key: str) -> dict[str, Any] | None:
  seeds = sorted(set(runs.get(config, {})) & set(runs.get(baseline, {})), key=int)
  diffs = []
  for seed in seeds:
    a, b = run_values(runs[config][seed]), run_values(runs[baseline][seed])
    if key in a and key in b:
      diffs.append(a[key] - b[key])
  if not diffs:
    return None
  mean, se = mean_se(diffs)
  return {"n": len(diffs), "mean": mean, "se": se, "t_p": t_test_p(diffs), "sign_flip_p": sign_flip_p(diffs)}


def _cell(values: Sequence[float], digits: int = 3) -> str:
  if not values:
    return "—"
  mean, se = mean_se(values)
  return f"{mean:.{digits}f} ± {se:.{digits}f}" if se is not None else f"{mean:.{digits}f}"


def to_markdown(runs: dict[str, dict[str, Any]], baseline: str) -> str:
  per_config = {c: [run_values(r) for _, r in sorted(seeds.items(), key=lambda kv: int(kv[0]))]
                for c, seeds in runs.items()}
  order = sorted(per_config, key=lambda c: (c != baseline, c))
  columns = (("success, first -> last", None), ("train-task pass@1 start -> end", None),
             ("held-out pass@1 SFT -> RL", None), ("turns P10 / P50 / P90 (P90/P10), iteration 1", None),
             ("tokens P90/P10", "tokens_p90_over_p10"), ("critic EV", "critic/explained_variance"),
             ("zero-variance groups", "groups/zero_variance_frac"),
             ("adv. long successes, early turns", "adv_len/long_success_early"),
             ("adv. short failures", "adv_len/short_failure"))
  lines = ["| estimator | seeds | " + " | ".join(c for c, _ in columns) + " |", "|" + "---|" * (len(columns) + 2)]

  def col(values: list[dict[str, float]], key: str) -> list[float]:
    return [v[key] for v in values if key in v]

  for config in order:
    vals = per_config[config]
    cells = [config, str(len(vals)),
             f"{_cell(col(vals, 'success_first'), 2)} -> {_cell(col(vals, 'success_last'), 2)}",
             f"{_cell(col(vals, 'train_pass@1_start'))} -> {_cell(col(vals, 'train_pass@1_end'))}",
             f"{_cell(col(vals, 'heldout_pass@1_sft'))} -> {_cell(col(vals, 'heldout_pass@1_final'))}",
             " / ".join(_cell(col(vals, f"length/turns_{p}"), 1) for p in ("p10", "p50", "p90"))
             + f" ({_cell(col(vals, 'turns_p90_over_p10'), 1)})"]
    for _, key in columns[4:]:
      cells.append(_cell(col(vals, key), 2))
    lines.append("| " + " | ".join(cells) + " |")
  lines += ["", f"Paired against `{baseline}` over the seeds both finished (difference = estimator - baseline):", "",
            "| estimator | quantity | pairs | mean difference ± s.e. | t-test p | sign-flip p |", "|---|---|---|---|---|---|"]
  for config in order:
    if config == baseline:
      continue
    for key, label in PAIRED:
      p = paired(runs, config, baseline, key)
      if p is None:
        continue
      se = f" ± {p['se']:.3f}" if p["se"] is not None else ""
      t_p = f"{p['t_p']:.3f}" if p["t_p"] is not None else "—"
      lines.append(f"| {config} | {label} | {p['n']} | {p['mean']:+.3f}{se} | {t_p} | {p['sign_flip_p']:.3f} |")
  lines += ["", "Mean ± standard error over seeds. Success: the share of the iteration's episodes that passed "
            f"(first iteration; mean of the last {LAST_ITERATIONS}). Lengths: the first iteration's percentiles "
            "(the SFT policy's episodes). Critic EV: explained variance of the returns, mean over iterations "
            "after the first. Advantages: mean over iterations of the mean advantage on the first three turns' "
            "action tokens of long successes (at least the batch's median turn count) and on every action "
            "token of short failures."]
  return "\n".join(lines) + "\n"


def plot(runs: dict[str, dict[str, Any]], path: pathlib.Path, title: str) -> None:
  import matplotlib  # pylint: disable=import-outside-toplevel
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel
  fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=120)
  for config in sorted(runs):
    curves = [np.asarray([np.nan if v is None else v for v in r["series"]["train/success_rate"]], np.float64)
              for r in runs[config].values()]
    length = min(len(c) for c in curves)
    stacked = np.stack([c[:length] for c in curves])
    mean = np.nanmean(stacked, axis=0)
    x = np.arange(1, length + 1)
    line, = ax.plot(x, mean, marker="o", markersize=3, label=f"{config} ({len(curves)} seeds)")
    if len(curves) > 1:
      se = np.nanstd(stacked, axis=0, ddof=1) / math.sqrt(len(curves))
      ax.fill_between(x, mean - se, mean + se, color=line.get_color(), alpha=0.2, linewidth=0)
  ax.set_xlabel("iteration")
  ax.set_ylabel("success rate of the iteration's episodes")
  ax.set_title(title)
  ax.set_ylim(0, 1)
  ax.grid(alpha=0.3)
  ax.legend(fontsize=8, loc="lower right")
  fig.tight_layout()
  path.parent.mkdir(parents=True, exist_ok=True)
  fig.savefig(path)
  plt.close(fig)


def merge_record(path: pathlib.Path, runs: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
  merged: dict[str, dict[str, Any]] = {}
  if path.is_file():
    merged = json.loads(path.read_text(encoding="utf-8"))["runs"]
  for config, seeds in runs.items():
    merged.setdefault(config, {}).update(seeds)
  path.parent.mkdir(parents=True, exist_ok=True)
  path.write_text(json.dumps({"runs": merged}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
  return merged


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("root", help="a run_ablations.py root (ROOT/<config>/seed<S>/) or a record file")
  parser.add_argument("--baseline", required=True, help="the config every other one is paired against")
  parser.add_argument("--record", default="", help="merge the runs' numbers into this JSON record, then "
                      "report on the whole record")
  parser.add_argument("--plot", default="", help="write the success-per-iteration plot (PNG) here")
  parser.add_argument("--title", default="success per iteration (mean ± s.e. over seeds)")
  parser.add_argument("--out", default="", help="also write the Markdown here")
  args = parser.parse_args(argv)
  try:
    runs = collect(pathlib.Path(args.root))
  except (OSError, ValueError, KeyError) as e:
    print(f"error: {e}", file=sys.stderr)
    return 2
  if args.record:
    runs = merge_record(pathlib.Path(args.record), runs)
  if not runs:
    print(f"error: no finished runs under {args.root}/<config>/seed<S>/", file=sys.stderr)
    return 2
  if args.baseline not in runs:
    print(f"error: baseline {args.baseline!r} has no finished run; configs: {', '.join(sorted(runs))}", file=sys.stderr)
    return 2
  markdown = to_markdown(runs, args.baseline)
  print(markdown, end="")
  if args.out:
    pathlib.Path(args.out).write_text(markdown, encoding="utf-8")
  if args.plot:
    plot(runs, pathlib.Path(args.plot), args.title)
    print(f"plot: {args.plot}")
  return 0


if __name__ == "__main__":
  raise SystemExit(main())
