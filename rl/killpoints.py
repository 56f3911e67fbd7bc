"""A test hook: the process SIGKILLs itself at a named point of a training run.

Resume tests set `RLCODER_KILL_AT=<point>:<iteration>` (e.g. `update:2`) for a run in a
subprocess: when the run reaches that point in that iteration it dies with SIGKILL, as a
pre-empted host or the out-of-memory killer would end it (no exception, no `finally`, no
atexit, no flush). Running the same command again must resume to the metrics of an
uninterrupted run (tests/test_trainer.py). Unset, `reach` compares two values and returns.

`<iteration>` counts as the metrics rows and checkpoints do: n is the n-th RL iteration
(from 1); `checkpoint:0` is the checkpoint saved before the first iteration. The points:

  rollout     a training rollout logged its first trajectory record (other episodes still run)
  score       the scoring pass (log-probs, values) finished its first micro-batch
  update      the iteration's first PPO mini-batch update ran
  metrics     the iteration's metrics row is written, its checkpoint is not
  checkpoint  orbax wrote the checkpoint into its temporary step directory and is about to
              commit it (the rename to the step's name): a partial checkpoint stays on disk
"""

from __future__ import annotations

import functools
import os
import signal

ENV_VAR = "RLCODER_KILL_AT"
POINTS = ("rollout", "score", "update", "metrics", "checkpoint")


@functools.cache
def armed() -> tuple[str, int] | None:
  """(point, iteration) from RLCODER_KILL_AT, read once per process; None when unset or empty."""
  value = os.environ.get(ENV_VAR, "")
  if not value:
    return None
  point, _, iteration = value.partition(":")
  if point not in POINTS or not iteration.isdigit():
    raise ValueError(f"{ENV_VAR}={value!r}: expected <point>:<iteration>, a point of {list(POINTS)}")
  return point, int(iteration)


def reach(point: str, iteration: int) -> None:
  """Kills this process with SIGKILL when RLCODER_KILL_AT names `point` in `iteration`."""
  if point not in POINTS:  # a call site's typo would otherwise never fire
    raise ValueError(f"unknown kill point {point!r}; known: {list(POINTS)}")
  if armed() == (point, int(iteration)):
    os.kill(os.getpid(), signal.SIGKILL)
