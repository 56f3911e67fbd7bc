"""MLE-style tasks: offline Kaggle-like competitions, their grader and reference leaderboards.

Tasks use the ARCHITECTURE.md directory format with grader `mle`; the agent writes a
program that produces a submission CSV, graded against private answers kept
outside the workspace. `rl.tasks.mle.runner` runs and grades an agent's program.
"""

from rl.tasks.mle.build import leaderboard_position, make_mle_tasks, run_reference, write_task
from rl.tasks.mle.competitions import COMPETITIONS
from rl.tasks.mle.grader import (InvalidSubmission, MLEGrade, get_metric, grade_submission,
                                 grade_workspace, normalize_score, validate_submission)
from rl.tasks.mle.source import mle_task_source
from rl.tasks.mle import expert as _expert  # registers the `mle_program` expert plan

__all__ = [
    "COMPETITIONS", "InvalidSubmission", "MLEGrade", "get_metric", "grade_submission", "grade_workspace",
    "leaderboard_position", "make_mle_tasks", "mle_task_source", "normalize_score", "run_reference",
    "validate_submission", "write_task",
]
