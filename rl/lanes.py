"""Lanes: a batch's rows split into contiguous blocks that run as separate programs, one thread each.

XLA's CPU runtime runs the many small ops of a decode step, or of a small model's update, one
after another, and one program then keeps about one core busy. Two programs started from two
threads run on two cores at once. The sampler (rl.env.sampling) decodes each lane of rows with a
KV cache of its own; the update (rl.algo.update.LaneUpdate) computes the policy's and the
critic's gradients, and lanes of their rows, in programs of their own and sums them. Results do
not depend on the lane count beyond float summation order: rows are independent in decoding, and
the update's gradients are sums over rows.

On accelerators one device already runs a step's ops in parallel, and on a mesh the rows are
split over devices, so lanes are for a single CPU device only (`auto_lanes`).
"""

from __future__ import annotations

import concurrent.futures
import os
from typing import Any, Callable, Sequence, TypeVar

import jax

T = TypeVar("T")

# At most this many lanes whatever the core count: past it a lane's rows get too few to fill
# a core's vector units.
MAX_LANES = 8


def cpu_cores() -> int:
  """CPU cores this process may run on."""
  try:
    return len(os.sched_getaffinity(0))
  except AttributeError:  # not Linux
    return os.cpu_count() or 1


def auto_lanes(mesh: Any = None) -> int:
  """The lane count `0` ("auto") stands for: one per CPU core (at most MAX_LANES) on a CPU
  backend without a mesh, else 1."""
  if mesh is not None or jax.default_backend() != "cpu":
    return 1
  return max(1, min(cpu_cores(), MAX_LANES))


def lane_bounds(rows: int, lanes: int, unit: int = 1) -> tuple[int, ...]:
  """Start rows of at most `lanes` contiguous blocks of near-equal size, and the end row. Every
  block but the last holds a multiple of `unit` rows (a micro-batch); there are never more
  blocks than units, so a block is never empty."""
  units = -(-rows // unit)
  lanes = max(1, min(int(lanes), units))
  return tuple(min(rows, round(i * units / lanes) * unit) for i in range(lanes + 1))


def even_lanes(units: int, lanes: int) -> int:
  """The most lanes, at most `lanes`, that split `units` (micro-batches) evenly: lanes of one size
  run one compiled program."""
  lanes = max(1, min(int(lanes), units))
  while units % lanes:
    lanes -= 1
  return lanes


class LanePool:
  """Runs one call per lane (or per item), in threads of its own when there are several."""

  def __init__(self, name: str):
    self.name = name
    self._pool: concurrent.futures.ThreadPoolExecutor | None = None
    self._workers = 0

  def map(self, fn: Callable[[int], T], items: Sequence[int], workers: int = 0) -> list[T]:
    """[fn(item) for item in items], at most `workers` at once (0: all of them); an exception
    in any call is raised here, after the others have ended."""
    workers = min(len(items), workers or len(items))
    if workers <= 1:
      return [fn(item) for item in items]
    # As many workers as items: any pool at least that large will do. Fewer: the pool's size is
    # the bound.
    if self._workers < workers or (workers < len(items) and self._workers != workers):
      if self._pool is not None:
        self._pool.shutdown(wait=False)
      self._pool = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix=self.name)
      self._workers = workers
    futures = [self._pool.submit(fn, item) for item in items]
    concurrent.futures.wait(futures)
    return [f.result() for f in futures]
