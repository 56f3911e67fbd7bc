"""PNG plots of a run directory: reward/success curves, trajectory lengths, anti-hack flag rate.

The trainer writes them into `<workdir>/plots/` at the end of a run (`trainer.plots`);
`scripts/plot.py WORKDIR` redraws them from any run directory, finished or not.
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; never a display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from rl.env.trajectory import read_trajectories  # noqa: E402
from rl.train.metrics import read_metrics  # noqa: E402


def _series(rows, key):
  pts = [(r["step"], r[key]) for r in rows if key in r]
  return (np.array([p[0] for p in pts]), np.array([p[1] for p in pts])) if pts else (None, None)


def _smooth(y, k=5):
  if y is None or len(y) < k:
    return y
  return np.convolve(np.pad(y, (k // 2, k - 1 - k // 2), mode="edge"), np.ones(k) / k, mode="valid")


def _legend(ax):
  if ax.get_legend_handles_labels()[0]:  # an empty legend() warns
    ax.legend()


def _paired_points(ax, summary, prefix, label, last):
  """The before/after-RL measurement on the same tasks (summary.json), with standard errors."""
  start, end = summary.get(f"{prefix}_start"), summary.get(f"{prefix}_end")
  if start is None or end is None:
    return
  errs = [summary.get(f"{prefix}_start_stderr") or 0.0, summary.get(f"{prefix}_end_stderr") or 0.0]
  ax.errorbar([0, last], [start, end], yerr=errs, fmt="s", color="black", capsize=3, label=label)


def plot_run(workdir: str | Path) -> list[Path]:
  """Writes reward_success.png, lengths.png and cheat_rate.png under <workdir>/plots; their paths."""
  workdir = Path(workdir)
  rows = read_metrics(workdir)
  if not rows:
    raise FileNotFoundError(f"plot: {workdir}/metrics.jsonl is missing or empty")
  out_dir = workdir / "plots"
  out_dir.mkdir(exist_ok=True)
  written = []
  summary = {}
  if (workdir / "summary.json").exists():
    summary = json.loads((workdir / "summary.json").read_text())

  last = max(r.get("step", 0) for r in rows)
  fig, axes = plt.subplots(1, 2, figsize=(11, 4))
  for key, label in (("train/reward_mean", "reward (mean)"), ("train/success_rate", "success rate"),
                     ("train/pass_fraction", "hidden tests passed (fraction)")):
    x, y = _series(rows, key)
    if x is not None:
      axes[0].plot(x, y, alpha=0.3)
      axes[0].plot(x, _smooth(y), label=label)
  _paired_points(axes[0], summary, "train_pass@1", "train pass@1, same tasks", last=last)
  axes[0].set_xlabel("iteration")
  axes[0].set_title("training tasks")
  _legend(axes[0])
  x, y = _series(rows, "eval/pass@1")
  if x is not None:
    axes[1].plot(x, y, marker="o", label="held-out pass@1 (RL)")
  if summary.get("heldout_pass@1_sft") is not None:
    axes[1].axhline(summary["heldout_pass@1_sft"], color="gray", linestyle="--", label="after SFT only")
  if summary.get("heldout_pass@1_final") is not None and x is None:
    axes[1].plot([last], [summary["heldout_pass@1_final"]], "o", color="black",
                 label="after RL (final)")
    axes[1].set_xlim(0, last + 1)
  axes[1].set_ylim(-0.05, 1.05)
  axes[1].set_xlabel("iteration")
  axes[1].set_title("held-out evaluation")
  _legend(axes[1])
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
  _legend(axes[0])
  trajectories = workdir / "trajectories"
  lengths = ([len(r.get("steps", [])) for r in read_trajectories(trajectories, validate=False)]
             if trajectories.is_dir() else [])
  if lengths:
    axes[1].hist(lengths, bins=range(0, max(lengths) + 2), color="tab:purple")
  axes[1].set_title("trajectory length (agent steps), all iterations")
  fig.tight_layout()
  path = out_dir / "lengths.png"
  fig.savefig(path, dpi=110)
  plt.close(fig)
  written.append(path)

  fig, ax = plt.subplots(figsize=(6, 4))
  stage_keys = sorted({k for r in rows for k in r if k.startswith("antihack/flag_rate")})
  for key in stage_keys:  # antihack/flag_rate, then one per stage (_rules, _judge)
    x, y = _series(rows, key)
    label = "flagged episodes" if key == "antihack/flag_rate" else key.rsplit("_", 1)[-1]
    ax.plot(x, y, label=label, marker="." if len(x) < 30 else None)
  _legend(ax)
  ax.set_title("anti-hack flag rate")
  ax.set_xlabel("iteration")
  ax.set_ylim(bottom=0)
  fig.tight_layout()
  path = out_dir / "cheat_rate.png"
  fig.savefig(path, dpi=110)
  plt.close(fig)
  written.append(path)
  return written
