"""Grades MLE-style submissions (a CSV of predictions) against private answers.

Validation is strict and precise: a malformed submission raises `InvalidSubmission`
saying exactly what is wrong (missing column, row count, unknown ids, NaN, bad
probabilities), so the agent's error observation is useful and the `mle` reward
can give its fixed invalid-submission charge.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import pathlib
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

# Probabilities written to CSV with a few decimals rarely sum to exactly 1; beyond this
# tolerance the submission is refused rather than silently renormalised.
PROBABILITY_SUM_TOLERANCE = 1e-3
LOG_LOSS_EPS = 1e-15


class InvalidSubmission(ValueError):
  """A submission that cannot be scored; the message names the problem."""


@dataclasses.dataclass(frozen=True)
class MetricSpec:
  name: str
  higher_is_better: bool
  kind: str  # "probabilities" (rows sum to 1) | "scores" (any finite) | "nonnegative"
  compute: Callable[[np.ndarray, np.ndarray], float]


def _multi_class_log_loss(y_true: np.ndarray, y_pred: np.ndarray) -> float:
  """Mean negative log-likelihood; y_true is one-hot [N, K], y_pred rows sum to ~1."""
  p = np.clip(y_pred / y_pred.sum(axis=1, keepdims=True), LOG_LOSS_EPS, 1 - LOG_LOSS_EPS)
  return float(-np.mean(np.sum(y_true * np.log(p), axis=1)))


def _roc_auc(y_true: np.ndarray, y_pred: np.ndarray) -> float:
  """Area under the ROC curve via the rank statistic (ties get the average rank)."""
  y = y_true[:, 0].astype(np.float64)
  s = y_pred[:, 0].astype(np.float64)
  n_pos = float(y.sum())
  n_neg = float(len(y) - n_pos)
  if n_pos == 0 or n_neg == 0:
    raise ValueError("ROC-AUC needs both classes in the answers")
  ranks = pd.Series(s).rank(method="average").to_numpy()
  return float((ranks[y == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _mean_column_rmsle(y_true: np.ndarray, y_pred: np.ndarray) -> float:
  per_column = np.sqrt(np.mean((np.log1p(y_pred) - np.log1p(y_true)) ** 2, axis=0))
  return float(np.mean(per_column))


METRICS: dict[str, MetricSpec] = {
    "multi_class_log_loss": MetricSpec("multi_class_log_loss", False, "probabilities",
                                       _multi_class_log_loss),
    "roc_auc": MetricSpec("roc_auc", True, "scores", _roc_auc),
    "mean_column_rmsle": MetricSpec("mean_column_rmsle", False, "nonnegative", _mean_column_rmsle),
}


def get_metric(name: str) -> MetricSpec:
  try:
    return METRICS[name]
  except KeyError:
    raise LookupError(f"unknown MLE metric {name!r}; known metrics: {', '.join(sorted(METRICS))}") from None


def normalize_score(score: float, metric: str) -> float:
  """Sign-normalised score: higher is always better (losses are negated)."""
  return float(score) if get_metric(metric).higher_is_better else -float(score)


@dataclasses.dataclass
class MLEGrade:
  """The outcome of grading one submission."""

  valid: bool
  metric: str
  score: float | None = None  # raw metric value (None when invalid)
  normalized_score: float | None = None  # higher is better
  error: str = ""  # the InvalidSubmission message when invalid

  def to_dict(self) -> dict[str, Any]:
    return dataclasses.asdict(self)


def _read_csv(path: pathlib.Path, what: str) -> pd.DataFrame:
  if not path.is_file():
    raise InvalidSubmission(f"{what} {path.name} was not found")
  if path.stat().st_size == 0:
    raise InvalidSubmission(f"{what} {path.name} is empty")
  try:
    return pd.read_csv(path)
  except (ValueError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:  # ParserError is a ValueError
    raise InvalidSubmission(f"{what} {path.name} is not a readable CSV: {str(e).splitlines()[0]}") from None


def validate_submission(submission: pd.DataFrame, answers: pd.DataFrame, *, id_column: str,
                        target_columns: Sequence[str], metric: str) -> np.ndarray:
  """Checks a submission against the answers' ids; returns predictions [N, K] in answer order.

  Raises InvalidSubmission naming the first problem found.
  """
  spec = get_metric(metric)
  if not isinstance(submission, pd.DataFrame):
    raise InvalidSubmission(f"submission must be a table, got {type(submission).__name__}")
  columns = [str(c) for c in submission.columns]
  required = [id_column, *target_columns]
  missing = [c for c in required if c not in columns]
  if missing:
    raise InvalidSubmission(f"submission lacks column(s) {missing}; expected columns {required}, "
                            f"got {columns}")
  extra = [c for c in columns if c not in required]
  if extra:
    raise InvalidSubmission(f"submission has unexpected column(s) {extra}; expected columns {required}")
  if len(set(columns)) != len(columns):
    raise InvalidSubmission(f"submission has duplicate column names: {columns}")
  if len(submission) != len(answers):
    raise InvalidSubmission(f"submission has {len(submission)} rows, expected {len(answers)} "
                            f"(one per test id)")
  sub_ids = submission[id_column].astype(str)
  dup = sub_ids[sub_ids.duplicated()].unique().tolist()
  if dup:
    raise InvalidSubmission(f"submission repeats id(s) {dup[:5]}{' ...' if len(dup) > 5 else ''}")
  answer_ids = answers[id_column].astype(str)
  unknown = sorted(set(sub_ids) - set(answer_ids))
  if unknown:
    raise InvalidSubmission(f"submission has {len(unknown)} id(s) not in the test set, e.g. {unknown[:5]}")
  aligned = submission.set_index(sub_ids).loc[answer_ids.to_numpy(), list(target_columns)]
  try:
    values = aligned.to_numpy(dtype=np.float64)
  except (TypeError, ValueError):
    bad = [c for c in target_columns if not pd.api.types.is_numeric_dtype(aligned[c])]
    raise InvalidSubmission(f"submission column(s) {bad} hold non-numeric values") from None
  if np.isnan(values).any():
    rows, cols = np.nonzero(np.isnan(values))
    raise InvalidSubmission(f"submission has {len(rows)} NaN value(s), first in column "
                            f"{target_columns[cols[0]]!r} for id {answer_ids.iloc[rows[0]]!r}")
  if not np.isfinite(values).all():
    raise InvalidSubmission("submission has infinite values")
  if spec.kind == "probabilities":
    if (values < 0).any() or (values > 1).any():
      raise InvalidSubmission("submission probabilities must lie in [0, 1]; found "
                              f"min {values.min():.4g}, max {values.max():.4g}")
    sums = values.sum(axis=1)
    worst = int(np.argmax(np.abs(sums - 1)))
    if abs(sums[worst] - 1) > PROBABILITY_SUM_TOLERANCE:
      raise InvalidSubmission(f"submission probabilities must sum to 1 in every row; row with id "
                              f"{answer_ids.iloc[worst]!r} sums to {sums[worst]:.6g}")
  elif spec.kind == "nonnegative" and (values < 0).any():
    raise InvalidSubmission(f"{metric} needs non-negative predictions; found {values.min():.4g}")
  return values


def score_predictions(values: np.ndarray, answers: pd.DataFrame, *, target_columns: Sequence[str],
                      metric: str) -> float:
  """Scores validated predictions [N, K] against the answers (same row order).

  Answers hold the same columns as a submission; for log loss they are one-hot.
  """
  y_true = answers[list(target_columns)].to_numpy(dtype=np.float64)
  return get_metric(metric).compute(y_true, values)


def grade_submission(submission: str | os.PathLike | pd.DataFrame, answers: str | os.PathLike | pd.DataFrame,
                     *, metric: str, id_column: str, target_columns: Sequence[str],
                     raise_invalid: bool = False) -> MLEGrade:
  """Validates and scores one submission; invalid ones give `MLEGrade(valid=False, error=...)`.

  With `raise_invalid` the InvalidSubmission propagates instead.
  """
  get_metric(metric)  # unknown metric is a task bug, never the agent's: raise LookupError
  answers_df = answers if isinstance(answers, pd.DataFrame) else pd.read_csv(answers)
  try:
    sub_df = submission if isinstance(submission, pd.DataFrame) else _read_csv(
        pathlib.Path(submission), "submission file")
    values = validate_submission(sub_df, answers_df, id_column=id_column,
                                 target_columns=target_columns, metric=metric)
  except InvalidSubmission as e:
    if raise_invalid:
      raise
    return MLEGrade(valid=False, metric=metric, error=str(e))
  score = score_predictions(values, answers_df, target_columns=target_columns, metric=metric)
  if not math.isfinite(score):
    error = f"{metric} of the submission is not finite ({score})"
    if raise_invalid:
      raise InvalidSubmission(error)
    return MLEGrade(valid=False, metric=metric, error=error)
  return MLEGrade(valid=True, metric=metric, score=score, normalized_score=normalize_score(score, metric))


def task_spec(metadata: Mapping[str, Any]) -> dict[str, Any]:
  """The grading fields of an mle task's metadata, with a clear error when one is absent."""
  if metadata.get("grader") != "mle":
    raise ValueError(f"task {metadata.get('id')!r} is graded by {metadata.get('grader')!r}, not 'mle'")
  missing = [k for k in ("metric", "submission_file", "answers_file", "id_column", "target_columns")
             if k not in metadata]
  if missing:
    raise ValueError(f"mle task {metadata.get('id')!r} lacks metadata field(s) {missing}")
  return {k: metadata[k] for k in ("metric", "submission_file", "answers_file", "id_column",
                                   "target_columns")}


def grade_workspace(task_dir: str | os.PathLike, workspace_dir: str | os.PathLike, *,
                    raise_invalid: bool = False) -> MLEGrade:
  """Grades the submission file an agent's program left in `workspace_dir`.

  The answers are read from the task directory (never from the workspace), so a
  program cannot reach them.
  """
  task_dir = pathlib.Path(task_dir)
  metadata = json.loads((task_dir / "metadata.json").read_text(encoding="utf-8"))
  spec = task_spec(metadata)
  submission = pathlib.Path(workspace_dir) / spec["submission_file"]
  return grade_submission(submission, task_dir / spec["answers_file"], metric=spec["metric"],
                          id_column=spec["id_column"], target_columns=spec["target_columns"],
                          raise_invalid=raise_invalid)
