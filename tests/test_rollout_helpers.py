"""Shared helpers for the rollout, replay and grading tests: tiny fixture tasks and host stand-ins.

The fixture tasks follow the task-directory format with cheap `python -S` checks as hidden tests,
so dozens of episodes grade in seconds; `host_grade`/`host_session` stand in for the sandbox when
the tests exercise the engine itself (the sandbox has its own tests).
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import shutil
import subprocess
import tempfile

from configs import default as default_config
from rl.env import rollout
from rl.env import tools as tools_lib
from rl.outcome import evaluator as evaluator_lib


@dataclasses.dataclass
class FixtureTask:
  """The attributes of rl.tasks.Task that rollouts use."""
  dir: pathlib.Path
  metadata: dict

  id = property(lambda self: self.metadata["id"])
  version = property(lambda self: str(self.metadata["version"]))
  statement = property(lambda self: (self.dir / "task.md").read_text())
  repo_dir = property(lambda self: self.dir / "repo")
  tests_dir = property(lambda self: self.dir / "tests")
  grader = property(lambda self: self.metadata["grader"])
  test_command = property(lambda self: self.metadata["test_command"])
  hidden_tests_dest = property(lambda self: self.metadata["hidden_tests_dest"])
  timeout_s = property(lambda self: float(self.metadata["timeout_s"]))
  public_tests = property(lambda self: self.metadata.get("public_tests", []))


OPS = [("add", "a + b", "a - b"), ("mul", "a * b", "a + b"), ("sub", "a - b", "b - a"),
       ("maxi", "a if a > b else b", "a if a < b else b"), ("mini", "a if a < b else b", "b"),
       ("avg", "(a + b) / 2", "(a + b) / 3")]


def make_task(root: pathlib.Path, index: int, *, pytest_style: bool = False) -> FixtureTask:
  """A one-bug task; `pytest_style` gives pytest hidden tests (for the real sandbox grader)."""
  name, good, bad = OPS[index % len(OPS)]
  tid = f"fix-{name}-{index}"
  d = root / tid
  (d / "repo" / "pkg").mkdir(parents=True)
  (d / "tests").mkdir()
  (d / "repo" / "pkg" / "__init__.py").write_text("")
  (d / "repo" / "pkg" / "ops.py").write_text(
      f'"""Small arithmetic helpers."""\n\n\ndef {name}(a, b):\n  return {bad}\n')
  (d / "repo" / "check_public.py").write_text(
      f"from pkg.ops import {name}\nprint('public check', {name}(3, 3))\n")
  (d / "tests" / "check_hidden.py").write_text(
      f"import sys\nsys.path.insert(0, '.')\nfrom pkg.ops import {name}\n"
      f"a, b = 7, 2\nassert {name}(a, b) == {good}, 'wrong'\nprint('1 passed')\n")
  if pytest_style:
    (d / "tests" / "check_hidden.py").unlink()
    (d / "tests" / f"test_{name}.py").write_text(
        f"from pkg.ops import {name}\n\n\ndef test_{name}():\n  assert {name}(7, 2) == "
        f"(lambda a, b: {good})(7, 2)\n\n\ndef test_{name}_same():\n  assert {name}(3, 3) == "
        f"(lambda a, b: {good})(3, 3)\n")
  (d / "task.md").write_text(f"`pkg.ops.{name}` is wrong: it must return `{good}`. Fix it.")
  meta = {"id": tid, "version": "1", "source": "fixture", "license": "MIT", "language": "python",
          "grader": "pytest", "test_command": "python -S tests/check_hidden.py",
          "public_test_command": "python -S check_public.py",
          "hidden_tests_dest": "tests", "timeout_s": 20, "public_tests": ["check_public.py"],
          "fix": [{"path": "pkg/ops.py", "old": f"return {bad}", "new": f"return {good}"}]}
  if pytest_style:
    meta["test_command"] = "python -m pytest -q tests"
  (d / "metadata.json").write_text(json.dumps(meta))
  return FixtureTask(d, meta)


@dataclasses.dataclass
class FakeReport:
  passed: int
  failed: int
  errors: int = 0
  skipped: int = 0
  total: int = 1
  all_passed: bool = False
  runtime_evidence: dict = dataclasses.field(default_factory=dict)


def host_grade(workspace_dir, hidden_tests_dir, *, hidden_tests_dest, test_command, timeout_s, config,
               pristine_dir=None, editable=()):
  """Grades on the host (tests only; the real path is sandbox.grading.grade)."""
  del config, pristine_dir, editable
  with tempfile.TemporaryDirectory() as tmp:
    ws = os.path.join(tmp, "ws")
    shutil.copytree(workspace_dir, ws)
    shutil.rmtree(os.path.join(ws, hidden_tests_dest), ignore_errors=True)
    shutil.copytree(hidden_tests_dir, os.path.join(ws, hidden_tests_dest))
    proc = subprocess.run(test_command, shell=True, cwd=ws, capture_output=True, timeout=timeout_s)
  ok = proc.returncode == 0
  return FakeReport(passed=int(ok), failed=int(not ok), all_passed=ok)


def make_config(**agent):
  c = default_config.get_config()
  for k, v in agent.items():
    c.agent[k] = v
  return c


@dataclasses.dataclass
class FakeSandboxConfig:
  exec_timeout_s: float = 10.0


def host_session(workspace_dir, sandbox_config):
  del sandbox_config
  return tools_lib.UnsandboxedSession(workspace_dir)


def make_engine(config, policy, renderer, **kw):
  evaluator = evaluator_lib.Evaluator(config, sandbox_config=FakeSandboxConfig(), grade_fn=host_grade)
  return rollout.RolloutEngine(config, policy, renderer, open_session=host_session,
                               evaluator=evaluator, **kw)
