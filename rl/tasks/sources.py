"""Task sources (registry entries chosen by config) and weighted mixing of several sources.

A source is `source(config, workdir, arg=None) -> list[Task]` returning tasks of every split;
callers pick a split through `task.split` or `TaskMixture`. In `config.tasks.sources` an
entry "name:arg" passes `arg` (e.g. ("dir:/data/quixbugs_tasks", 0.3)). A source that takes
minutes (generation and verification) may also accept `progress=` (a `TaskProgress`).
"""

from __future__ import annotations

import inspect
import os
import pathlib
import random
from typing import Any, Callable, Sequence

from rl.registry import TASK_SOURCES
from rl.tasks.format import Task, TaskError, load_task_root

# How a long task source reports: (tasks done, tasks wanted, a one-line note or ""). The trainer
# passes a progress phase's `update`; nothing under rl/tasks draws anything itself.
TaskProgress = Callable[[int, int, str], None]


def _tasks_config(config: Any) -> Any:
  return config.tasks if hasattr(config, "tasks") else config


def sandbox_config_from(config: Any) -> Any:
  """A sandbox.SandboxConfig from `config.sandbox` (fields SandboxConfig does not know are ignored)."""
  from sandbox import FaultInjection, SandboxConfig  # pylint: disable=import-outside-toplevel
  # Verifying tasks is preparation, not an episode: injected faults would only drop tasks.
  return SandboxConfig.from_mapping(config.sandbox).replace(fault_injection=FaultInjection())


@TASK_SOURCES.register("synthetic")
def synthetic_source(config: Any, workdir: str | os.PathLike, arg: str | None = None, *,
                     progress: TaskProgress | None = None) -> list[Task]:
  """Generated bug-fix tasks, cached under config.tasks.root (default <workdir>/tasks/synthetic).

  Regenerates only when the seed, count, renames, tier weights or library changed. Verification uses the
  sandbox; config.tasks.verify_with = "subprocess" runs it without isolation.
  """
  from rl.tasks.synthetic.generator import parse_tier_weights  # pylint: disable=import-outside-toplevel
  t = _tasks_config(config)
  root = pathlib.Path(arg or t.root or pathlib.Path(workdir) / "tasks" / "synthetic")
  try:
    tier_weights = parse_tier_weights(str(t.synthetic_tiers))
  except ValueError as e:
    raise ValueError(f"config.tasks.synthetic_tiers: {e}") from None
  return _generate_synthetic(config, root, int(t.num_synthetic), tier_weights, progress=progress)


@TASK_SOURCES.register("synthetic_heldout")
def synthetic_heldout_source(config: Any, workdir: str | os.PathLike, arg: str | None = None, *,
                             progress: TaskProgress | None = None) -> list[Task]:
  """A held-out evaluation root: config.tasks.eval_num_synthetic tasks of the synthetic generator
  (same seed, library and renames as the `synthetic` source) planted only in held-out functions,
  in <workdir>/tasks/synthetic_heldout (or arg); only config.tasks.difficulty's tier when that
  is set. For config.tasks.eval_sources: the training root's own held-out share is a fifth of
  it, too few tasks to measure pass@1 on.
  """
  from rl.tasks.synthetic.generator import parse_tier_weights  # pylint: disable=import-outside-toplevel
  t = _tasks_config(config)
  num = int(t.eval_num_synthetic)
  if num <= 0:
    raise ValueError("the synthetic_heldout task source needs config.tasks.eval_num_synthetic > 0")
  root = pathlib.Path(arg or pathlib.Path(workdir) / "tasks" / "synthetic_heldout")
  difficulty = str(t.difficulty)
  # Only the evaluated tier when config.tasks.difficulty names one (the rest would go unused).
  tier_weights = {difficulty: 1.0} if difficulty else parse_tier_weights(str(t.synthetic_tiers))
  return _generate_synthetic(config, root, num, tier_weights, split="heldout", progress=progress)


def _generate_synthetic(config: Any, root: pathlib.Path, num: int, tier_weights: dict | None,
                        split: str = "", progress: TaskProgress | None = None) -> list[Task]:
  """`cached_or_generate` with the seed, renames, library, grader and workers of the config."""
  from rl.tasks.synthetic.generator import LIBRARIES, cached_or_generate  # pylint: disable=import-outside-toplevel
  t = _tasks_config(config)
  library = str(t.synthetic_library)
  if library not in LIBRARIES:
    raise ValueError(f"config.tasks.synthetic_library: unknown library {library!r}; known: {', '.join(LIBRARIES)}")
  grader = t.verify_with
  workers = min(int(config.sandbox.max_concurrency), os.cpu_count() or 2)
  return cached_or_generate(root, num_tasks=num, seed=int(t.synthetic_seed), grader=grader,
                            sandbox_config=sandbox_config_from(config) if grader == "sandbox" else None,
                            renames=int(t.synthetic_renames), tier_weights=tier_weights,
                            library=library, split=split, workers=workers, progress=progress)


@TASK_SOURCES.register("dir")
def dir_source(config: Any, workdir: str | os.PathLike, arg: str | None = None) -> list[Task]:
  """Every task under a root directory (arg, else config.tasks.root)."""
  del workdir
  t = _tasks_config(config)
  root = arg or t.root
  if not root:
    raise TaskError("task source 'dir' needs a root: set config.tasks.root or use 'dir:/path/to/root'")
  return load_task_root(root)


def _rng(seed_or_rng: Any) -> random.Random:
  if isinstance(seed_or_rng, random.Random):
    return seed_or_rng
  if hasattr(seed_or_rng, "integers"):  # numpy Generator
    return random.Random(int(seed_or_rng.integers(0, 2**31 - 1)))
  return random.Random(seed_or_rng)


class TaskMixture:
  """Tasks from several weighted sources; sampling picks a source by weight, then a task."""

  def __init__(self, sources: Sequence[tuple[str, float, Sequence[Task]]]):
    if not sources:
      raise ValueError("a task mixture needs at least one source")
    for name, weight, _ in sources:
      if not weight > 0:
        raise ValueError(f"task source {name!r}: weight must be positive, got {weight}")
    self.sources = [(name, float(weight), list(tasks)) for name, weight, tasks in sources]

  def tasks(self, split: str | None = None, difficulty: str | None = None) -> list[Task]:
    seen, out = set(), []
    for _, _, tasks in self.sources:
      for t in tasks:
        if (split is None or t.split == split) and (difficulty is None or t.difficulty == difficulty):
          if t.id not in seen:
            seen.add(t.id)
            out.append(t)
    return out

  def sample(self, n: int, rng: Any = 0, split: str | None = None, difficulty: str | None = None) -> list[Task]:
    """`n` tasks drawn with replacement: source by weight, then uniformly within it."""
    rng = _rng(rng)
    pools = self._pools(split, difficulty)
    weights = [w for _, w, _ in pools]
    out = []
    for _ in range(n):
      _, _, pool = rng.choices(pools, weights=weights)[0]
      out.append(pool[rng.randrange(len(pool))])
    return out

  def epoch_batch(self, n: int, index: int, seed: int = 0, split: str | None = None,
                  difficulty: str | None = None) -> list[Task]:
    """Batch `index` of an epoch-style stream: each source is walked through a fresh shuffle of
    its tasks, pass after pass, so within a pass every task appears once (sampling without
    replacement); a batch's slots pick their source by weight. Deterministic in (seed, index):
    a resumed run draws the same batches, and batch i does not depend on who asked for i-1."""
    pools = [(w, pool) for _, w, pool in self._pools(split, difficulty)]
    weights = [w for w, _ in pools]
    slot_rng = random.Random(f"{seed}:slots")

    def slots() -> list[int]:  # each slot's source
      return slot_rng.choices(range(len(pools)), weights=weights, k=n) if len(pools) > 1 else [0] * n

    drawn = [0] * len(pools)  # tasks taken from each source before this batch
    for _ in range(index):
      for p in slots():
        drawn[p] += 1
    out = []
    picks = slots()
    for p in picks:
      pool = pools[p][1]
      epoch, pos = divmod(drawn[p], len(pool))
      order = list(range(len(pool)))
      random.Random(f"{seed}:{p}:{epoch}").shuffle(order)
      out.append(pool[order[pos]])
      drawn[p] += 1
    return out

  def _pools(self, split: str | None, difficulty: str | None) -> list[tuple[str, float, list[Task]]]:
    pools = []
    for name, weight, tasks in self.sources:
      pool = [t for t in tasks if (split is None or t.split == split)
              and (difficulty is None or t.difficulty == difficulty)]
      if pool:
        pools.append((name, weight, pool))
    if not pools:
      raise TaskError(f"no tasks for split={split!r} difficulty={difficulty!r} in sources "
                      f"{[s[0] for s in self.sources]}")
    return pools

  def __len__(self) -> int:
    return len(self.tasks())

  def __repr__(self) -> str:
    return "TaskMixture(" + ", ".join(f"{n}:{w:g}x{len(t)}" for n, w, t in self.sources) + ")"


def load_tasks(config: Any, workdir: str | os.PathLike, field: str = "sources", *,
               progress: TaskProgress | None = None) -> TaskMixture:
  """The mixture named by config.tasks.sources, e.g. (("synthetic", 0.7), ("dir:/data/qb", 0.3)),
  or by another field of config.tasks in the same format (`field`, e.g. "eval_sources").
  `progress` goes to the sources that accept it (those that generate tasks)."""
  t = _tasks_config(config)
  loaded = []
  for entry in getattr(t, field):
    if isinstance(entry, str):
      name, weight = entry, 1.0
    else:
      name, weight = entry
    base, _, arg = str(name).partition(":")
    source = TASK_SOURCES.get(base)
    kwargs: dict[str, Any] = {"arg": arg} if arg else {}
    if progress is not None and "progress" in inspect.signature(source).parameters:
      kwargs["progress"] = progress
    tasks = source(config, workdir, **kwargs)
    loaded.append((name, weight, tasks))
  return TaskMixture(loaded)
