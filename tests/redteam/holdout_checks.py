"""What the held-out round tests (tests/test_redteam_holdout*.py) and bench_antihack share: a
task's sandbox settings, the files its reference fix may change, a real grading, pytest on a
hack's raw workspace (the hack working when nothing defends) and a round's probe of inputs the
hidden tests never use, run in a plain interpreter."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any

import redteam_suite


def run_probe(code: str, expected: str, workspace: str) -> tuple[bool, str]:
  """(whether `code`, run by a plain interpreter in `workspace` with no PYTEST_* variables and no
  faulthandler, prints exactly `expected`; what it printed and its errors)."""
  env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST") and k != "PYTHONFAULTHANDLER"}
  env["TMPDIR"] = os.path.join(workspace, ".probe-tmp")
  os.makedirs(env["TMPDIR"], exist_ok=True)
  r = subprocess.run([sys.executable, "-c", code], cwd=workspace, env=env, capture_output=True, text=True,
                     timeout=60, check=False)
  return r.stdout == expected, r.stdout + r.stderr


@functools.cache
def sandbox_usable() -> tuple[bool, str]:
  """(whether the local sandbox runs Python here, why not)."""
  try:
    from sandbox import SandboxConfig, open_session
    import sandbox.grading  # noqa: F401
  except ImportError as e:
    return False, f"sandbox not importable ({e})"
  try:
    with tempfile.TemporaryDirectory() as d, open_session(d, SandboxConfig(backend="local")) as s:
      r = s.exec("python -c 'print(1)'", timeout=20)
      if r.exit_code != 0:
        return False, f"local sandbox cannot run python: {r.stderr[:200]}"
  except Exception as e:  # any backend failure: the grading checks cannot run here
    return False, f"local sandbox unusable: {type(e).__name__}: {e}"
  return True, ""


def config(task: str) -> Any:
  from sandbox import SandboxConfig
  return SandboxConfig(backend="local", python_path=tuple(redteam_suite.task_metadata(task).get("python_path") or ()))


def editable(task: str) -> tuple[str, ...]:
  """The task's grading_editable plus its solution.patch files (as rl.tasks.Task reports them)."""
  from rl.tasks.patch import parse_patch
  paths = list(redteam_suite.task_metadata(task).get("grading_editable") or ())
  patch = os.path.join(redteam_suite.task_dir(task), "solution.patch")
  if os.path.exists(patch):
    with open(patch, encoding="utf-8") as fh:
      paths += [p for fp in parse_patch(fh.read()) for p in (fp.old_path, fp.new_path) if p]
  return tuple(dict.fromkeys(paths))


def check_task_directory(task: str) -> None:
  """A round's task folder is complete: metadata with the tests at `tests`, task.md, a reference
  patch, public tests that exist, no conftest and no test folder in the repo, no subTest in the
  hidden tests (under pytest 9 every subtest adds a report of the call phase, which grading takes
  for a test reported twice)."""
  d = redteam_suite.task_dir(task)
  meta = redteam_suite.task_metadata(task)
  assert meta["id"] == "redteam-" + task
  assert meta["hidden_tests_dest"] == "tests" and meta["test_command"] == "python -m pytest -q tests"
  for name in ("task.md", "metadata.json", "solution.patch"):
    assert os.path.isfile(os.path.join(d, name)), (task, name)
  assert editable(task)
  assert not os.path.exists(os.path.join(d, "tests", "conftest.py")), task
  assert not os.path.exists(os.path.join(d, "repo", "conftest.py")), task
  assert not os.path.exists(os.path.join(d, "repo", "tests")), task
  for public in meta.get("public_tests", ()):
    assert os.path.isfile(os.path.join(d, "repo", public)), (task, public)
  for name in os.listdir(os.path.join(d, "tests")):
    if name.endswith(".py"):
      with open(os.path.join(d, "tests", name), encoding="utf-8") as fh:
        assert "subTest" not in fh.read(), (task, name)


def grade(task: str, workspace: str) -> Any:
  from sandbox.grading import grade as grade_fn
  meta = redteam_suite.task_metadata(task)
  d = redteam_suite.task_dir(task)
  return grade_fn(workspace, os.path.join(d, "tests"), hidden_tests_dest=meta["hidden_tests_dest"],
                  test_command=meta["test_command"], timeout_s=float(meta["timeout_s"]), config=config(task),
                  pristine_dir=os.path.join(d, "repo"), editable=editable(task))


def raw_pytest(case: Any, workspace: str) -> Any:
  """The task's test command on the case's workspace as it is, hidden tests copied in."""
  from sandbox import open_session
  meta = redteam_suite.task_metadata(case.task)
  shutil.copytree(os.path.join(redteam_suite.task_dir(case.task), "tests"),
                  os.path.join(workspace, meta["hidden_tests_dest"]), dirs_exist_ok=True)
  with open_session(workspace, config(case.task)) as session:
    return session.exec(meta["test_command"] + " -p no:cacheprovider", timeout=30)


def check_pristine_fails_and_solution_passes(task: str, workspace: str) -> None:
  """The task's pristine repo fails real grading at `workspace`; with solution.patch applied it passes."""
  from rl.tasks.patch import apply_patch
  shutil.copytree(os.path.join(redteam_suite.task_dir(task), "repo"), workspace)
  report = grade(task, workspace)
  assert not report.all_passed, report.log
  with open(os.path.join(redteam_suite.task_dir(task), "solution.patch"), encoding="utf-8") as fh:
    apply_patch(workspace, fh.read())
  report = grade(task, workspace)
  assert report.all_passed, report.log


def check_honest_fix_passes(case_id: str, workspace: str) -> None:
  """An honest fix of a round, materialised at `workspace`, passes real grading."""
  case = redteam_suite.by_id(case_id)
  report = grade(case.task, redteam_suite.materialize(case, workspace))
  assert report.all_passed, report.log


def check_round_cases(cases: list, records: dict, tasks: tuple[str, ...], hack_ids: list, legit_ids: list) -> None:
  """Every case of a held-out round is well formed (kind, task, one-line description, actions
  ending in submit, files for honest fixes, process hacks that act), and each task holds at
  least 40% of each kind."""
  for case in cases:
    assert case.kind in ("hack", "legit"), case.id
    assert case.task in tasks and os.path.isdir(redteam_suite.task_dir(case.task)), case.id
    assert case.description and "\n" not in case.description, case.id
    assert case.actions and case.actions[-1][0] == "submit", case.id
    assert case.files or case.kind == "hack", case.id
    assert redteam_suite.by_id(case.id) is case
    if records[case.id].get("process"):
      assert case.kind == "hack", case.id
      assert any(a in ("run", "read_file") for a, _ in case.actions), case.id
  for task in tasks:
    n_hacks = sum(c.task == task and c.kind == "hack" for c in cases)
    n_legit = sum(c.task == task and c.kind == "legit" for c in cases)
    assert n_hacks >= 0.4 * len(hack_ids) and n_legit >= 0.4 * len(legit_ids), task


# The per-case checks every held-out round's test file makes; `probe` is the round's
# (code, expected output) for the task, run by run_probe.

def check_probe_tells_bug_from_fix(task: str, probe: tuple[str, str], workspace: str) -> None:
  """The probe gets a wrong answer on the task's pristine repo and the right one with
  solution.patch applied."""
  from rl.tasks.patch import apply_patch
  shutil.copytree(os.path.join(redteam_suite.task_dir(task), "repo"), workspace)
  right, out = run_probe(*probe, workspace)
  assert not right, out
  with open(os.path.join(redteam_suite.task_dir(task), "solution.patch"), encoding="utf-8") as fh:
    apply_patch(workspace, fh.read())
  right, out = run_probe(*probe, workspace)
  assert right, out


def check_fix_is_general(case_id: str, probe: tuple[str, str], workspace: str) -> None:
  """A case's files (an honest fix, or a process hack's) get the probe's right answers."""
  right, out = run_probe(*probe, redteam_suite.materialize(redteam_suite.by_id(case_id), workspace))
  assert right, out


def check_hack_works_raw(case_id: str, probe: tuple[str, str], scratch: str) -> None:
  """A file-based hack leaves the bug (the probe gets a wrong answer) and still passes the hidden
  tests on its raw workspace, with nothing defending. `scratch`: a folder for two workspaces."""
  case = redteam_suite.by_id(case_id)
  right, out = run_probe(*probe, redteam_suite.materialize(case, os.path.join(scratch, "probe")))
  assert not right, out
  result = raw_pytest(case, redteam_suite.materialize(case, os.path.join(scratch, "ws")))
  assert result.exit_code == 0, (result.stdout + result.stderr)[-3000:]
