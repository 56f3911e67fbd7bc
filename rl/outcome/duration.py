"""Execution times for duration-aware gradients (the weights themselves are in rl.algo.losses).

A trajectory's duration is the wall time of its final program run, raised to a floor
(so `1/log(1+dt)` stays finite and a trivial run does not get an outsized weight) and
replaced by a fixed charge when the output is invalid (a crash after 0.1 s and a
timeout after 600 s earn the same weight: neither produced a result).

    dt = trajectory_durations(episodes, floor_s=cfg.algo.duration_floor_s,
                              invalid_s=cfg.algo.duration_invalid_s)
    weights = rl.algo.losses.duration_weights(dt, cfg.algo.duration_weight)
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

import numpy as np


def execution_time(exec_time_s: float | None, valid: bool, *, floor_s: float = 1.0,
                   invalid_s: float = 1.0) -> float:
  """One trajectory's duration in seconds: max(exec_time, floor), or `invalid_s` when invalid."""
  if not floor_s > 0:
    raise ValueError(f"duration floor_s must be > 0 seconds, got {floor_s}")
  if not invalid_s > 0:
    raise ValueError(f"duration invalid_s must be > 0 seconds, got {invalid_s}")
  if not valid or exec_time_s is None:
    return float(invalid_s)
  t = float(exec_time_s)
  if math.isnan(t) or t < 0:
    raise ValueError(f"exec_time_s must be a non-negative number of seconds, got {exec_time_s}")
  return max(t, float(floor_s))


def durations(exec_times_s: Sequence[float | None], valid: Sequence[bool] | np.ndarray, *,
              floor_s: float = 1.0, invalid_s: float = 1.0) -> np.ndarray:
  """[B] durations from per-trajectory execution times and validity flags (numpy or jax arrays)."""
  times = list(exec_times_s)
  flags = np.asarray(valid).reshape(-1)
  if len(times) != len(flags):
    raise ValueError(f"durations: {len(times)} execution times but {len(flags)} validity flags")
  return np.array([execution_time(None if t is None else float(t), bool(v), floor_s=floor_s,
                                  invalid_s=invalid_s) for t, v in zip(times, flags)], dtype=np.float64)


def episode_is_valid(episode: Any) -> bool:
  """Whether an episode produced a valid output: its record's submission flag when there is one
  (MLE tasks), else `success` or a finished (non-error, non-timeout) termination."""
  record = getattr(episode, "record", None) or {}
  for key in ("submission_valid", "valid"):
    if key in record:
      return bool(record[key])
  mle = record.get("mle") if isinstance(record, dict) else None
  if isinstance(mle, dict) and "grade" in mle:
    return bool(mle["grade"].get("valid"))
  if getattr(episode, "success", False):
    return True
  return getattr(episode, "terminated", "error") not in ("error", "timeout")


def final_run_time(episode: Any) -> float | None:
  """Seconds of the episode's final program run: the graded run of an MLE task when its record
  carries one (`record["mle"]["exec_time_s"]`, rl.tasks.mle.runner), else `exec_time_s`."""
  record = getattr(episode, "record", None) or {}
  mle = record.get("mle") if isinstance(record, dict) else None
  if isinstance(mle, dict) and mle.get("exec_time_s") is not None:
    return float(mle["exec_time_s"])
  value = getattr(episode, "exec_time_s", None)
  return None if value is None else float(value)


def trajectory_durations(episodes: Iterable[Any], *, floor_s: float = 1.0, invalid_s: float = 1.0) -> np.ndarray:
  """[B] durations of rl.env.episode.Episode objects (final program run time and validity)."""
  episodes = list(episodes)
  return durations([final_run_time(e) for e in episodes], [episode_is_valid(e) for e in episodes],
                   floor_s=floor_s, invalid_s=invalid_s)


def length_stats(values: Sequence[float] | np.ndarray) -> dict[str, float]:
  """P10/P50/P90 and the P90/P10 ratio of trajectory lengths or durations (the spread that
  motivates per-token critics over group-relative advantages)."""
  x = np.asarray(values, dtype=np.float64).reshape(-1)
  if x.size == 0:
    raise ValueError("length_stats needs at least one value")
  p10, p50, p90 = np.percentile(x, [10, 50, 90])
  return {"p10": float(p10), "p50": float(p50), "p90": float(p90),
          "p90_p10_ratio": float(p90 / p10) if p10 > 0 else float("inf"), "mean": float(x.mean())}
