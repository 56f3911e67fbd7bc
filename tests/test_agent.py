"""Agent environment tests: tool-call parsing, observation truncation and the tools themselves."""

from __future__ import annotations

import json
import pathlib
import types

import pytest

from rl.env import tools as tools_lib
from rl.env.tools import parse_action, truncate_observation


def call(name, **arguments):
  return f'<tool_call>{json.dumps({"name": name, "arguments": arguments})}</tool_call>'


@pytest.mark.parametrize("text,atype,ainput", [
    (call("read_file", path="a.py"), "read_file", {"path": "a.py"}),
    ("Let me look.\n" + call("list_files"), "list_files", {"path": "."}),
    (call("edit_file", path="a.py", old="x", new="y"), "edit_file", {"path": "a.py", "old": "x", "new": "y"}),
    (call("run", command="pytest -q"), "run", {"command": "pytest -q"}),
    (call("submit"), "submit", {}),
    ('<tool_call>{"name": "read_file", "arguments": "{\\"path\\": \\"b.py\\"}"}</tool_call>', "read_file",
     {"path": "b.py"}),
    (call("read_file", path="a.py", extra="ignored"), "read_file", {"path": "a.py"}),
])
def test_parse_valid_calls(text, atype, ainput):
  action = parse_action(text)
  assert action.error is None and action.type == atype and action.input == ainput


def test_parse_keeps_the_thought_and_notes_extra_calls():
  action = parse_action("I will read it.\n" + call("read_file", path="a.py") + call("submit"))
  assert action.thought == "I will read it." and action.type == "read_file"
  assert "only the first tool call" in action.note


@pytest.mark.parametrize("text,message", [
    ("just text", "no tool call"),
    ("<tool_call>{\"name\": \"submit\"", "not closed"),
    ("<tool_call>{bad json}</tool_call>", "not valid JSON"),
    ("<tool_call>[1, 2]</tool_call>", "JSON object"),
    (call("delete_everything"), "unknown tool"),
    (call("write_file", path="a.py"), "missing the argument(s) content"),
    (call("edit_file", path="a.py", old="x"), "missing the argument(s) new"),
    (call("read_file", path=7), "must be a string"),
    (call("write_file", path="a.bin", content="\x00\x01"), "binary"),
    (call("write_file", path="a.py", content="x" * (tools_lib.MAX_ARGUMENT_CHARS + 1)), "too large"),
    ('<tool_call>{"name": "run", "arguments": [1]}</tool_call>', "must be a JSON object"),
    ('<tool_call>{"name": "read_file", "arguments": "{oops"}</tool_call>', "not valid JSON"),
])
def test_parse_malformed_calls_give_clear_errors(text, message):
  action = parse_action(text)
  assert action.type is None and message in action.error


def test_parse_single_turn_answer():
  action = parse_action("Here:\n```python\ndef f():\n  return 1\n```\ndone", mode="single_turn")
  assert action.type == "answer" and action.input["code"] == "def f():\n  return 1\n"
  assert parse_action("no code", mode="single_turn").error
  with pytest.raises(ValueError, match="unknown agent mode"):
    parse_action("x", mode="chat")
  with pytest.raises(TypeError):
    parse_action(b"bytes")


def test_truncate_observation_keeps_head_and_tail():
  text = "HEAD" + "x" * 5000 + "TAIL"
  out = truncate_observation(text, 300)
  assert out.startswith("HEAD") and out.endswith("TAIL") and len(out) <= 300
  assert f"of {len(text)} characters cut" in out
  assert truncate_observation("short", 300) == "short"
  with pytest.raises(ValueError):
    truncate_observation("x", 0)


@pytest.fixture
def session(tmp_path):
  repo = tmp_path / "repo"
  (repo / "pkg").mkdir(parents=True)
  (repo / "pkg" / "m.py").write_text("a = 1\nb = 1\nc = 2\n")
  s = tools_lib.UnsandboxedSession(repo)
  yield s
  s.close()


def run(executor, text):
  return executor.execute(parse_action(text))


def test_tools_on_a_session(session):
  ex = tools_lib.ToolExecutor(session, command_timeout_s=5)
  assert "pkg/m.py" in run(ex, call("list_files")).observation
  assert run(ex, call("read_file", path="pkg/m.py")).observation.startswith("a = 1")
  out = run(ex, call("edit_file", path="pkg/m.py", old="c = 2", new="c = 3"))
  assert out.ok and session.read_file("pkg/m.py").endswith("c = 3\n")
  out = run(ex, call("edit_file", path="pkg/m.py", old="= 1", new="= 5"))
  assert not out.ok and "occurs 2 times" in out.observation
  out = run(ex, call("edit_file", path="pkg/m.py", old="zzz", new="y"))
  assert not out.ok and "not found" in out.observation
  out = run(ex, call("write_file", path="new/x.py", content="print('hi')\n"))
  assert out.ok and "12 bytes" in out.observation
  out = run(ex, call("run", command="python -S new/x.py; echo err >&2; exit 3"))
  assert out.exit_code == 3 and "exit code: 3" in out.observation and "hi" in out.observation
  assert "stderr:\nerr" in out.observation
  assert run(ex, call("submit")).submitted


def test_file_tools_keep_bytes_they_do_not_change(session, tmp_path):
  """CRLF survives a read/edit round trip; a latin-1 file is never rewritten by edit_file."""
  ex = tools_lib.ToolExecutor(session, command_timeout_s=5)
  session.write_file("crlf.py", b"a = 1\r\nb = 2\r\n")
  assert run(ex, call("edit_file", path="crlf.py", old="b = 2", new="b = 3")).ok
  session.write_file("copy.py", session.read_file("crlf.py"))
  for name in ("crlf.py", "copy.py"):
    assert (session.root / name).read_bytes() == b"a = 1\r\nb = 3\r\n"
  session.write_file("old.txt", "caf\xe9 = 1\n".encode("latin-1"))
  out = run(ex, call("edit_file", path="old.txt", old="= 1", new="= 2"))
  assert not out.ok and "not UTF-8" in out.observation
  assert (session.root / "old.txt").read_bytes() == "caf\xe9 = 1\n".encode("latin-1")


def test_tool_errors_are_observations_not_crashes(session):
  ex = tools_lib.ToolExecutor(session, command_timeout_s=1)
  assert "failed" in run(ex, call("read_file", path="nope.py")).observation
  assert "failed" in run(ex, call("read_file", path="../../etc/passwd")).observation
  assert "failed" in run(ex, call("read_file", path="pkg")).observation
  out = run(ex, call("run", command="sleep 5"))
  assert "timed out after 1s" in out.observation


def test_session_failure_is_a_sandbox_crash(session):
  class Dead:
    def exec(self, command, timeout=None):
      raise RuntimeError("container died")

  ex = tools_lib.ToolExecutor(Dead(), command_timeout_s=1)
  with pytest.raises(tools_lib.SandboxCrash, match="container died"):
    run(ex, call("run", command="ls"))


def test_renderer_observation_tokens_continue_the_template():
  from rl.tokenizer import load_tokenizer
  r = tools_lib.ChatRenderer(load_tokenizer(), tool_prompt="compact")
  messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
  prompt = r.prompt_ids(messages)
  messages.append({"role": "assistant", "content": call("submit")})
  action = r.encode(call("submit")) + r.end_of_turn_ids
  obs = r.observation_ids(messages, "ok")
  full = r.render(messages + [{"role": "tool", "content": "ok"}], generation_prompt=True)
  assert r.decode(prompt + action + obs) == full
  with pytest.raises(ValueError, match="tool_prompt"):
    tools_lib.ChatRenderer(load_tokenizer(), tool_prompt="fancy")


@pytest.mark.parametrize("line, want", [
    ("1 failed, 2 passed in 0.03s", "1 failed, 2 passed"),
    ("============ 3 passed in 0.01s ============", "============ 3 passed ============"),
    ("no tests ran in 0.01s", "no tests ran"),
    ("== 1 failed, 1 warning in 75.30s (0:01:15) ==", "== 1 failed, 1 warning =="),
    ("E   assert run(2) == 3 in 0.5s", "E   assert run(2) == 3 in 0.5s"),  # not a summary line
    ("x passed in 0.3s, then more", "x passed in 0.3s, then more"),  # not at the line's end
])
def test_run_observations_leave_out_pytest_durations(line, want):
  """A `run` observation does not carry pytest's wall-clock time, so a run's tokens do not
  depend on the machine's load; everything else is kept."""
  result = types.SimpleNamespace(exit_code=1, stdout=f"F.\n{line}\n", stderr=line)
  got = tools_lib.format_exec_result(result, timeout_s=10.0)
  assert got == f"exit code: 1\nstdout:\nF.\n{want}\nstderr:\n{want}"


def test_syntax_checks_of_agent_code_print_no_compiler_warnings(capfd):
  """The compiler's SyntaxWarnings about the agent's code must not reach the trainer's output."""
  import warnings

  from rl.env.tools import python_compiles
  from rl.outcome.rewards import compile_ok

  with warnings.catch_warnings():
    warnings.simplefilter("default")  # as a plain `python train.py` process shows them
    assert python_compiles("x = 1[0]\n", "lists.py")
    assert compile_ok({"lists.py": "y = (1)(2)\n"})
    assert not python_compiles("def f(:\n", "broken.py")
  assert "Warning" not in capfd.readouterr().err
