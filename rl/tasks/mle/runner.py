"""Runs an agent's MLE program in a fresh sandbox (instrumented first) and grades its submission.

This is the `mle` grader's execution path: the workspace is copied into a new
session, the solution file is replaced by its instrumented version (verified
equivalent, or the original), stale submissions are removed, the test command runs,
and the submission is graded on the host against answers the sandbox never sees.

    result = run_and_grade(task, workspace_dir, instrumenter=make_instrumenter(cfg.instrumentation),
                           sandbox_config=SandboxConfig.from_mapping(cfg.sandbox))
    reward = scheme.final_reward(None, result.reward_context())   # rl.outcome.rewards "mle"
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import tempfile
import time
from typing import Any, Callable

from rl.env import instrumentation as instr
from rl.tasks.mle import grader

# Gradient boosting's OpenMP threads spin on a shared CPU; one thread per program is faster.
PROGRAM_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@dataclasses.dataclass
class MLERunResult:
  """Everything the reward, the metrics and the self-improvement buffer need from one run."""

  task_id: str
  grade: grader.MLEGrade
  higher_is_better: bool
  stages: instr.StageReport
  instrumentation: dict[str, Any]
  exit_code: int | None
  timed_out: bool
  exec_time_s: float  # wall time of the final program run (0 when it never ran)
  stdout: str
  stderr: str

  @property
  def valid(self) -> bool:
    return self.grade.valid

  def reward_context(self) -> dict[str, Any]:
    """The context the `mle` reward scheme reads."""
    return {"score": self.grade.score, "submission_valid": self.grade.valid,
            "higher_is_better": self.higher_is_better, "instrumentation_stages": self.stages.count}

  def terminal_output(self, max_chars: int = 4000) -> str:
    """What the agent would see: program output (markers included) and the grading verdict."""
    verdict = (f"submission valid: {self.grade.metric} = {self.grade.score:.6g}" if self.grade.valid
               else f"submission invalid: {self.grade.error}")
    text = self.stdout + (("\n[stderr]\n" + self.stderr) if self.stderr.strip() else "")
    if self.timed_out:
      text += "\n[the program timed out]"
    if len(text) > max_chars:
      half = max_chars // 2
      text = f"{text[:half]}\n[... {len(text) - max_chars} characters cut ...]\n{text[-half:]}"
    return f"{text.rstrip()}\n{verdict}\n"

  def metrics(self) -> dict[str, float]:
    out = {"mle/valid": float(self.grade.valid), "mle/exec_time_s": float(self.exec_time_s)}
    if self.grade.valid:
      out["mle/normalized_score"] = float(self.grade.normalized_score)
    out.update(self.stages.metrics())
    return out

  def to_dict(self) -> dict[str, Any]:
    return {"task_id": self.task_id, "grade": self.grade.to_dict(), "higher_is_better": self.higher_is_better,
            "stages": self.stages.to_dict(), "instrumentation": self.instrumentation,
            "exit_code": self.exit_code, "timed_out": self.timed_out, "exec_time_s": self.exec_time_s}


def _task_fields(task: Any) -> tuple[str, pathlib.Path, dict[str, Any]]:
  """(id, dir, metadata) from an rl.tasks.Task or a task directory path."""
  if isinstance(task, (str, os.PathLike)):
    task_dir = pathlib.Path(task)
    metadata = json.loads((task_dir / "metadata.json").read_text(encoding="utf-8"))
  else:
    task_dir, metadata = pathlib.Path(task.dir), dict(task.metadata)
  return metadata["id"], task_dir, metadata


def _default_session_factory(sandbox_config: Any) -> Callable[[str], Any]:
  from sandbox import SandboxConfig, open_session  # pylint: disable=import-outside-toplevel

  if sandbox_config is None:
    cfg = SandboxConfig()
  elif isinstance(sandbox_config, SandboxConfig):
    cfg = sandbox_config
  else:
    cfg = SandboxConfig.from_mapping(sandbox_config)
  return lambda workspace: open_session(str(workspace), cfg)


def run_and_grade(task: Any, workspace_dir: str | os.PathLike, *,
                  instrumenter: instr.Instrumenter | None = None, sandbox_config: Any = None,
                  session_factory: Callable[[str], Any] | None = None,
                  timeout_s: float | None = None) -> MLERunResult:
  """Runs the task's test command on the workspace's solution file in a fresh sandbox; grades it.

  `session_factory(workspace_dir) -> sandbox.Session` overrides the sandbox (tests); by
  default a session of `sandbox_config` (a SandboxConfig, a mapping, or None for defaults).
  """
  task_id, task_dir, metadata = _task_fields(task)
  spec = grader.task_spec(metadata)
  higher = grader.get_metric(spec["metric"]).higher_is_better
  solution_file = metadata.get("solution_file", "solution.py")
  workspace_dir = pathlib.Path(workspace_dir)
  instrumenter = instrumenter or instr.NoInstrumenter()
  timeout_s = float(timeout_s or metadata.get("timeout_s", 120))

  solution_path = workspace_dir / solution_file
  if not solution_path.is_file():
    grade = grader.MLEGrade(valid=False, metric=spec["metric"],
                            error=f"{solution_file} was not found in the workspace; nothing to run")
    return MLERunResult(task_id, grade, higher, instr.parse_markers("", None), {}, None, False, 0.0, "", "")
  raw = solution_path.read_bytes()
  try:
    # Bytes, not read_text: universal newlines would rewrite CRLF files.
    source = raw.decode("utf-8")
  except UnicodeDecodeError:
    source = None
  if source is None:  # not UTF-8 (a coding cookie): run the file exactly as written
    instrumented = instr.InstrumentationResult("", "", instr.new_nonce(), instrumenter.name, False,
                                               fallback_reason="the program is not UTF-8 text")
  else:
    instrumented = instrumenter.instrument(source)
  factory = session_factory or _default_session_factory(sandbox_config)
  with tempfile.TemporaryDirectory(prefix="mle_grade_") as tmp:
    exported = pathlib.Path(tmp) / "workspace"
    with factory(str(workspace_dir)) as session:
      if instrumented.verified:
        session.write_file(solution_file, instrumented.source)
      # The run must produce the submission itself; one left over from the agent's own runs
      # does not count.
      session.exec(f"rm -f -- '{spec['submission_file']}'", timeout=10)
      start = time.time()
      result = session.exec(metadata["test_command"], timeout=timeout_s, env=PROGRAM_ENV)
      session.export_workspace(str(exported))
    grade = grader.grade_workspace(task_dir, exported)
  if not grade.valid and result.timed_out:
    grade.error = f"the program timed out after {timeout_s:.0f}s; {grade.error}"
  elif not grade.valid and result.exit_code != 0:
    tail = result.stderr.strip().splitlines()[-1:] or ["(no stderr)"]
    grade.error = f"the program exited with code {result.exit_code} ({tail[0][:300]}); {grade.error}"
  stages = instrumented.parse(result.stdout, start_time=start)
  return MLERunResult(task_id, grade, higher, stages, instrumented.to_dict(), result.exit_code, result.timed_out,
                      float(result.duration_s), result.stdout, result.stderr)
