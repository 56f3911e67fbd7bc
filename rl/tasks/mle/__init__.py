"""MLE-style tasks: offline Kaggle-like competitions, their grader and reference leaderboards.

Tasks use the ARCHITECTURE.md directory format with grader `mle`; the agent writes a
program that produces a submission CSV, graded against private answers kept
outside the workspace. `rl.tasks.mle.runner` runs and grades an agent's program.
"""

from rl.tasks.mle.build import leaderboard_position, make_mle_tasks, run_reference, write_task
from rl.tasks.mle.competitions import COMPETITIONS
from rl.tasks.mle.grader import (InvalidSubmission, MLEGrade, get_metric, grade_submission,
                                 grade_workspace, normalize_score, validate_submission)

__all__ = [
    "COMPETITIONS", "InvalidSubmission", "MLEGrade", "get_metric", "grade_submission", "grade_workspace",
    "leaderboard_position", "make_mle_tasks", "normalize_score", "run_reference", "validate_submission",
    "write_task",
]

import os as _os
import pathlib as _pathlib
from typing import Any as _Any

from rl import registry as _registry


@_registry.TASK_SOURCES.register("mle")
def mle_task_source(config: _Any, workdir: str | _os.PathLike, arg: str | None = None) -> list:
  """Task source `mle`: the four competitions, generated on first use (no leaderboard run).

  Reads config.tasks.mle_root ("" = <workdir>/tasks/mle), mle_variants and synthetic_seed.
  `arg` ("mle:tabular-churn,insult-detection" in config.tasks.sources) keeps only those
  competitions. `scripts/make_mle_tasks.py` generates the same tasks with their leaderboards.
  """
  from rl.tasks import load_task_root  # pylint: disable=import-outside-toplevel

  tasks_cfg = config.tasks if hasattr(config, "tasks") else config
  get = tasks_cfg.get if hasattr(tasks_cfg, "get") else lambda k, d=None: getattr(tasks_cfg, k, d)
  root = _pathlib.Path(get("mle_root", "") or _pathlib.Path(workdir) / "tasks" / "mle")
  variants = int(get("mle_variants", 1) or 1)
  if not (root / "manifest.jsonl").is_file():
    make_mle_tasks(root, seed=int(get("synthetic_seed", 0) or 0), variants=variants, run_references=False)
  tasks = load_task_root(root)
  if arg:
    wanted = {a.strip() for a in str(arg).split(",") if a.strip()}
    unknown = sorted(wanted - set(COMPETITIONS))
    if unknown:
      raise ValueError(f"task source mle: unknown competition(s) {unknown}; known: {', '.join(COMPETITIONS)}")
    tasks = [t for t in tasks if t.metadata.get("competition") in wanted]
  return tasks
