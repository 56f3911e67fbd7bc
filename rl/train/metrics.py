"""An iteration's metrics and where they go.

The process-0 writer: JSONL always, TensorBoard and Weights & Biases when enabled. Every row of
`metrics.jsonl` is one iteration: `step`, `time_s` (seconds since the writer started,
cumulative across resumes) and "/"-named scalars. And the pure functions the trainer builds a
row from: the update steps' means, the train batch's advantage and mismatch statistics, and the
episodes' outcomes, lengths, anti-hack flags and durations.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

if TYPE_CHECKING:  # the writer stays importable without JAX (scripts/plot.py, traj_stats)
  from rl.algo.batch import TrainBatch


def _to_float(value) -> float | None:
  try:
    f = float(np.asarray(value))
  except (TypeError, ValueError):
    return None
  return f if math.isfinite(f) else None


class MetricWriter:
  """`write_scalars(step, {"train/reward_mean": ...})`: writes on process 0 only, and returns the
  row on every process (what the checkpoint of the iteration is kept by)."""

  def __init__(self, workdir: str | Path, *, tensorboard: bool = True, wandb: bool = False,
               config: dict | None = None, process_index: int = 0, time_offset_s: float = 0.0):
    self.workdir = Path(workdir)
    self.enabled = process_index == 0
    self._start = time.time() - time_offset_s
    self._tb = self._wandb = None
    if not self.enabled:
      return
    self.path = self.workdir / "metrics.jsonl"
    if tensorboard:
      try:
        from tensorboardX import SummaryWriter

        self._tb = SummaryWriter(str(self.workdir / "tensorboard"))
      except ImportError:
        self._tb = None
    if wandb:
      try:
        import wandb as wandb_lib

        self._wandb = wandb_lib.init(dir=str(self.workdir), config=config or {}, resume="allow")
      except ImportError:
        print("metrics: wandb requested but not installed; continuing with JSONL/TensorBoard")

  def elapsed_s(self) -> float:
    return time.time() - self._start

  def truncate_after(self, step: int) -> None:
    """Drops rows past `step` (a resumed run rewrites what the crashed one logged later), and
    a last row cut short by a killed process; the file is replaced atomically."""
    if not self.enabled or not self.path.exists():
      return
    text = self.path.read_text()
    lines = text.splitlines()
    if lines and not text.endswith("\n"):
      try:
        json.loads(lines[-1])
      except json.JSONDecodeError:
        lines.pop()  # the write a kill interrupted
    rows = [line for line in lines if line.strip() and json.loads(line)["step"] <= step]
    tmp = self.path.with_name(self.path.name + ".tmp")
    tmp.write_text("".join(r + "\n" for r in rows))
    os.replace(tmp, self.path)

  def write_scalars(self, step: int, scalars: Mapping[str, object]) -> dict:
    row = {"step": int(step), "time_s": round(self.elapsed_s(), 3)}
    for key, value in sorted(scalars.items()):
      f = _to_float(value)
      if f is not None:
        row[key] = f
    if not self.enabled:
      return row
    with self.path.open("a") as fh:
      fh.write(json.dumps(row) + "\n")
    if self._tb is not None:
      for key, value in row.items():
        if key != "step":
          self._tb.add_scalar(key, value, step)
      self._tb.flush()
    if self._wandb is not None:
      self._wandb.log(row, step=step)
    return row

  def close(self) -> None:
    if self._tb is not None:
      self._tb.close()
    if self._wandb is not None:
      self._wandb.finish()


def read_metrics(workdir: str | Path) -> list[dict]:
  path = Path(workdir) / "metrics.jsonl"
  if not path.exists():
    return []
  return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def mean_over_steps(step_metrics: Sequence[Mapping[str, float]]) -> dict[str, float]:
  """Each update step's metric, averaged over the steps that report it (keys of the first)."""
  return {key: float(np.mean([m[key] for m in step_metrics if key in m]))
          for key in (step_metrics[0] if step_metrics else {})}


def batch_metrics(train: TrainBatch, sampler_logprobs: np.ndarray, values: np.ndarray | None, *,
                  real: np.ndarray, gather: Callable[[Any], Any] = lambda x: x) -> dict[str, float]:
  """Advantage, return, train/infer mismatch and critic statistics over the action tokens of the
  rows that hold an episode (`real`); `gather` brings every process's rows (one process: itself).
  `sampler_logprobs` are the sampler's own, `values` the critic's (None without one)."""
  rows = {"mask": train.mask, "advantages": train.advantages, "returns": train.returns,
          "full_logprobs": train.full_logprobs, "sampler_logprobs": sampler_logprobs, "real": real}
  if values is not None:
    rows["values"] = values
  rows = gather(rows)
  real = rows["real"]
  m_bool = rows["mask"][real].astype(bool)
  none = np.zeros(1, np.float32)  # a batch without action tokens reports zeros
  adv_valid = rows["advantages"][real][m_bool] if m_bool.any() else none
  returns_valid = rows["returns"][real][m_bool] if m_bool.any() else none
  metrics: dict[str, float] = {}
  if m_bool.any():
    # Train/infer mismatch before any update: the sampler's log-probs against the scorer's
    # (the update's actor/sampler_logprob_abs_diff also contains the policy's own change).
    gap = np.abs(rows["full_logprobs"][real] - rows["sampler_logprobs"][real])[m_bool]
    metrics["mismatch/logprob_abs_diff"] = float(gap.mean())
    metrics["mismatch/logprob_abs_diff_max"] = float(gap.max())
  metrics.update({"adv/mean": float(adv_valid.mean()), "adv/std": float(adv_valid.std()),
                  "adv/min": float(adv_valid.min()), "returns/mean": float(returns_valid.mean())})
  if values is not None:
    from rl.algo.update import explained_variance  # pylint: disable=import-outside-toplevel
    metrics["critic/explained_variance"] = explained_variance(rows["values"][real], rows["returns"][real],
                                                              rows["mask"][real])
  return metrics


EARLY_TURNS = 3  # "early turns" of the length split: an episode's first three agent turns


def length_split_metrics(advantages: np.ndarray, action_mask: np.ndarray, turn_ids: np.ndarray,
                         success: np.ndarray, scores: np.ndarray, group_ids: np.ndarray, *,
                         real: np.ndarray, gather: Callable[[Any], Any] = lambda x: x) -> dict[str, float]:
  """How an estimator treats long successes against short failures, and how many groups carry no
  signal: the diagnostics the long-horizon comparison needs (docs/ablations.md).

  An episode is long when its turn count is at least the batch's median turn count, short
  otherwise. `adv_len/long_success_early` is the mean advantage on the action tokens of the first
  EARLY_TURNS turns of long successes (the credit a critic can give a long solve's early reads,
  which a group baseline shares with the short failures of the same task);
  `adv_len/short_failure` the mean over every action token of short failures.
  `groups/zero_variance_frac`: the share of groups (rows sharing a group id, two or more) whose
  episodes all scored the same; a group estimator gives those zero advantage. Arrays are this
  process's [B, T] / [B] rows; `real` marks rows that hold an episode; `gather` brings every
  process's rows, so `group_ids` must name the same group alike in every process."""
  rows = gather({"advantages": advantages, "mask": action_mask, "turn_ids": turn_ids, "success": success,
                 "scores": scores, "group_ids": group_ids, "real": real})
  real = np.asarray(rows["real"], bool)
  adv = np.asarray(rows["advantages"], np.float64)[real]
  mask = np.asarray(rows["mask"])[real] > 0
  turn_ids = np.asarray(rows["turn_ids"])[real]
  success = np.asarray(rows["success"], bool)[real]
  if not mask.any():
    return {}
  turns = np.where(mask, turn_ids, -1).max(axis=1) + 1
  long_rows = turns >= np.median(turns[turns > 0]) if (turns > 0).any() else np.zeros_like(success)
  out: dict[str, float] = {}

  def mean_adv(row_sel: np.ndarray, token_sel: np.ndarray, key: str) -> None:
    sel = mask & token_sel & row_sel[:, None]
    if sel.any():
      out[key] = float(adv[sel].mean())

  everywhere = np.ones_like(mask)
  early = turn_ids < EARLY_TURNS
  long_success, short_failure = long_rows & success, ~long_rows & ~success
  mean_adv(long_success, early, "adv_len/long_success_early")
  mean_adv(long_success, everywhere, "adv_len/long_success")
  mean_adv(short_failure, early, "adv_len/short_failure_early")
  mean_adv(short_failure, everywhere, "adv_len/short_failure")
  out["adv_len/long_success_frac"] = float(long_success.mean())
  out["adv_len/short_failure_frac"] = float(short_failure.mean())

  scores = np.asarray(rows["scores"], np.float64)[real]
  group_ids = np.asarray(rows["group_ids"])[real]
  groups = [scores[group_ids == g] for g in np.unique(group_ids)]
  groups = [g for g in groups if len(g) >= 2]
  if groups:
    out["groups/zero_variance_frac"] = float(np.mean([np.ptp(g) == 0 for g in groups]))
  return out


def episode_outcome_metrics(outcomes: Sequence[Any], episodes: Sequence[Any],
                            durations: np.ndarray) -> dict[str, float]:
  """Rewards and success over the policy's `outcomes` (infrastructure failures left out); token
  and turn lengths, anti-hack flags over the trainable `episodes`; their `durations` (seconds)."""
  lengths = [len(e.tokens) for e in episodes]
  turns = [len(e.turn_ends) for e in episodes]
  metrics = {
      "train/reward_mean": float(np.mean([e.final_reward for e in outcomes])),
      "train/reward_std": float(np.std([e.final_reward for e in outcomes])),
      "train/success_rate": float(np.mean([e.success for e in outcomes])),
      "train/pass_fraction": float(np.mean([pass_fraction(e) for e in outcomes])),
  }
  metrics.update(percentiles(lengths, "length/tokens"))
  metrics.update(percentiles(turns, "length/turns"))
  succ = [n for n, e in zip(lengths, episodes) if e.success]
  fail = [n for n, e in zip(lengths, episodes) if not e.success]
  if succ:
    metrics["length/tokens_success_mean"] = float(np.mean(succ))
  if fail:
    metrics["length/tokens_failure_mean"] = float(np.mean(fail))
  metrics.update(hack_metrics(episodes))
  metrics.update(percentiles(durations, "duration/seconds"))
  return metrics


def percentiles(values: Sequence[float], prefix: str) -> dict[str, float]:
  if not len(values):
    return {}
  p = np.percentile(np.asarray(values, np.float64), [10, 50, 90])
  out = {f"{prefix}_p10": p[0], f"{prefix}_p50": p[1], f"{prefix}_p90": p[2]}
  out[f"{prefix}_p90_over_p10"] = p[2] / max(p[0], 1.0)
  return out


def pass_fraction(episode) -> float:
  tests = episode.record.get("tests") or {}
  total = tests.get("total") or 0
  return float(tests.get("passed", 0)) / total if total else 0.0


def hack_metrics(episodes) -> dict[str, float]:
  out: dict[str, float] = {}
  n = max(len(episodes), 1)
  stages: dict[str, int] = {}
  rules: dict[str, int] = {}
  for e in episodes:
    hack = e.record.get("hack") or {}
    if hack.get("flagged"):
      stages[str(hack.get("stage"))] = stages.get(str(hack.get("stage")), 0) + 1
      for rule in hack.get("rules") or []:
        rules[rule] = rules.get(rule, 0) + 1
  for stage, count in stages.items():
    out[f"antihack/flag_rate_{stage}"] = count / n
  for rule, count in rules.items():
    out[f"antihack/rule/{rule}"] = count / n
  return out
