"""Exact replay and grading of logged trajectories (scripts/grade.py, scripts/replay.py): a record's
actions run again in a fresh sandbox through the same `run_action` path, and the observations are
compared with the logged ones up to timings and addresses."""

from __future__ import annotations

import os
import re
import tempfile
from typing import Any, Callable, Mapping


from rl.env import tools as tools_lib
from rl.env.tools import Action, SandboxCrash, ToolExecutor
from rl.outcome.evaluator import ActionCheck, Evaluator, default_open_session, run_action
from rl.tasks.workspace_git import workspace_source


_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:s|sec|seconds|ms)\b")
_HEX_ADDR = re.compile(r"0x[0-9a-f]{6,}")


def normalize_observation(text: str) -> str:
  """Masks run-to-run noise (durations, object addresses) before comparing observations."""
  return _HEX_ADDR.sub("0x?", _DURATION.sub("<t>", text))


def logged_form(observation: str, step: Mapping[str, Any]) -> str:
  """`observation` cut the way the trajectory log cut the step's original one."""
  limit = step.get("observation_log_max_chars")
  return tools_lib.truncate_observation(observation, int(limit)) if limit else observation


def replay_record(record: Mapping[str, Any], task: Any, evaluator: Evaluator, *,
                  open_session: Callable[[str, Any], Any] | None = None,
                  command_timeout_s: float | None = None, mode: str | None = None,
                  strict: bool = False) -> dict[str, Any]:
  """Re-runs a record's actions in a fresh sandbox, grades the result and compares.

  Returns {"task_id", "reward", "logged_reward", "tests", "hack", "success",
  "differences": [{"step", "field", "logged", "replayed"}]}; `strict` compares observations
  without masking durations.
  """
  if record.get("task_id") != task.id:
    raise ValueError(f"record is for task {record.get('task_id')!r}, not {task.id!r}")
  open_session = open_session or default_open_session
  mode = mode or record.get("mode", "multi_turn")
  timeout = command_timeout_s or float(evaluator.sandbox_config.exec_timeout_s)
  context = evaluator.new_context(task)
  checks: list[ActionCheck] = []
  differences: list[dict[str, Any]] = []
  with tempfile.TemporaryDirectory(prefix="replay-") as tmp:
    workspace = os.path.join(tmp, "workspace")
    crashed = ""
    session = open_session(workspace_source(task), evaluator.task_config(task))  # as rollouts start
    try:
      executor = ToolExecutor(session, command_timeout_s=timeout,
                              solution_file=tools_lib.solution_file_for(task) if mode == "single_turn" else None)
      for step in record.get("steps", []):
        action_type = step.get("action_type")
        if action_type is None:
          continue  # a malformed call: nothing ran, the error text is not sandbox output
        action = Action(action_type, dict(step.get("action_input") or {}), step.get("thought", ""), "")
        try:
          outcome, check = run_action(executor, evaluator, task, action, context)
        except SandboxCrash as e:
          crashed = str(e)
          break
        checks.append(check)
        observation = outcome.observation
        logged = step.get("observation", "")
        a, b = logged_form(observation, step), logged
        if not strict:
          a, b = normalize_observation(a), normalize_observation(b)
        if a != b:
          differences.append({"step": step.get("step"), "field": "observation", "logged": logged,
                              "replayed": logged_form(observation, step)})
        logged_hack = bool((step.get("hack") or {}).get("flagged"))
        if logged_hack != check.flagged:
          differences.append({"step": step.get("step"), "field": "hack", "logged": logged_hack,
                              "replayed": check.flagged})
        if check.terminate:
          break
      if not crashed and not any(c.terminate for c in checks):
        session.export_workspace(workspace)
    finally:
      session.close()
    graded = os.path.isdir(workspace) and record.get("terminated") != "error"
    outcome = evaluator.evaluate(task, workspace if graded else None, action_checks=checks,
                                 steps=record.get("steps", []), context=context)
  logged_reward = float(record.get("final_reward", 0.0))
  if abs(outcome["reward"] - logged_reward) > 1e-9:
    differences.append({"step": None, "field": "final_reward", "logged": logged_reward,
                        "replayed": outcome["reward"]})
  return {"task_id": task.id, "reward": outcome["reward"], "logged_reward": logged_reward,
          "tests": outcome["tests"], "hack": outcome["hack"], "success": outcome["success"],
          "differences": differences, **({"error": crashed} if crashed else {})}


def grade_workspace(task: Any, workspace_dir: str | os.PathLike, evaluator: Evaluator) -> dict[str, Any]:
  """Grades a directory as is (fresh sandbox, pristine hidden tests, final-diff rules)."""
  if not os.path.isdir(workspace_dir):
    raise FileNotFoundError(f"workspace directory {str(workspace_dir)!r} does not exist")
  outcome = evaluator.evaluate(task, str(workspace_dir))
  return {"task_id": task.id, "reward": outcome["reward"], "tests": outcome["tests"],
          "hack": outcome["hack"], "success": outcome["success"]}
