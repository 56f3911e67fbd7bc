"""The agent environment: tools, tool-call parsing, observation truncation and chat rendering.

The policy writes Hermes/Qwen `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` text;
`parse_action` turns it into an `Action` (or an error the agent sees), `ToolExecutor` runs it in a
sandbox session, and `ChatRenderer` turns the conversation into exactly the tokens the model sees.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Mapping, Sequence

from sandbox.runtime_env import runtime_python

# One tool per entry: the JSON schema goes to the chat template (system prompt) and the
# required argument names drive the validation in `parse_action`.
TOOL_SPECS: tuple[dict[str, Any], ...] = (
    {"type": "function", "function": {
        "name": "list_files", "description": "List the files under a directory of the workspace.",
        "parameters": {"type": "object", "properties": {
            "path": {"type": "string", "description": "directory, relative to the workspace root"}},
            "required": []}}},
    {"type": "function", "function": {
        "name": "read_file", "description": "Read a text file of the workspace.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                       "required": ["path"]}}},
    {"type": "function", "function": {
        "name": "write_file", "description": "Create or overwrite a file with the given content.",
        "parameters": {"type": "object", "properties": {
            "path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"]}}},
    {"type": "function", "function": {
        "name": "edit_file",
        "description": "Replace the exact string `old` (which must occur exactly once) by `new`.",
        "parameters": {"type": "object", "properties": {
            "path": {"type": "string"}, "old": {"type": "string"}, "new": {"type": "string"}},
            "required": ["path", "old", "new"]}}},
    {"type": "function", "function": {
        "name": "run", "description": "Run a shell command in the workspace (with a timeout).",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}},
                       "required": ["command"]}}},
    {"type": "function", "function": {
        "name": "submit", "description": "Submit the workspace for grading; ends the episode.",
        "parameters": {"type": "object", "properties": {}, "required": []}}},
)
TOOL_NAMES = tuple(spec["function"]["name"] for spec in TOOL_SPECS)
REQUIRED_ARGS = {spec["function"]["name"]: tuple(spec["function"]["parameters"]["required"])
                 for spec in TOOL_SPECS}
ALL_ARGS = {spec["function"]["name"]: tuple(spec["function"]["parameters"]["properties"])
            for spec in TOOL_SPECS}
ACTION_TYPES = TOOL_NAMES + ("answer",)

TOOL_CALL_START = "<tool_call>"
TOOL_CALL_END = "</tool_call>"
# Arguments beyond this size are refused: a runaway generation must not fill the sandbox disk.
MAX_ARGUMENT_CHARS = 200_000

SYSTEM_PROMPT_MULTI_TURN = (
    "You are a coding agent working in a repository. Use the tools to inspect files, edit code "
    "and run commands. Make exactly one tool call per message. Call submit when the task is "
    "solved.")
# The compact tool description: the full JSON schemas cost ~600 tokens of the tiny tokenizer,
# a third of the default trajectory budget; real checkpoints are trained on the schema form.
COMPACT_TOOLS_PROMPT = (
    "\n\nTools: list_files(path), read_file(path), write_file(path, content), "
    "edit_file(path, old, new) replaces the exact unique string old by new, run(command), submit().\n"
    'Call one as <tool_call>{"name": "read_file", "arguments": {"path": "a.py"}}</tool_call>')
TOOL_PROMPTS = ("schema", "compact")
SYSTEM_PROMPT_SINGLE_TURN = (
    "You are a coding assistant. Answer with the complete solution file in one ```python code "
    "block.")

_CODE_BLOCK = re.compile(r"```([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```", re.DOTALL)


class SandboxCrash(RuntimeError):
  """The sandbox session itself failed (not the agent's command): the episode ends with `error`."""


@dataclasses.dataclass
class Action:
  """One parsed policy message.

  `type` is a tool name or `answer`; `error` is set (and `type` is None) when the message holds
  no usable call; the agent then sees `error` as its observation and the episode continues.
  """
  type: str | None
  input: dict[str, Any]
  thought: str
  raw: str
  error: str | None = None
  note: str = ""  # appended to the observation (e.g. "extra tool calls ignored")


def parse_action(text: str, *, mode: str = "multi_turn") -> Action:
  """Parses a policy message into an `Action`; never raises on bad model output.

  Args:
    text: the decoded assistant message (without the end-of-turn token).
    mode: "multi_turn" (tool calls) or "single_turn" (a fenced code block is the answer).
  """
  if not isinstance(text, str):
    raise TypeError(f"parse_action expects the decoded message as str, got {type(text).__name__}")
  if mode == "single_turn":
    return _parse_answer(text)
  if mode != "multi_turn":
    raise ValueError(f"unknown agent mode {mode!r}; expected 'multi_turn' or 'single_turn'")
  start = text.find(TOOL_CALL_START)
  if start < 0:
    return Action(None, {}, text.strip(), text, error=(
        "Error: no tool call found. Reply with exactly one "
        '<tool_call>{"name": ..., "arguments": {...}}</tool_call>; '
        f"tools: {', '.join(TOOL_NAMES)}. Call submit when you are done."))
  end = text.find(TOOL_CALL_END, start)
  thought = text[:start].strip()
  if end < 0:
    return Action(None, {}, thought, text,
                  error="Error: the tool call is not closed with </tool_call> (was the message cut?).")
  body = text[start + len(TOOL_CALL_START):end].strip()
  rest = text[end + len(TOOL_CALL_END):]
  note = ""
  if TOOL_CALL_START in rest:
    note = "Note: only the first tool call of a message is executed; the others were ignored."
  try:
    call = json.loads(body)
  except json.JSONDecodeError as e:
    return Action(None, {}, thought, text, error=f"Error: the tool call is not valid JSON ({e}).")
  if not isinstance(call, dict) or not isinstance(call.get("name"), str):
    return Action(None, {}, thought, text, error=(
        'Error: a tool call must be a JSON object {"name": <tool name>, "arguments": {...}}.'))
  name = call["name"]
  if name not in TOOL_NAMES:
    return Action(None, {}, thought, text, error=(
        f"Error: unknown tool {name[:80]!r}; available tools: {', '.join(TOOL_NAMES)}."))
  arguments = call.get("arguments", {})
  if isinstance(arguments, str):  # some models emit the arguments as a JSON string
    try:
      arguments = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError as e:
      return Action(None, {}, thought, text,
                    error=f"Error: the arguments of {name} are not valid JSON ({e}).")
  if arguments is None:
    arguments = {}
  if not isinstance(arguments, dict):
    return Action(None, {}, thought, text,
                  error=f"Error: the arguments of {name} must be a JSON object.")
  missing = [a for a in REQUIRED_ARGS[name] if a not in arguments]
  if missing:
    return Action(None, {}, thought, text, error=(
        f"Error: {name} is missing the argument(s) {', '.join(missing)}; it takes "
        f"{', '.join(ALL_ARGS[name]) or 'no arguments'}."))
  clean: dict[str, Any] = {}
  for key in ALL_ARGS[name]:
    if key not in arguments:
      continue
    value = arguments[key]
    if not isinstance(value, str):
      return Action(None, {}, thought, text, error=(
          f"Error: argument {key!r} of {name} must be a string, got {type(value).__name__}."))
    problem = _argument_problem(value)
    if problem:
      return Action(None, {}, thought, text, error=f"Error: argument {key!r} of {name} {problem}.")
    clean[key] = value
  if name == "list_files":
    clean.setdefault("path", ".")
  return Action(name, clean, thought, text, note=note)


def _argument_problem(value: str) -> str:
  if len(value) > MAX_ARGUMENT_CHARS:
    return f"is too large ({len(value)} characters; the limit is {MAX_ARGUMENT_CHARS})"
  if "\x00" in value:
    return "contains binary data (NUL bytes); only text is supported"
  try:
    value.encode("utf-8")
  except UnicodeEncodeError:
    return "is not valid UTF-8 text"
  return ""


def _parse_answer(text: str) -> Action:
  blocks = _CODE_BLOCK.findall(text)
  if not blocks:
    return Action(None, {}, text.strip(), text,
                  error="Error: no ```python code block found in the answer.")
  python_blocks = [code for lang, code in blocks if lang.lower() in ("python", "py", "python3")]
  code = (python_blocks or [code for _, code in blocks])[0]
  problem = _argument_problem(code)
  if problem:
    return Action(None, {}, "", text, error=f"Error: the code block {problem}.")
  thought = _CODE_BLOCK.sub("", text).strip()
  return Action("answer", {"code": code}, thought, text)


def truncate_observation(text: str, max_chars: int) -> str:
  """Keeps the head and the tail of `text` and says how much was cut from the middle."""
  if max_chars <= 0:
    raise ValueError(f"observation_max_chars must be positive, got {max_chars}")
  if len(text) <= max_chars:
    return text
  marker_budget = 60
  keep = max(max_chars - marker_budget, 2)
  head = keep * 2 // 3  # the head usually names the error, the tail says where it ended
  tail = keep - head
  cut = len(text) - head - tail
  return f"{text[:head]}\n[... {cut} of {len(text)} characters cut ...]\n{text[len(text) - tail:]}"


# pytest's summary line ends with its wall-clock duration ("2 failed, 3 passed in 0.04s",
# "no tests ran in 0.01s", "... in 75.30s (0:01:15)"). The observation leaves it out: the
# model gains nothing from it, and with it a run's tokens, and so its samples and numbers,
# would depend on the machine's load.
_PYTEST_DURATION = re.compile(
    r"(\b(?:passed|failed|errors?|skipped|xfailed|xpassed|warnings?|deselected|rerun|no tests ran)"
    r"\b[^\n]*?) in \d+(?:\.\d+)?s(?: \(\d+:\d\d:\d\d\))?(?=\s*=*\s*$)", re.MULTILINE)


def strip_test_durations(text: str) -> str:
  """`text` with the duration cut from pytest summary lines (see _PYTEST_DURATION)."""
  return _PYTEST_DURATION.sub(r"\1", text)


def format_exec_result(result: Any, timeout_s: float) -> str:
  """Renders a sandbox ExecResult as the observation of a `run` call (pytest's summary
  durations cut: strip_test_durations)."""
  parts = [f"exit code: {result.exit_code}"]
  if getattr(result, "timed_out", False):
    parts.append(f"(the command timed out after {timeout_s:g}s and was killed)")
  if getattr(result, "oom_killed", False):
    parts.append("(the command ran out of memory and was killed)")
  if result.stdout:
    parts.append("stdout:\n" + strip_test_durations(result.stdout.rstrip("\n"))
                 + ("\n[stdout truncated]" if getattr(result, "stdout_truncated", False) else ""))
  if result.stderr:
    parts.append("stderr:\n" + strip_test_durations(result.stderr.rstrip("\n"))
                 + ("\n[stderr truncated]" if getattr(result, "stderr_truncated", False) else ""))
  return "\n".join(parts)


@dataclasses.dataclass
class ToolOutcome:
  """The result of executing one action."""
  observation: str  # full text, before truncation
  ok: bool  # False when the tool reported an error to the agent
  submitted: bool = False
  exec_time_s: float = 0.0
  exit_code: int | None = None
  # For process rewards: the Python file this action wrote and whether it compiles.
  written_path: str | None = None
  compiles: bool | None = None


def _is_path_error(e: BaseException) -> bool:
  # The sandbox's own path errors (escapes, missing files) are the agent's problem, not a crash.
  return isinstance(e, (FileNotFoundError, IsADirectoryError, NotADirectoryError,
                        PermissionError, UnicodeDecodeError, ValueError)) or \
      type(e).__name__ in ("SandboxPathError", "SandboxFileError")


class ToolExecutor:
  """Executes parsed actions in one sandbox session.

  Errors caused by the action (missing file, path escape, non-unique edit) become error
  observations; failures of the session itself raise `SandboxCrash`.
  """

  def __init__(self, session: Any, *, command_timeout_s: float, solution_file: str | None = None):
    self.session = session
    self.command_timeout_s = float(command_timeout_s)
    self.solution_file = solution_file

  def execute(self, action: Action) -> ToolOutcome:
    if action.type is None:
      return ToolOutcome(action.error or "Error: invalid action.", ok=False)
    handler = getattr(self, f"_do_{action.type}", None)
    if handler is None:
      raise ValueError(f"no handler for action type {action.type!r}")
    start = time.perf_counter()
    try:
      outcome = handler(**action.input)
    except SandboxCrash:
      raise
    except Exception as e:  # pylint: disable=broad-except
      if _is_path_error(e):
        outcome = ToolOutcome(f"Error: {action.type} failed: {_short(e)}", ok=False)
      else:
        raise SandboxCrash(f"{action.type} crashed the sandbox session: {type(e).__name__}: {e}") from e
    outcome.exec_time_s = time.perf_counter() - start
    if action.note:
      outcome.observation = f"{outcome.observation}\n{action.note}"
    return outcome

  def _do_list_files(self, path: str = ".") -> ToolOutcome:
    files = self.session.list_files(path or ".")
    if not files:
      return ToolOutcome(f"(no files under {path})", ok=True)
    return ToolOutcome("\n".join(sorted(files)), ok=True)

  def _do_read_file(self, path: str) -> ToolOutcome:
    return ToolOutcome(self.session.read_file(path), ok=True)

  def _do_write_file(self, path: str, content: str) -> ToolOutcome:
    self.session.write_file(path, content)
    compiles = _compiles(path, content)
    # Same wording as rl.antihack's faked writes, so a faked write is indistinguishable.
    return ToolOutcome(f"Wrote {len(content.encode('utf-8'))} bytes to {path}.", ok=True,
                       written_path=path, compiles=compiles)

  def _do_edit_file(self, path: str, old: str, new: str) -> ToolOutcome:
    if not old:
      return ToolOutcome("Error: edit_file needs a non-empty `old` string.", ok=False)
    text = self.session.read_file(path)
    if "\ufffd" in text and "\ufffd" not in old:
      # read_file shows undecodable bytes as U+FFFD; writing that text back would replace
      # every such byte of the file (latin-1 text, binary data), not only the edited span.
      return ToolOutcome(f"Error: {path} is not UTF-8 text, so edit_file cannot change it without "
                         "rewriting its other bytes; nothing was changed. Use write_file for the "
                         "whole file, or run a command.", ok=False)
    count = text.count(old)
    if count == 0:
      return ToolOutcome(f"Error: the `old` string was not found in {path}; nothing was changed. "
                         "Read the file and copy the exact text, including whitespace.", ok=False)
    if count > 1:
      return ToolOutcome(f"Error: the `old` string occurs {count} times in {path}; nothing was "
                         "changed. Include more surrounding lines so that it is unique.", ok=False)
    new_text = text.replace(old, new, 1)
    self.session.write_file(path, new_text)
    return ToolOutcome(f"Edited {path}: replaced 1 occurrence.", ok=True, written_path=path,
                       compiles=_compiles(path, new_text))

  def _do_run(self, command: str) -> ToolOutcome:
    if not command.strip():
      return ToolOutcome("Error: run needs a non-empty command.", ok=False)
    result = self.session.exec(command, timeout=self.command_timeout_s)
    return ToolOutcome(format_exec_result(result, self.command_timeout_s),
                       ok=result.exit_code == 0, exit_code=result.exit_code)

  def _do_submit(self) -> ToolOutcome:
    return ToolOutcome("Submitted.", ok=True, submitted=True)

  def _do_answer(self, code: str) -> ToolOutcome:
    if not self.solution_file:
      raise ValueError("single-turn answers need the task's solution file (metadata 'solution_file')")
    self.session.write_file(self.solution_file, code)
    return ToolOutcome(f"Wrote the answer to {self.solution_file}.", ok=True, submitted=True)


# compile() prints the compiler's SyntaxWarnings ("'int' object is not subscriptable") about the
# agent's code on the trainer's stderr; they are the agent's business, not the run's. The warning
# filters are process-wide, so the threads that check code take turns.
_COMPILE_LOCK = threading.Lock()


def python_compiles(text: str, path: str) -> bool:
  """Whether `text` compiles as Python (no code is executed), without printing its warnings."""
  with _COMPILE_LOCK, warnings.catch_warnings():
    warnings.simplefilter("ignore", SyntaxWarning)
    try:
      compile(text, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
      return False
  return True


def _compiles(path: str, text: str) -> bool | None:
  """Whether a written Python file compiles (None for other files); no code is executed."""
  if not path.endswith(".py"):
    return None
  return python_compiles(text, path)


def _short(e: BaseException, limit: int = 300) -> str:
  text = str(e) or type(e).__name__
  return text if len(text) <= limit else text[:limit] + "..."


def solution_file_for(task: Any) -> str | None:
  """The file a single-turn answer is written to: metadata `solution_file` (or `entry_point_file`),
  else the only Python file in the task's repo/."""
  meta = getattr(task, "metadata", {}) or {}
  for key in ("solution_file", "entry_point_file", "submission_file"):
    if meta.get(key):
      return str(meta[key])
  repo = Path(task.repo_dir)
  py_files = [p for p in repo.rglob("*.py") if "test" not in p.name.lower()]
  if len(py_files) == 1:
    return py_files[0].relative_to(repo).as_posix()
  return None


def initial_messages(task: Any, mode: str) -> list[dict[str, str]]:
  """The system and user messages that open an episode."""
  if mode == "single_turn":
    target = solution_file_for(task)
    user = task.statement
    if target:
      user = f"{user}\n\nWrite the complete contents of `{target}`."
    return [{"role": "system", "content": SYSTEM_PROMPT_SINGLE_TURN}, {"role": "user", "content": user}]
  user = task.statement
  public = list(getattr(task, "public_tests", None) or [])
  if public:
    user = f"{user}\n\nPublic tests you may run: {', '.join(public)}."
  return [{"role": "system", "content": SYSTEM_PROMPT_MULTI_TURN}, {"role": "user", "content": user}]


class ChatRenderer:
  """Renders conversations with the tokenizer's chat template and returns token ids.

  Observation tokens are the template's text between the end of the assistant turn and the next
  generation prompt, so `prompt + actions + observations` is exactly the sequence the model saw.
  """

  def __init__(self, tokenizer: Any, *, tool_prompt: str = "schema"):
    if tool_prompt not in TOOL_PROMPTS:
      raise ValueError(f"tool_prompt must be one of {TOOL_PROMPTS}, got {tool_prompt!r}")
    self.tokenizer = tokenizer
    self.tool_prompt = tool_prompt
    # "schema": the JSON schemas go through the template's `tools` argument (Hermes/Qwen);
    # "compact": a short description is appended to the system message instead.
    self.tools = list(TOOL_SPECS) if tool_prompt == "schema" else None
    self.end_of_turn_text = tokenizer.eos_token or "<|im_end|>"
    self.end_of_turn_ids = self.encode(self.end_of_turn_text)
    from rl.tokenizer import stop_token_ids  # local: keep the import graph light for tests
    self.stop_ids = set(stop_token_ids(tokenizer))

  def encode(self, text: str) -> list[int]:
    return list(self.tokenizer.encode(text, add_special_tokens=False))

  def decode(self, ids: Sequence[int]) -> str:
    return self.tokenizer.decode(list(ids), skip_special_tokens=False)

  @classmethod
  def from_config(cls, tokenizer: Any, config: Any) -> "ChatRenderer":
    agent = config.agent
    return cls(tokenizer, tool_prompt=agent.tool_prompt)

  def render(self, messages: Sequence[Mapping[str, Any]], *, generation_prompt: bool) -> str:
    messages = list(messages)
    if (self.tool_prompt == "compact" and messages and messages[0]["role"] == "system"
        and messages[0]["content"] == SYSTEM_PROMPT_MULTI_TURN):
      messages[0] = {"role": "system", "content": SYSTEM_PROMPT_MULTI_TURN + COMPACT_TOOLS_PROMPT}
    return self.tokenizer.apply_chat_template(
        messages, tools=self.tools, tokenize=False, add_generation_prompt=generation_prompt)

  def prompt_ids(self, messages: Sequence[Mapping[str, Any]]) -> list[int]:
    return self.encode(self.render(messages, generation_prompt=True))

  def observation_ids(self, messages_with_action: Sequence[Mapping[str, Any]], observation: str,
                      *, role: str = "tool") -> list[int]:
    """Tokens after the assistant's end-of-turn token up to the next generation prompt."""
    before = self.render(messages_with_action, generation_prompt=False)
    after = self.render(list(messages_with_action) + [{"role": role, "content": observation}],
                        generation_prompt=True)
    if not after.startswith(before):
      raise ValueError("the chat template does not render conversations append-only; "
                       "multi-turn token bookkeeping needs a prefix-stable template")
    # The action's tokens end with the stop token; what the template puts after it (a newline
    # for Qwen) belongs to the observation.
    cut = before.rfind(self.end_of_turn_text)
    cut = len(before) if cut < 0 else cut + len(self.end_of_turn_text)
    return self.encode(after[cut:])

  def strip_stop(self, ids: Sequence[int]) -> tuple[list[int], bool]:
    """Removes a trailing stop token; returns (content ids, whether one was there)."""
    ids = list(ids)
    if ids and ids[-1] in self.stop_ids:
      return ids[:-1], True
    return ids, False


class UnsandboxedSession:
  """A session over a host directory copy WITHOUT isolation, with the sandbox Session's API.

  Only for trusted actions: tests, the scripted expert's demonstrations, debugging. Untrusted
  model output must run in `sandbox.open_session`.
  """

  def __init__(self, workspace_dir: str | os.PathLike, root: str | os.PathLike | None = None):
    self._own_dir = tempfile.mkdtemp(prefix="unsandboxed-") if root is None else None
    self.root = Path(root) if root is not None else Path(self._own_dir) / "workspace"
    shutil.copytree(workspace_dir, self.root, symlinks=True)
    self.closed = False

  def __enter__(self) -> "UnsandboxedSession":
    return self

  def __exit__(self, *exc: Any) -> None:
    self.close()

  def close(self) -> None:
    self.closed = True
    shutil.rmtree(self._own_dir or self.root, ignore_errors=True)

  def _resolve(self, path: str) -> Path:
    full = (self.root / path).resolve()
    if full != self.root.resolve() and self.root.resolve() not in full.parents:
      raise ValueError(f"path {path!r} escapes the workspace")
    return full

  def read_file(self, path: str) -> str:
    # As the sandbox's read_file: no newline translation, undecodable bytes replaced.
    return self._resolve(path).read_bytes().decode("utf-8", errors="replace")

  def write_file(self, path: str, content: str | bytes) -> None:
    full = self._resolve(path)
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))

  def list_files(self, path: str = ".") -> list[str]:
    base = self._resolve(path)
    if not base.is_dir():
      raise NotADirectoryError(f"{path!r} is not a directory")
    return sorted(p.relative_to(self.root.resolve()).as_posix()
                  for p in base.rglob("*") if p.is_file() and "__pycache__" not in p.parts)

  def exec(self, command: str, timeout: float | None = None) -> Any:
    start = time.perf_counter()
    # The sandbox runtime first on PATH, so `python` has the packages a sandbox offers (pytest).
    path = os.path.dirname(runtime_python()) + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin")
    env = {"PATH": path, "HOME": str(self.root),
           "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}
    try:
      proc = subprocess.run(["bash", "-c", command], cwd=self.root, capture_output=True, text=True,
                            timeout=timeout, env=env, errors="replace")
      code, out, err, timed_out = proc.returncode, proc.stdout, proc.stderr, False
    except subprocess.TimeoutExpired as e:
      out = (e.stdout or b"").decode("utf-8", "replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
      err = (e.stderr or b"").decode("utf-8", "replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
      code, timed_out = 124, True
    return _HostExecResult(code, out, err, False, False, time.perf_counter() - start, timed_out, False)

  def export_workspace(self, dest_dir: str | os.PathLike) -> None:
    shutil.copytree(self.root, dest_dir, symlinks=True, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))


@dataclasses.dataclass
class _HostExecResult:
  exit_code: int
  stdout: str
  stderr: str
  stdout_truncated: bool
  stderr_truncated: bool
  duration_s: float
  timed_out: bool
  oom_killed: bool
