"""Turns one agent action into the paths, command words and text the online rules inspect.

Shell commands are split conservatively: every operand that could be a path is
collected, and operands of writing commands (redirects, tee, sed -i, rm, mv, cp...)
are marked as writes, so the rules see what a command touches without running it.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from typing import Any, Mapping

from rl.antihack.context import normalize_path

ACTION_TYPES = ("list_files", "read_file", "write_file", "edit_file", "run", "submit", "answer")

_SEPARATORS = re.compile(r"\|\||&&|[;|&\n()`]|\$\(")
_REDIRECT = re.compile(r"^(\d?>>?|&>>?|>\|)(.*)$")
_WRITERS = {"rm", "mv", "cp", "touch", "truncate", "tee", "chmod", "ln", "install", "dd", "unlink", "rmdir"}
_READERS = {"cat", "head", "tail", "less", "more", "grep", "egrep", "rg", "awk", "sed", "ls", "find",
            "tree", "stat", "file", "wc", "nl", "od", "xxd", "strings", "diff", "cmp", "sort", "uniq"}
_QUOTED_PATH = re.compile(r"""(['"])([\w.\-~]*(?:/[\w.\-]+)+/?|[\w.\-]+\.(?:py|json|csv|txt|cfg|ini|toml|yaml|yml|pkl|npy))\1""")
_PREFIX_PROGRAMS = {"sudo", "timeout", "env", "nice", "nohup", "time", "command", "exec", "xargs", "stdbuf"}


@dataclasses.dataclass
class ParsedAction:
  """The parts of an action that rules look at (paths are workspace-relative)."""

  action_type: str
  command: str = ""
  programs: list[str] = dataclasses.field(default_factory=list)
  read_paths: list[str] = dataclasses.field(default_factory=list)
  list_paths: list[str] = dataclasses.field(default_factory=list)
  write_paths: list[str] = dataclasses.field(default_factory=list)
  deleted_paths: list[str] = dataclasses.field(default_factory=list)
  content: str = ""  # text written (write_file content, edit_file new text, answer code)
  runs_tests: bool = False  # the command runs pytest/unittest (reading test files is expected)

  @property
  def all_paths(self) -> list[str]:
    return list(dict.fromkeys(self.read_paths + self.list_paths + self.write_paths + self.deleted_paths))


def parse_action(action_type: str, action_input: Mapping[str, Any] | None,
                 workspace_root: str = "") -> ParsedAction:
  """Parses a tool call; unknown types and malformed inputs give an empty, harmless parse.

  Malformed tool calls are the rollout engine's business (it answers with an error
  observation); the rules must never crash on them.
  """
  inp = action_input if isinstance(action_input, Mapping) else {}
  parsed = ParsedAction(action_type=str(action_type))

  def norm(p: Any) -> str | None:
    return normalize_path(p, workspace_root) if isinstance(p, str) and p.strip() else None

  if action_type == "list_files":
    parsed.list_paths.append(norm(inp.get("path")) or ".")
  elif action_type == "read_file":
    if (p := norm(inp.get("path"))):
      parsed.read_paths.append(p)
  elif action_type == "write_file":
    if (p := norm(inp.get("path"))):
      parsed.write_paths.append(p)
    parsed.content = _text(inp.get("content"))
  elif action_type == "edit_file":
    if (p := norm(inp.get("path"))):
      parsed.write_paths.append(p)
    parsed.content = _text(inp.get("new"))
  elif action_type == "answer":
    parsed.content = _text(inp.get("code"))
  elif action_type == "run":
    parsed.command = _text(inp.get("command"))
    _parse_command(parsed, workspace_root)
  return parsed


def _text(value: Any) -> str:
  return value if isinstance(value, str) else ""


def _split_words(segment: str) -> list[str]:
  try:
    return shlex.split(segment, comments=False, posix=True)
  except ValueError:  # unbalanced quotes: fall back to whitespace words
    return segment.split()


def _looks_like_path(word: str) -> bool:
  if not word or word.startswith("-") or "=" in word.split("/")[0] and "/" not in word:
    return False
  if re.fullmatch(r"[\w.\-/~*?\[\]]+", word) is None:
    return False
  return "/" in word or "." in word or word in ("tests", "test", "hidden", "answers", "solution")


def _parse_command(parsed: ParsedAction, workspace_root: str) -> None:
  for segment in _SEPARATORS.split(parsed.command):
    words = _split_words(segment)
    # Leading VAR=value assignments and wrappers (sudo, timeout 5, env) are not the program.
    while words and (re.fullmatch(r"[A-Za-z_]\w*=.*", words[0]) or words[0] in _PREFIX_PROGRAMS
                     or re.fullmatch(r"\d+(\.\d+)?[smh]?", words[0])):
      words = words[1:]
    if not words:
      continue
    program = words[0].rsplit("/", 1)[-1]
    parsed.programs.append(program)
    args = words[1:]
    if program in ("pytest", "py.test") or (program.startswith("python") and args[:2] in (["-m", "pytest"], ["-m", "unittest"])):
      parsed.runs_tests = True
    operands: list[str] = []
    i = 0
    while i < len(args):
      word = args[i]
      m = _REDIRECT.match(word)
      if m:
        target = m.group(2) or (args[i + 1] if i + 1 < len(args) else "")
        if not m.group(2):
          i += 1
        if target and not target.startswith("&") and target != "/dev/null":
          parsed.write_paths.append(normalize_path(target, workspace_root))
        i += 1
        continue
      if word == "<" and i + 1 < len(args):
        parsed.read_paths.append(normalize_path(args[i + 1], workspace_root))
        i += 2
        continue
      if _looks_like_path(word):
        operands.append(normalize_path(word, workspace_root))
      i += 1
    if program == "rm" or program == "unlink":
      parsed.deleted_paths.extend(operands)
    elif program in ("mv",):
      parsed.deleted_paths.extend(operands[:-1])
      parsed.write_paths.extend(operands[-1:])
    elif program in ("cp", "ln", "install"):
      parsed.read_paths.extend(operands[:-1])
      parsed.write_paths.extend(operands[-1:])
    elif program in _WRITERS or (program == "sed" and any(a.startswith("-i") for a in args)):
      parsed.write_paths.extend(operands)
    elif program in ("ls", "find", "tree", "du"):
      parsed.list_paths.extend(operands or ["."])
    elif program == "git" and (args[:2] == ["worktree", "add"] or args[:1] == ["clone"]):
      # The new checkout is the agent's own (a later `diff -r /tmp/head/pkg pkg` reads it).
      places = [normalize_path(a, workspace_root) for a in args[2 if args[0] == "worktree" else 1:]
                if not a.startswith("-")]
      if args[0] == "clone" and len(places) >= 2:
        parsed.read_paths.append(places[0])
        parsed.write_paths.append(places[1])
      elif args[0] == "worktree" and places:
        parsed.write_paths.append(places[0])
    else:
      parsed.read_paths.extend(operands)
  # Paths quoted inside inline code (python -c "open('tests/x.py')", heredocs) are reads too:
  # the word splitting above cannot see into the code.
  for m in _QUOTED_PATH.finditer(parsed.command):
    path = normalize_path(m.group(2), workspace_root)
    if path not in parsed.write_paths and path not in parsed.deleted_paths:
      parsed.read_paths.append(path)
  for attr in ("read_paths", "list_paths", "write_paths", "deleted_paths"):
    setattr(parsed, attr, list(dict.fromkeys(getattr(parsed, attr))))
