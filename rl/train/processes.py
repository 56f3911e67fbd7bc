"""This process among a run's processes, and the device mesh its rows go to.

With several processes (multi-host) each process runs its own share of every iteration's tasks
and contributes its own rows to the global batch (docs/rollouts.md, "Several processes"):
`ProcessGroup` is every place where one process's episodes, rows, counts and seeds meet the
others'. With one process each method is the identity or a plain call, so a single-process run's
numbers do not depend on any of it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import jax.numpy as jnp
import numpy as np

from rl import parallel
from rl.algo.batch import RowExchange


@dataclasses.dataclass(frozen=True)
class ProcessGroup:
  count: int = 1  # processes in the run
  index: int = 0  # this process's
  mesh: Any = None  # the device mesh (None: one device, no shardings)
  rules: Any = None  # its logical sharding rules

  @property
  def multi(self) -> bool:
    return self.count > 1

  def seed(self, seed: int) -> int:
    """`seed` for this process's sampler: one stream per process (they sample different episodes)."""
    if not self.multi:
      return seed
    return int(np.random.SeedSequence([seed, self.index]).generate_state(1)[0] >> 1)

  def run_share(self, engine: Any, tasks: Sequence, group_size: int) -> tuple[list, dict]:
    """`engine.run` on this process's share of `tasks` (tasks p, p + P, ...: whole groups, so
    group-relative estimators see every episode of a task); group ids are the tasks' indices in
    `tasks`, as one process running all of them gives."""
    if not self.multi:
      return engine.run(tasks, group_size=group_size)
    return engine.run(parallel.process_share(tasks), group_size=group_size,
                      group_ids=parallel.process_share(range(len(tasks))))

  def share(self, items: Sequence) -> list:
    """This process's share of `items` (items p, p + P, ...)."""
    return parallel.process_share(items)

  def gather_episodes(self, episodes: Sequence) -> list[list]:
    """Every process's `episodes`, per process in process order, without what only the logs need
    (the steps' text, the prompt): what batch-wide metrics, estimators and the self-improvement
    buffer read. One process: `[episodes]` themselves."""
    if not self.multi:
      return [list(episodes)]
    light = [dataclasses.replace(e, record={k: v for k, v in e.record.items() if k not in ("steps", "prompt")},
                                 pending_judge=None) for e in episodes]
    return parallel.gather_objects(light)

  def all_episodes(self, episodes: Sequence) -> list:
    """Every process's `episodes`, in process order (one process: `episodes`)."""
    return [e for share in self.gather_episodes(episodes) for e in share]

  def global_rows(self, tree: Any) -> Any:
    """Host arrays of this process's rows ([B_local, ...], shapes agreed) -> every process's rows
    in process order ([P * B_local, ...]), the global batch's row order."""
    return parallel.concat_over_processes(tree) if self.multi else tree

  def local_rows(self, x: np.ndarray | None) -> np.ndarray | None:
    """This process's rows of a host array of the global batch's rows."""
    if not self.multi or x is None:
      return x
    per = x.shape[0] // self.count
    return x[self.index * per:(self.index + 1) * per]

  def agreed_length(self, t: int) -> int:
    """A padded length every process uses: the longest of theirs (one process: `t`)."""
    return parallel.max_over_processes({"t": t})["t"] if self.multi else t

  def total(self, values: dict) -> dict:
    """Host scalars summed over processes (one process: themselves)."""
    return parallel.sum_over_processes(values)

  def rows_sharding(self, ndim: int = 2) -> Any:
    return parallel.rows_sharding(self.mesh, self.rules, ndim)

  def to_devices(self, mb: dict) -> dict:
    """A mini-batch's host arrays on the devices: rows split over the mesh's batch axes. Every
    process holds the whole mini-batch (the SFT demonstrations: the same on every process)."""
    if self.mesh is None:
      return {k: jnp.asarray(v) for k, v in mb.items()}
    return {k: parallel.global_array(v, self.rows_sharding(np.ndim(v))) for k, v in mb.items()}

  def rows_to_devices(self, mb: dict) -> dict:
    """A mini-batch of rollout rows on the devices. Several processes: `mb` holds this process's
    rows, the global mini-batch every process's in process order (`parallel.rows_to_global`)."""
    if not self.multi:
      return self.to_devices(mb)
    return {k: parallel.rows_to_global(v, self.rows_sharding(np.ndim(v))) for k, v in mb.items()}

  def row_exchange(self, offset: int) -> RowExchange:
    """How make_train_batch's batch statistics see every process's rows (one process: itself);
    `offset`: this process's first trainable episode among every process's."""
    if not self.multi:
      return RowExchange()
    return RowExchange(gather=self.global_rows, local=self.local_rows, total=parallel.sum_over_processes,
                       row_offset=offset, process_index=self.index)
