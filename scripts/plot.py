r"""Writes PNG plots of a run directory: reward/success curves, lengths, cheat rate.

  .venv/bin/python scripts/plot.py runs/default            # -> runs/default/plots/*.png
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from rl.metrics import read_metrics  # noqa: E402


def _series(rows, key):
  pts = [(r["step"], r[key]) for r in rows if key in r]
  return (np.array([p[0] for p in pts]), np.array([p[1] for p in pts])) if pts else (None, None)


def _smooth(y, k=5):
  if y is None or len(y) < k:
    return y
  return np.convolve(np.pad(y, (k // 2, k - 1 - k // 2), mode="edge"), np.ones(k) / k, mode="valid")


def plot_run(workdir: Path) -> list[Path]:
  rows = read_metrics(workdir)
  if not rows:
    raise SystemExit(f"plot: {workdir}/metrics.jsonl is missing or empty")
  out_dir = workdir / "plots"
  out_dir.mkdir(exist_ok=True)
  written = []
  summary = {}
  if (workdir / "summary.json").exists():
    summary = json.loads((workdir / "summary.json").read_text())

  fig, axes = plt.subplots(1, 2, figsize=(11, 4))
  for key, label in (("train/reward_mean", "reward (mean)"), ("train/success_rate", "success rate"),
                     ("train/pass_fraction", "hidden tests passed (fraction)")):
    x, y = _series(rows, key)
    if x is not None:
      axes[0].plot(x, y, alpha=0.3)
      axes[0].plot(x, _smooth(y), label=label)
  axes[0].set_xlabel("iteration")
  axes[0].set_title("training tasks")
  axes[0].legend()
  x, y = _series(rows, "eval/pass@1")
  if x is not None:
    axes[1].plot(x, y, marker="o", label="held-out pass@1 (RL)")
  if summary.get("heldout_pass@1_sft") is not None:
    axes[1].axhline(summary["heldout_pass@1_sft"], color="gray", linestyle="--", label="after SFT only")
  axes[1].set_xlabel("iteration")
  axes[1].set_title("held-out evaluation")
  axes[1].legend()
  fig.tight_layout()
  path = out_dir / "reward_success.png"
  fig.savefig(path, dpi=110)
  plt.close(fig)
  written.append(path)

  fig, axes = plt.subplots(1, 2, figsize=(11, 4))
  for key in ("length/tokens_p10", "length/tokens_p50", "length/tokens_p90"):
    x, y = _series(rows, key)
    if x is not None:
      axes[0].plot(x, y, label=key.split("_")[-1])
  axes[0].set_title("trajectory length (tokens)")
  axes[0].set_xlabel("iteration")
  axes[0].legend()
  trajectories = sorted((workdir / "trajectories").glob("*.jsonl*"))
  lengths = []
  for path in trajectories:
    if path.suffix == ".jsonl":
      for line in path.read_text().splitlines():
        if line.strip():
          lengths.append(len(json.loads(line).get("steps", [])))
  if lengths:
    axes[1].hist(lengths, bins=range(0, max(lengths) + 2), color="tab:purple")
  axes[1].set_title("trajectory length (agent steps), all iterations")
  fig.tight_layout()
  path = out_dir / "lengths.png"
  fig.savefig(path, dpi=110)
  plt.close(fig)
  written.append(path)

  fig, ax = plt.subplots(figsize=(6, 4))
  x, y = _series(rows, "antihack/flag_rate")
  if x is not None:
    ax.plot(x, y, label="flagged episodes")
  ax.set_title("anti-hack flag rate")
  ax.set_xlabel("iteration")
  ax.set_ylim(bottom=0)
  fig.tight_layout()
  path = out_dir / "cheat_rate.png"
  fig.savefig(path, dpi=110)
  plt.close(fig)
  written.append(path)
  return written


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("workdir", type=Path)
  args = parser.parse_args()
  for path in plot_run(args.workdir):
    print(path)


if __name__ == "__main__":
  main()
