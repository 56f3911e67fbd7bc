"""Task source `mle` (rl.registry.TASK_SOURCES): the MLE competitions, generated on first use."""

from __future__ import annotations

import os
import pathlib
from typing import Any

from rl import registry
from rl.tasks.mle.build import make_mle_tasks, task_id_for, task_plan
from rl.tasks.mle.competitions import COMPETITIONS


@registry.TASK_SOURCES.register("mle")
def mle_task_source(config: Any, workdir: str | os.PathLike, arg: str | None = None) -> list:
  """Task source `mle`: the four competitions, generated on first use (no leaderboard run).

  Reads config.tasks.mle_root ("" = <workdir>/tasks/mle), mle_variants (training data variants
  per competition), mle_heldout_variants (held-out ones, split "heldout") and synthetic_seed; a
  root that lacks a planned task is generated again. `arg` ("mle:tabular-churn,insult-detection"
  in config.tasks.sources) keeps only those competitions. `scripts/make_mle_tasks.py` generates the same tasks with their leaderboards.
  """
  from rl.tasks import load_task_root  # pylint: disable=import-outside-toplevel

  tasks_cfg = config.tasks if hasattr(config, "tasks") else config
  root = pathlib.Path(tasks_cfg.mle_root or pathlib.Path(workdir) / "tasks" / "mle")
  variants = int(tasks_cfg.mle_variants)
  heldout = int(getattr(tasks_cfg, "mle_heldout_variants", 0))
  planned = {task_id_for(c, v) for c, v, _ in task_plan(variants=variants, heldout_variants=heldout)}
  if not (root / "manifest.jsonl").is_file() or not all((root / t / "metadata.json").is_file() for t in planned):
    make_mle_tasks(root, seed=int(tasks_cfg.synthetic_seed), variants=variants, heldout_variants=heldout,
                   run_references=False)
  tasks = load_task_root(root)
  if arg:
    wanted = {a.strip() for a in str(arg).split(",") if a.strip()}
    unknown = sorted(wanted - set(COMPETITIONS))
    if unknown:
      raise ValueError(f"task source mle: unknown competition(s) {unknown}; known: {', '.join(COMPETITIONS)}")
    tasks = [t for t in tasks if t.metadata.get("competition") in wanted]
  return tasks
