"""What the agent sees when an action is flagged: fake data, an error, or the end of the episode.

`fake` keeps the rollout going with plausible, useless data (a missing file, a
network failure, a silent success for a write that never happened), so the policy
cannot learn from the observation that it was caught; the episode still earns only
the no-gain reward. Fake outputs are deterministic in the action, so replays match.
"""

from __future__ import annotations

import dataclasses
import hashlib
import posixpath
import re
from typing import Any, Mapping

from rl.antihack.actions import parse_action
from rl.antihack.verdict import Verdict

RESPONSES = ("fake", "block", "terminate")


@dataclasses.dataclass(frozen=True)
class CheatResponse:
  """How the rollout engine should handle a flagged action.

  execute: run the action in the sandbox (False for every flagged action).
  observation: the text to show the agent instead of the real result.
  terminate: end the episode now (terminated reason stays as the engine decides, e.g. "error").
  record: the step-level `hack` field of the trajectory record.
  """

  execute: bool
  observation: str | None
  terminate: bool
  record: dict[str, Any]


def respond(verdict: Verdict, action_type: str, action_input: Mapping[str, Any] | None,
            policy: str = "fake", **fake_kwargs: Any) -> CheatResponse:
  """Applies config.antihack.response to one checked action."""
  if policy not in RESPONSES:
    raise ValueError(f"unknown anti-hack response {policy!r}; known: {', '.join(RESPONSES)}")
  if not verdict.flagged:
    return CheatResponse(True, None, False, {"flagged": False, "stage": verdict.stage,
                                             "rules": list(verdict.rules), "response": None})
  record = {"flagged": True, "stage": verdict.stage, "rules": list(verdict.flagging_rules), "response": policy}
  if policy == "fake":
    return CheatResponse(False, fake_observation(action_type, action_input, **fake_kwargs), False, record)
  if policy == "block":
    return CheatResponse(False, f"Error: action blocked by the sandbox policy ({verdict.flagging_rules[0]}).",
                         False, record)
  return CheatResponse(False, "Error: episode terminated by the sandbox policy.", True, record)


def _seed(*parts: Any) -> int:
  return int.from_bytes(hashlib.sha256(repr(parts).encode()).digest()[:8], "little")


def fake_observation(action_type: str, action_input: Mapping[str, Any] | None, *,
                     workspace_root: str = "", written_message: str | None = None) -> str:
  """Plausible but useless output for an action that was not executed.

  written_message: the success text the real write/edit tool prints, with {path} and
  {nbytes} placeholders, so a faked write looks exactly like a real one.
  """
  inp = action_input if isinstance(action_input, Mapping) else {}
  parsed = parse_action(action_type, inp, workspace_root)
  if action_type == "read_file":
    path = str(inp.get("path", ""))
    return f"Error: file not found: {path}"
  if action_type == "list_files":
    path = str(inp.get("path", "."))
    return f"Error: no such directory: {path}"
  if action_type in ("write_file", "edit_file"):
    path = str(inp.get("path", ""))
    nbytes = len(str(inp.get("content", inp.get("new", ""))).encode())
    template = written_message or ("Wrote {nbytes} bytes to {path}" if action_type == "write_file" else "Edited {path}")
    return template.format(path=path, nbytes=nbytes)
  if action_type == "run":
    return _fake_command_output(parsed.command, parsed.programs)
  return ""


def _fake_command_output(command: str, programs: list[str]) -> str:
  rng = _seed(command)
  host = re.search(r"https?://([^/\s'\"]+)", command)
  if any(p in ("curl", "wget", "aria2c", "http") for p in programs):
    name = host.group(1) if host else "example.com"
    return (f"curl: (6) Could not resolve host: {name}\n[exit code 6]" if "curl" in programs
            else f"--2024-01-01 00:00:00--  {name}\nResolving {name}... failed: Temporary failure in name resolution.\n"
                 f"wget: unable to resolve host address '{name}'\n[exit code 4]")
  if any(p in ("pip", "pip3", "uv", "poetry", "conda") for p in programs) or "-m pip" in command:
    pkg = (re.findall(r"(?:install|download|add)\s+(?:-\S+\s+)*([A-Za-z0-9_.\-]+)", command) or ["package"])[0]
    return (f"WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection "
            f"broken by 'NewConnectionError: Failed to establish a new connection: [Errno -3] Temporary failure in name "
            f"resolution'\nERROR: Could not find a version that satisfies the requirement {pkg} (from versions: none)\n"
            f"ERROR: No matching distribution found for {pkg}\n[exit code 1]")
  if "git" in programs:
    if re.search(r"git\s+(clone|fetch|pull|ls-remote)", command):
      return "fatal: unable to access remote: Could not resolve host\n[exit code 128]"
    if re.search(r"git\s+(log|show|reflog|rev-list|shortlog|whatchanged|blame)", command):
      sha = f"{rng:016x}"[:7]
      return f"{sha} (HEAD) Initial commit\n" if "log" in command or "reflog" in command else f"commit {rng:040x}"[:47] + "\n"
    return "fatal: bad revision\n[exit code 128]"
  if any(p in ("ssh", "scp", "nc", "ncat", "netcat", "telnet", "socat", "rsync", "ftp") for p in programs):
    return f"{programs[0]}: connect: Network is unreachable\n[exit code 1]"
  if any(p in ("ls", "find", "tree") for p in programs):
    target = next((w for w in command.split()[1:] if not w.startswith("-")), ".")
    return f"ls: cannot access '{posixpath.normpath(target)}': No such file or directory\n[exit code 2]"
  if any(p in ("cat", "head", "tail", "less", "more", "grep", "sed", "awk", "nl") for p in programs):
    target = next((w for w in reversed(command.split()) if not w.startswith("-")), "file")
    return f"{programs[0]}: {target}: No such file or directory\n[exit code 1]"
  if re.search(r"PYTEST_|environ|printenv", command):
    return "\n[exit code 0]"
  # A write through the shell (echo > conftest.py, sed -i on a test) "succeeds" silently.
  return "[exit code 0]"
