"""Task sources of the long-horizon family: `synthetic_long` (training root) and
`synthetic_long_heldout` (an evaluation root of held-out chains), both read `config.tasks.long`.

`config.tasks.long` (configs/experiments/long_horizon.py sets it) has: num_tasks,
eval_num_tasks, seed, min_depth, max_depth, heldout_fraction, max_distractors, stable_runs and
naming ("numbered" or "words"), the weights of the variants (`variants`, e.g. "single=0.7,two_lines=0.15,two_places=0.15") and
statement styles (`styles`, "entry=0.5,tests=0.5"). A root is cached under
<workdir>/tasks/<source name> (`name:PATH` overrides) and regenerated only when these change.
"""

from __future__ import annotations

import os
import pathlib
from typing import Any

from rl.registry import TASK_SOURCES
from rl.tasks.format import Task
from rl.tasks.long_horizon.generator import LongSettings, cached_or_generate_long
from rl.tasks.sources import TaskProgress, sandbox_config_from

_FIELDS = ("num_tasks", "eval_num_tasks", "seed", "min_depth", "max_depth", "heldout_fraction",
           "max_distractors", "stable_runs", "variants", "styles", "naming")


def parse_weights(text: str, field: str) -> tuple[tuple[str, float], ...]:
  """"a=0.7,b=0.3" -> (("a", 0.7), ("b", 0.3)); a clear error naming `field` otherwise."""
  out = []
  for item in str(text).split(","):
    name, sep, value = item.partition("=")
    try:
      weight = float(value) if sep else -1.0
    except ValueError:
      weight = -1.0
    if not name.strip() or weight < 0:
      raise ValueError(f"config.tasks.long.{field}={text!r}: expected name=weight pairs such as 'single=0.7,two_lines=0.3'")
    out.append((name.strip(), weight))
  return tuple(out)


def long_settings(config: Any, *, split: str = "", eval_root: bool = False) -> LongSettings:
  """The LongSettings of config.tasks.long (`eval_root`: eval_num_tasks held-out tasks)."""
  tasks = config.tasks if hasattr(config, "tasks") else config
  section = tasks.get("long") if hasattr(tasks, "get") else getattr(tasks, "long", None)
  if section is None:
    raise ValueError("the synthetic_long task sources need config.tasks.long (see configs/experiments/long_horizon.py)")
  missing = [f for f in _FIELDS if f not in section]
  if missing:
    raise ValueError(f"config.tasks.long lacks field(s) {', '.join(missing)} (see configs/experiments/long_horizon.py)")
  return LongSettings(
      num_tasks=int(section["eval_num_tasks"] if eval_root else section["num_tasks"]), seed=int(section["seed"]),
      min_depth=int(section["min_depth"]), max_depth=int(section["max_depth"]),
      heldout_fraction=float(section["heldout_fraction"]), max_distractors=int(section["max_distractors"]),
      stable_runs=int(section["stable_runs"]), split=split, naming=str(section["naming"]),
      variant_weights=parse_weights(section["variants"], "variants"),
      style_weights=parse_weights(section["styles"], "styles"))


def _generate(config: Any, root: pathlib.Path, settings: LongSettings, progress: TaskProgress | None) -> list[Task]:
  grader = str(config.tasks.verify_with)
  workers = min(int(config.sandbox.max_concurrency), os.cpu_count() or 2)
  return cached_or_generate_long(root, settings, grader=grader, workers=workers, progress=progress,
                                 sandbox_config=sandbox_config_from(config) if grader == "sandbox" else None)


@TASK_SOURCES.register("synthetic_long")
def synthetic_long_source(config: Any, workdir: str | os.PathLike, arg: str | None = None, *,
                          progress: TaskProgress | None = None) -> list[Task]:
  """config.tasks.long.num_tasks long-horizon tasks of both splits (by function and names), in
  <workdir>/tasks/synthetic_long or `arg`."""
  root = pathlib.Path(arg or pathlib.Path(workdir) / "tasks" / "synthetic_long")
  return _generate(config, root, long_settings(config), progress)


@TASK_SOURCES.register("synthetic_long_heldout")
def synthetic_long_heldout_source(config: Any, workdir: str | os.PathLike, arg: str | None = None, *,
                                  progress: TaskProgress | None = None) -> list[Task]:
  """config.tasks.long.eval_num_tasks held-out long-horizon tasks (held-out functions and names
  only), in <workdir>/tasks/synthetic_long_heldout or `arg`: for config.tasks.eval_sources."""
  root = pathlib.Path(arg or pathlib.Path(workdir) / "tasks" / "synthetic_long_heldout")
  return _generate(config, root, long_settings(config, split="heldout", eval_root=True), progress)
