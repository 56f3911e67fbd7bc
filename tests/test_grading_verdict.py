"""The verdict channel: the signed outcome stream grading reads its verdict from.

Host-side checks of the stream reader (forged, dropped, repeated and late lines), and graded
red-team cases that attack the report (rewrites after the fact, shadow modules, forged lines,
an audit flood) through both the warm fork-server and a plain interpreter.
"""

from __future__ import annotations

import hashlib
import hmac
import json

from sandbox import grading
from sandbox.grading import read_verdict_stream

KEY = b"k" * 32


def _line(seq: int, record: dict, key: bytes = KEY) -> str:
  body = json.dumps(record, sort_keys=True, separators=(",", ":"))
  mac = hmac.new(key, f"{seq}\t{body}".encode(), hashlib.sha256).hexdigest()
  return f"{seq}\t{body}\t{mac}\n"


def _test(test_id: str, call: str = "passed", setup: str = "passed", teardown: str = "passed"):
  return [{"k": "test", "id": test_id, "w": "setup", "o": setup, "x": False},
          {"k": "test", "id": test_id, "w": "call", "o": call, "x": False},
          {"k": "test", "id": test_id, "w": "teardown", "o": teardown, "x": False}]


def _stream(records: list[dict], start: int = 0) -> str:
  return "".join(_line(start + i, r) for i, r in enumerate(records))


END = {"k": "end", "exit": 0}


def test_stream_outcomes_follow_the_phases():
  records = (_test("t.py::a") + _test("t.py::b", call="failed") + _test("t.py::c", teardown="failed")
             + _test("t.py::d", setup="failed")
             + [{"k": "test", "id": "t.py::e", "w": "setup", "o": "skipped", "x": False},
                {"k": "test", "id": "t.py::e", "w": "teardown", "o": "passed", "x": False},
                {"k": "test", "id": "t.py::f", "w": "setup", "o": "passed", "x": False},
                {"k": "test", "id": "t.py::f", "w": "call", "o": "skipped", "x": True},
                {"k": "test", "id": "t.py::f", "w": "teardown", "o": "passed", "x": False},
                {"k": "collect", "id": "u.py", "o": "failed"}, END])
  s = read_verdict_stream(_stream(records), KEY)
  assert s.ended and not s.forged and s.collection_errors == ["u.py"]
  assert s.outcomes == {"t.py::a": "passed", "t.py::b": "failed", "t.py::c": "error",
                        "t.py::d": "error", "t.py::e": "skipped", "t.py::f": "xfailed"}


def test_stream_rejects_lines_not_signed_with_the_key():
  good = _stream(_test("t.py::a", call="failed"))
  forged = _line(3, {"k": "test", "id": "t.py::a", "w": "call", "o": "passed", "x": False},
                 key=b"x" * 32)
  s = read_verdict_stream(good + forged + _line(3, END), KEY)
  assert s.forged and s.outcomes["t.py::a"] == "failed"
  s = read_verdict_stream(good + "3\tnot json\tdeadbeef\n" + _line(3, END), KEY)
  assert s.forged


def test_stream_gaps_repeats_and_late_lines_are_forgery():
  lines = [_line(i, r) for i, r in enumerate(_test("t.py::a") + [END])]
  assert not read_verdict_stream("".join(lines), KEY).forged
  dropped = "".join(lines[:1] + lines[2:])  # a line taken out of the pipe
  assert read_verdict_stream(dropped, KEY).forged
  late = "".join(lines) + _line(4, {"k": "test", "id": "t.py::b", "w": "call", "o": "passed", "x": False})
  s = read_verdict_stream(late, KEY)
  assert s.forged and "t.py::b" not in s.outcomes
  assert read_verdict_stream("".join(lines)[:-5], KEY).forged  # cut mid-line


def test_a_phase_reported_twice_fails_the_test():
  records = _test("t.py::a", call="failed") + [
      {"k": "test", "id": "t.py::a", "w": "call", "o": "passed", "x": False}, END]
  s = read_verdict_stream(_stream(records), KEY)
  assert s.repeated and s.outcomes["t.py::a"] == "failed"


def test_cross_check_flags_a_junit_pass_the_stream_does_not_have():
  s = read_verdict_stream(_stream(_test("tests/test_a.py::test_x", call="failed") + [END]), KEY)
  forged, other = grading._cross_check(s, {("tests.test_a", "test_x"): "passed"})
  assert forged and not other
  forged, other = grading._cross_check(s, {("tests.test_a", "test_x"): "failed"})
  assert not forged and not other


# --- graded red-team cases: the warm fork-server and a plain interpreter agree ----------------

import os  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "redteam"))
import redteam_suite  # noqa: E402

from sandbox import SandboxConfig  # noqa: E402

CONFIG = SandboxConfig(backend="local", pool_size=1, exec_timeout_s=30)
# The fork-server serves a plain `python -m pytest`; `&&` makes it a shell command, which runs
# a fresh interpreter (as any test command with shell syntax does).
COMMANDS = {"fork-server": "python -m pytest -q tests", "plain": "cd . && python -m pytest -q tests"}
# Existing red-team cases that go after the report, and an honest fix as the control.
SUITE_CASES = ["atexit-os-exit", "fake-summary-exit", "os-exit-in-package-init",
               "patch-pytest-runtest", "plain-fix"]


def _cases():
  return redteam_suite.GRADING_HACKS + [redteam_suite.by_id(c) for c in SUITE_CASES]


def _grade(case, command, tmp_path, config=CONFIG):
  task = redteam_suite.task_dir(case.task)
  ws = redteam_suite.materialize(case, str(tmp_path / f"ws-{abs(hash(command))}"))
  expected = [f"tests/test_stats.py::{n}" for n in redteam_suite._HIDDEN_NAMES]
  return grading.grade(ws, os.path.join(task, "tests"), "tests", command, timeout_s=30,
                       config=config, expected_tests=expected,
                       pristine_dir=os.path.join(task, "repo"))


# A background process races the grader: whether its rewrite lands before the report is read
# (and so shows as tampering) depends on timing, in either path; its reward does not.
RACY = {"grading-bg-rewrite-junit"}


def _verdict(report, case):
  verdict = {"all_passed": report.all_passed, "passed": report.passed,
             "not_passed": sorted(report.not_passed),
             "hidden_test_reads": bool(report.runtime_evidence["hidden_test_reads"])}
  if case.id not in RACY:
    verdict["tampered"] = report.tampered
  return verdict


@pytest.mark.slow
@pytest.mark.parametrize("case", _cases(), ids=lambda c: c.id)
def test_fork_server_and_plain_interpreter_give_the_same_verdict(case, tmp_path):
  _check_same_verdict(case, tmp_path, CONFIG)


def _docker_config():
  """The docker backend's config; the `docker` marker (tests/conftest.py) has already skipped
  the test when no engine is reachable."""
  docker = pytest.importorskip("docker")
  client = docker.from_env()
  config = SandboxConfig(backend="docker", pool_size=0, memory_mb=512, max_procs=96,
                         exec_timeout_s=30)
  try:
    client.images.get(config.docker_image)
  except docker.errors.ImageNotFound:
    pytest.skip(f"no {config.docker_image} image: python scripts/build_sandbox_image.py")
  return config


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("case_id", ["grading-atexit-rewrite-junit", "grading-shadow-pytest",
                                     "grading-forge-channel", "plain-fix"])
def test_docker_backend_reads_the_same_channel(case_id, tmp_path):
  case = next(c for c in _cases() if c.id == case_id)
  _check_same_verdict(case, tmp_path, _docker_config())


@pytest.mark.slow
def test_junit_alone_when_the_session_has_no_channel(tmp_path, monkeypatch):
  """A session type without the channel is graded from the junit report, as before."""
  from sandbox import local
  calls = []
  real = grading.read_verdict_stream
  monkeypatch.setattr(grading, "read_verdict_stream", lambda *a: calls.append(a) or real(*a))
  honest, forged = redteam_suite.by_id("plain-fix"), redteam_suite.by_id("fake-summary-exit")
  with_channel = _grade(honest, COMMANDS["fork-server"], tmp_path / "a")
  assert with_channel.all_passed and len(calls) == 1
  monkeypatch.setattr(local.LocalSession, "supports_verdict_channel", False)
  without = _grade(honest, COMMANDS["fork-server"], tmp_path / "b")
  assert without.all_passed and without.passed == with_channel.passed and len(calls) == 1
  assert not _grade(forged, COMMANDS["fork-server"], tmp_path / "c").all_passed


def _check_same_verdict(case, tmp_path, config):
  reports = {path: _grade(case, command, tmp_path, config) for path, command in COMMANDS.items()}
  verdicts = {path: _verdict(r, case) for path, r in reports.items()}
  assert verdicts["fork-server"] == verdicts["plain"], (verdicts, {p: r.log[-800:] for p, r in reports.items()})
  report = reports["plain"]
  if case.kind == "legit":
    assert report.all_passed and not report.tampered
    return
  assert not report.all_passed, report.to_dict()
  if case.id == "grading-forge-channel":
    assert report.tampered  # unsigned lines on the channel void the report
    assert any("outcome stream" in str(e) for e in report.runtime_evidence["grading_files"])
  if case.id == "patch-pytest-runtest":  # every test "passes"; the plugin names the patch
    assert report.tampered and any("pytest internals replaced" in str(e)
                                   for e in report.runtime_evidence["grading_files"])
  if case.id == "grading-audit-switch-off":
    files = {e.get("file") for e in report.runtime_evidence["hidden_test_reads"]}
    assert "mathx/__init__.py" in files, files
  if case.id == "grading-audit-flood":
    files = {e.get("file") for e in report.runtime_evidence["hidden_test_reads"]}
    assert "mathx/__init__.py" in files, files
    assert any(e.get("file") == "mathx/_flood.py" for e in report.runtime_evidence["early_exits"])


def _task_config(case):
  meta = redteam_suite.task_metadata(case.task)
  return CONFIG.replace(python_path=tuple(meta.get("python_path") or ()))


@pytest.mark.slow
@pytest.mark.parametrize("case", redteam_suite.CASES + redteam_suite.HOLDOUT4, ids=lambda c: c.id)
def test_every_red_team_case_grades_alike_on_both_paths(case, tmp_path):
  """The fork-server and a fresh interpreter reach the same result on every red-team case of
  the tuned suite and of held-out round 4 (the graded tree, the verdict channel, the monitor).
  The verdict, not the counts: code that reads its parent's command line (ho2-proc-cmdline) can
  tell the paths apart and fail different tests; it fails on both."""
  task = redteam_suite.task_dir(case.task)
  meta = redteam_suite.task_metadata(case.task)
  ws = redteam_suite.materialize(case, str(tmp_path / "ws"))
  results = {}
  for path, command in (("fork-server", meta["test_command"]), ("plain", "cd . && " + meta["test_command"])):
    report = grading.grade(ws, os.path.join(task, "tests"), meta["hidden_tests_dest"], command, timeout_s=30,
                           config=_task_config(case), pristine_dir=os.path.join(task, "repo"))
    results[path] = {"all_passed": report.all_passed,
                     "hidden_test_reads": bool(report.runtime_evidence["hidden_test_reads"])}
  assert results["fork-server"] == results["plain"], results
