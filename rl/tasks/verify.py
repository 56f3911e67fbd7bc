"""Running a task's hidden tests against a state (initial or reference) to verify the task.

Grading goes through `sandbox.grading.grade` (isolated, no network). A plain-subprocess
runner with the same signature exists for machines without a sandbox; it is used only
when asked for by name (grader="subprocess", the scripts' --no-sandbox), never silently.

With an `evaluator` (`rl.outcome.evaluator.Evaluator`, what scripts/check_tasks.py uses by default) each
state goes through exactly the path a rollout's final workspace takes: the task's own sandbox
settings, the same test-surface removal, the expected-test counting, the anti-hack rules on
the diff and the reward scheme. A task whose reference is flagged or scores less than full
reward fails its check, so a task that passes cannot score 0 on its reference in training.
"""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
import hashlib
import json
import os
import pathlib
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from typing import Any, Callable, Sequence

from rl.tasks.format import Task, TaskEnvironment
from rl.tasks.patch import apply_patch
from sandbox.grading import TestReport
from sandbox.runtime_env import runtime_python

GRADERS = ("sandbox", "subprocess")


# The subprocess runner fills the sandbox's own report type (no audit evidence, never tampered).
LocalTestReport = TestReport


_SUMMARY_RE = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected)")
_OUTCOME_RE = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+)", re.M)


def _parse_pytest_output(text: str, report: LocalTestReport) -> None:
  tail = text.strip().splitlines()[-1] if text.strip() else ""
  counts = {k: 0 for k in ("passed", "failed", "error", "skipped")}
  for n, kind in _SUMMARY_RE.findall(tail):
    kind = {"errors": "error", "xfailed": "skipped", "xpassed": "passed", "deselected": None}.get(kind, kind)
    if kind:
      counts[kind] += int(n)
  report.passed, report.failed, report.errors, report.skipped = (counts["passed"], counts["failed"],
                                                                 counts["error"], counts["skipped"])
  report.total = report.passed + report.failed + report.errors + report.skipped
  for outcome, test_id in _OUTCOME_RE.findall(text):
    report.outcomes[test_id] = outcome.lower()
  if "error during collection" in text or "errors during collection" in text:
    report.collection_errors = [t for t, o in report.outcomes.items() if o == "error"] or ["collection error"]


def subprocess_grade(workspace_dir: str | os.PathLike, hidden_tests_dir: str | os.PathLike,
                     hidden_tests_dest: str = "tests", test_command: str = "python -m pytest -q tests",
                     timeout_s: float = 30, config: Any = None, expected_tests: Any = None,
                     pristine_dir: Any = None, editable: Any = ()) -> LocalTestReport:
  """Grades like sandbox.grading.grade but in a plain subprocess: NO isolation, trusted code only."""
  del expected_tests, pristine_dir, editable
  with tempfile.TemporaryDirectory(prefix="rltask-grade-") as tmp:
    work = pathlib.Path(tmp) / "ws"
    shutil.copytree(workspace_dir, work, symlinks=True)
    dest = work / hidden_tests_dest
    if hidden_tests_dest not in ("", ".") and dest.exists():
      shutil.rmtree(dest)  # the hidden tests replace whatever the workspace put there
    shutil.copytree(hidden_tests_dir, dest, dirs_exist_ok=True)
    env = dict(os.environ)
    # The sandbox runtime first on PATH: the same python and pytest the sandbox would use.
    env["PATH"] = os.path.dirname(runtime_python()) + os.pathsep + env.get("PATH", "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTEST_ADDOPTS"] = "-p no:cacheprovider -rA"
    env.pop("PYTHONPATH", None)
    # The task's import roots and variables, as the sandbox would set them.
    if config is not None:  # a SandboxConfig: the task's own variables and import roots
      env.update(dict(config.task_env))
    roots = [str(work / p) for p in config.python_path] if config is not None else []
    if roots:
      env["PYTHONPATH"] = os.pathsep.join(roots)
    report = LocalTestReport()
    start = time.monotonic()
    proc = subprocess.Popen(["bash", "-c", test_command], cwd=work, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
      out, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
      os.killpg(proc.pid, signal.SIGKILL)
      out, _ = proc.communicate()
      report.timed_out = True
    report.duration_s = time.monotonic() - start
    report.exit_code = proc.returncode
    text = out.decode("utf-8", "replace")
    report.log = text[-4000:]
    _parse_pytest_output(text, report)
    if proc.returncode not in (0, 1) and not report.timed_out and report.total == 0:
      report.collection_errors = report.collection_errors or [f"test command exited {proc.returncode}"]
    return report


def get_grade_fn(grader: str = "sandbox") -> Callable[..., Any]:
  """The grading function for `grader` ("sandbox" or "subprocess")."""
  if grader == "sandbox":
    try:
      from sandbox.grading import grade  # pylint: disable=import-outside-toplevel
    except ImportError as e:
      raise RuntimeError(f"sandbox.grading is not available ({e}); use grader='subprocess' "
                         "(scripts: --no-sandbox) to run tests without isolation") from None
    return grade
  if grader == "subprocess":
    return subprocess_grade
  raise ValueError(f"unknown grader {grader!r}; known: {', '.join(GRADERS)}")


def sandbox_available() -> bool:
  try:
    import sandbox.grading  # pylint: disable=import-outside-toplevel,unused-import
    return True
  except ImportError:
    return False


def default_sandbox_config(**overrides: Any) -> Any:
  from sandbox import SandboxConfig  # pylint: disable=import-outside-toplevel
  return SandboxConfig(**overrides)


def report_dict(report: Any) -> dict[str, Any]:
  d = report.to_dict() if hasattr(report, "to_dict") else dict(vars(report))
  d["all_passed"] = bool(report.all_passed)
  d.pop("outcomes", None)
  if isinstance(d.get("log"), str):
    d["log"] = d["log"][-1500:]
  return d


@dataclasses.dataclass
class Verification:
  """Result of running the hidden tests on a task's initial and reference states."""

  task_id: str
  initial: dict[str, Any] | None = None
  reference: dict[str, Any] | None = None
  ok: bool = False
  reason: str = ""

  def to_dict(self) -> dict[str, Any]:
    return dataclasses.asdict(self)


def _tree_hash(*dirs: pathlib.Path, extra: str = "") -> str:
  h = hashlib.sha256(extra.encode())
  for d in dirs:
    for p in sorted(d.rglob("*")):
      if p.is_file():
        h.update(p.relative_to(d).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    h.update(b"\1")
  return h.hexdigest()


class TaskVerifier:
  """Grades tasks' initial and reference states, in parallel, caching identical states.

  Many synthetic tasks share a reference state (the original function); the cache keys on
  the content of workspace + hidden tests + command, so each distinct state runs once.
  """

  def __init__(self, grader: str = "sandbox", *, workers: int = 2, sandbox_config: Any = None,
               evaluator: Any = None):
    self.grade = get_grade_fn(grader)
    self.grader = grader
    self.workers = max(1, workers)
    self.sandbox_config = sandbox_config
    if grader == "sandbox" and sandbox_config is None:
      self.sandbox_config = default_sandbox_config()
    self.evaluator = evaluator
    self._cache: dict[str, dict[str, Any]] = {}
    # States graded, by path: "batch" (many states in one sandbox, batch_runner) or "single"
    # (one sandbox per state); cache hits count in neither.
    self.graded: collections.Counter[str] = collections.Counter()
    self._graded_lock = threading.Lock()  # verify_many grades states in threads

  def _state_key(self, ws: pathlib.Path, task: Task) -> str:
    """The cache key of a state: its files, the hidden tests and how they are run. The batch
    path (`_run_batch`) and `run_state` must agree on it, or the batch's results go unread."""
    return _tree_hash(ws, task.tests_dir, extra=json.dumps(
        [task.test_command, task.hidden_tests_dest, repr(task.environment), bool(self.evaluator)]))

  def run_state(self, task: Task, *, reference: bool) -> dict[str, Any]:
    """Runs the hidden tests on the initial (or reference) state; returns a report dict
    (with the evaluator also `reward`, `success` and the anti-hack `rules` that fired)."""
    from rl.tasks.environment import task_sandbox_config  # pylint: disable=import-outside-toplevel
    with tempfile.TemporaryDirectory(prefix="rltask-state-") as tmp:
      ws = pathlib.Path(tmp) / "ws"
      shutil.copytree(task.repo_dir, ws, symlinks=True)
      if reference:
        apply_patch(ws, task.solution_patch or "")
      key = self._state_key(ws, task)
      if key in self._cache:
        return self._cache[key]
      if self.evaluator is not None:
        outcome = self.evaluator.evaluate(task, str(ws))
        result = report_dict(outcome["report"])
        hack = outcome.get("hack") or {}
        result.update(reward=float(outcome["reward"]), success=bool(outcome["success"]),
                      flagged=bool(hack.get("flagged")), rules=list(hack.get("rules") or []))
      else:
        report = self.grade(ws, task.tests_dir, hidden_tests_dest=task.hidden_tests_dest,
                            test_command=task.test_command, timeout_s=task.timeout_s,
                            config=task_sandbox_config(task, self.sandbox_config),
                            pristine_dir=str(task.repo_dir), editable=task.grading_editable)
        result = report_dict(report)
      self._cache[key] = result
      with self._graded_lock:
        self.graded["single"] += 1
      return result

  def verify(self, task: Task) -> Verification:
    v = Verification(task.id)
    if task.solution_patch is None:
      v.reason = "no solution.patch (no reference state)"
      return v
    try:
      v.reference = self.run_state(task, reference=True)
      v.initial = self.run_state(task, reference=False)
    except Exception as e:  # pylint: disable=broad-except
      v.reason = f"{type(e).__name__}: {e}"
      return v
    v.ok, v.reason = judge_verification(v.initial, v.reference)
    return v

  def verify_many(self, tasks: Sequence[Task], progress: Callable[[int, int], None] | None = None,
                  *, batch: bool = True) -> list[Verification]:
    """Verifies many tasks. With `batch`, tasks whose command is `python -m pytest ...` run
    together through batch_runner (one pytest import, a fork per state); others one by one."""
    if batch and self.evaluator is None:
      # Tasks with an environment of their own (import roots, setup, limits) need their own
      # sandbox settings, which one shared batch session cannot give them.
      batchable = [t for t in tasks if pytest_args(t.test_command) is not None and t.solution_patch is not None
                   and t.environment == TaskEnvironment()]
      if batchable:
        self._run_batch(batchable)  # fills the cache; verify() below then only reads it
    results: list[Verification | None] = [None] * len(tasks)
    with concurrent.futures.ThreadPoolExecutor(self.workers) as pool:
      futures = {pool.submit(self.verify, t): i for i, t in enumerate(tasks)}
      for n, fut in enumerate(concurrent.futures.as_completed(futures), 1):
        results[futures[fut]] = fut.result()
        if progress:
          progress(n, len(tasks))
    return results  # type: ignore[return-value]


  def _state_dir(self, task: Task, dest: pathlib.Path, *, reference: bool) -> str:
    """Writes the state (workspace with hidden tests overlaid) into dest; returns its cache key."""
    ws = dest
    shutil.copytree(task.repo_dir, ws, symlinks=True)
    if reference:
      apply_patch(ws, task.solution_patch or "")
    key = self._state_key(ws, task)
    tests_dest = ws / task.hidden_tests_dest
    if task.hidden_tests_dest not in ("", ".") and tests_dest.exists():
      shutil.rmtree(tests_dest)
    shutil.copytree(task.tests_dir, tests_dest, dirs_exist_ok=True)
    return key

  def _run_batch(self, tasks: Sequence[Task], max_states: int = 320) -> None:
    with tempfile.TemporaryDirectory(prefix="rltask-batch-") as tmp:
      base = pathlib.Path(tmp)
      jobs, keys = [], []
      for task in tasks:
        for reference in (True, False):
          state = base / f"s{len(jobs)}"
          try:
            key = self._state_dir(task, state, reference=reference)
          except Exception:  # pylint: disable=broad-except
            # A patch that does not apply: verify() reports it for this task alone.
            shutil.rmtree(state, ignore_errors=True)
            continue
          if key in self._cache or key in keys:
            shutil.rmtree(state)
            continue
          jobs.append({"dir": state.name, "args": pytest_args(task.test_command), "timeout_s": task.timeout_s})
          keys.append(key)
      for start in range(0, len(jobs), max_states):
        chunk_jobs = jobs[start:start + max_states]
        results = self._run_batch_dir(base, chunk_jobs, [k for k in keys[start:start + max_states]])
        for key, res in zip(keys[start:start + max_states], results):
          self._cache[key] = res
        self.graded["batch"] += len(results)

  def _run_batch_dir(self, base: pathlib.Path, jobs: list[dict[str, Any]], keys: list[str]) -> list[dict[str, Any]]:
    del keys
    runner = pathlib.Path(__file__).with_name("batch_runner.py")
    # A fresh folder per chunk: only this chunk's states are copied into the sandbox.
    chunk = pathlib.Path(tempfile.mkdtemp(prefix="chunk-", dir=base))
    for job in jobs:
      shutil.move(str(base / job["dir"]), chunk / job["dir"])
    shutil.copy(runner, chunk / "batch_runner.py")
    (chunk / "jobs.json").write_text(json.dumps(jobs))
    budget = 60 + sum(j["timeout_s"] for j in jobs) / self.workers
    cmd = f"python batch_runner.py jobs.json results.json --workers {self.workers}"
    if self.grader == "sandbox":
      from sandbox import open_session  # pylint: disable=import-outside-toplevel
      with open_session(chunk, self.sandbox_config) as session:
        r = session.exec(cmd, timeout=budget)
        try:
          text = session.read_file("results.json")
        except Exception as e:  # pylint: disable=broad-except
          raise RuntimeError(f"batch run in the sandbox left no results (exit {r.exit_code}): "
                             f"{(r.stderr or r.stdout)[-800:]}") from e
    else:
      env = dict(os.environ)
      env["PATH"] = os.path.dirname(runtime_python()) + os.pathsep + env.get("PATH", "")
      env["PYTHONDONTWRITEBYTECODE"] = "1"
      env.pop("PYTHONPATH", None)
      proc = subprocess.run(["bash", "-c", cmd], cwd=chunk, env=env, capture_output=True, text=True,
                            timeout=budget, check=False)
      if not (chunk / "results.json").is_file():
        raise RuntimeError(f"batch run left no results (exit {proc.returncode}): {proc.stderr[-800:]}")
      text = (chunk / "results.json").read_text()
    shutil.rmtree(chunk, ignore_errors=True)
    return json.loads(text)


def pytest_args(test_command: str) -> list[str] | None:
  """The pytest arguments of a `python -m pytest ...` command; None for other commands."""
  try:
    tokens = shlex.split(test_command)
  except ValueError:
    return None
  if len(tokens) >= 3 and tokens[0] in ("python", "python3") and tokens[1:3] == ["-m", "pytest"]:
    if any(t in (";", "&&", "||", "|") for t in tokens):
      return None
    return tokens[3:]
  return None


def judge_verification(initial: dict[str, Any], reference: dict[str, Any]) -> tuple[bool, str]:
  """A task is valid when the reference passes every test and the initial state does not.

  States graded through an evaluator also carry `reward`, `success` and `rules`: the
  reference must then succeed (full reward, no anti-hack flag) and the initial state must not.
  """
  if reference.get("flagged"):
    return False, f"reference flagged by anti-hack rules {', '.join(reference.get('rules') or []) or '(unnamed)'}"
  if reference.get("timed_out"):
    return False, "reference state timed out"
  if reference.get("collection_errors"):
    return False, f"hidden tests cannot be collected on the reference: {reference['collection_errors'][:2]}"
  if not reference.get("all_passed"):
    if reference.get("skipped") and not reference.get("failed") and not reference.get("errors"):
      return False, (f"reference state skips {reference['skipped']} test(s) (e.g. cases marked too slow), "
                     "so it can never pass every test")
    return False, (f"reference state fails ({reference.get('passed', 0)} passed, "
                   f"{reference.get('failed', 0)} failed, {reference.get('errors', 0)} errors)")
  if "success" in reference and not reference["success"]:
    return False, f"reference does not succeed in grading (reward {reference.get('reward')})"
  if initial.get("all_passed") or initial.get("success"):
    return False, "initial state already passes every hidden test"
  if initial.get("timed_out"):
    return True, "initial state times out (counts as failing)"
  return True, ""
