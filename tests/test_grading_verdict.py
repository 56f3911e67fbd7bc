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
