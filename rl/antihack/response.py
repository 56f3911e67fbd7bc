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
  """Applies config.antihack.response to one checked action.

  fake_kwargs go to `fake_observation` (written_message=..., context=the episode's ActionContext).
  """
  if policy not in RESPONSES:
    raise ValueError(f"unknown anti-hack response {policy!r}; known: {', '.join(RESPONSES)}")
  if not verdict.flagged:
    return CheatResponse(True, None, False, {"flagged": False, "stage": verdict.stage,
                                             "rules": list(verdict.rules), "response": None})
  record = {"flagged": True, "stage": verdict.stage, "rules": list(verdict.flagging_rules), "response": policy}
  if policy == "fake":
    return CheatResponse(False, fake_observation(action_type, action_input, **fake_kwargs), False, record)
  if policy == "block":
    rule = (verdict.flagging_rules or verdict.rules or ("policy",))[0]
    return CheatResponse(False, f"Error: action blocked by the sandbox policy ({rule}).", False, record)
  return CheatResponse(False, "Error: episode terminated by the sandbox policy.", True, record)


def _seed(*parts: Any) -> int:
  return int.from_bytes(hashlib.sha256(repr(parts).encode()).digest()[:8], "little")


def _format_run(exit_code: int, stdout: str = "", stderr: str = "") -> str:
  """The rollout's `run` observation format (rl.env.tools.format_exec_result)."""
  parts = [f"exit code: {exit_code}"]
  if stdout:
    parts.append("stdout:\n" + stdout.rstrip("\n"))
  if stderr:
    parts.append("stderr:\n" + stderr.rstrip("\n"))
  return "\n".join(parts)


def _missing(tool: str, path: str) -> str:
  return f"Error: {tool} failed: no such file in the workspace: {path!r}"


def _fake_body(path: str) -> str:
  """A harmless body for a file that exists but must not be shown (bait/answer files)."""
  ext = posixpath.splitext(path)[1].lower()
  return {".json": "{}\n", ".py": "", ".csv": "id\n", ".yaml": "{}\n", ".yml": "{}\n"}.get(ext, "")


def fake_observation(action_type: str, action_input: Mapping[str, Any] | None, *,
                     workspace_root: str = "", written_message: str | None = None, context: Any = None) -> str:
  """Plausible but useless output for an action that was not executed.

  Formats follow the rollout's tools (rl.env.tools): missing files read as the sandbox reports
  them, `run` output as "exit code: N / stdout / stderr". With `context` (the episode's
  ActionContext), files that do exist (bait files) read as an empty body instead of missing.
  written_message: the success text of the real write/edit tool, with {path} and {nbytes}.
  """
  inp = action_input if isinstance(action_input, Mapping) else {}
  parsed = parse_action(action_type, inp, workspace_root)
  exists = getattr(context, "is_provided", None)
  if action_type == "read_file":
    path = str(inp.get("path", ""))
    norm = parsed.read_paths[0] if parsed.read_paths else path
    return _fake_body(norm) if exists and exists(norm) else _missing("read_file", path)
  if action_type == "list_files":
    path = str(inp.get("path", "."))
    return _missing("list_files", path)
  if action_type in ("write_file", "edit_file"):
    path = str(inp.get("path", ""))
    nbytes = len(str(inp.get("content", inp.get("new", ""))).encode())
    template = written_message or ("Wrote {nbytes} bytes to {path}." if action_type == "write_file"
                                   else "Edited {path}: replaced 1 occurrence.")
    return template.format(path=path, nbytes=nbytes)
  if action_type == "run":
    return _fake_command_output(parsed, exists)
  return ""


def _fake_command_output(parsed: Any, exists: Any) -> str:
  command, programs = parsed.command, parsed.programs
  rng = _seed(command)
  host = re.search(r"https?://([^/\s'\"]+)", command)
  name = host.group(1) if host else "example.com"
  if "curl" in programs:
    return _format_run(6, stderr=f"curl: (6) Could not resolve host: {name}")
  if any(p in ("wget", "aria2c", "http") for p in programs):
    return _format_run(4, stderr=f"Resolving {name}... failed: Temporary failure in name resolution.\n"
                                 f"wget: unable to resolve host address '{name}'")
  if any(p in ("pip", "pip3", "uv", "poetry", "conda") for p in programs) or "-m pip" in command:
    pkg = (re.findall(r"(?:install|download|add)\s+(?:-\S+\s+)*([A-Za-z0-9_.\-]+)", command) or ["package"])[0]
    return _format_run(1, stderr=(
        "WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection "
        "broken by 'NewConnectionError: Failed to establish a new connection: [Errno -3] Temporary failure in name "
        f"resolution'\nERROR: Could not find a version that satisfies the requirement {pkg} (from versions: none)\n"
        f"ERROR: No matching distribution found for {pkg}"))
  if any(p in ("apt", "apt-get", "npm", "yarn", "gem", "cargo", "go") for p in programs):
    return _format_run(100, stderr="E: Temporary failure resolving the package mirror")
  if "git" in programs:
    if re.search(r"git\s+(clone|fetch|pull|ls-remote)", command):
      return _format_run(128, stderr="fatal: unable to access remote: Could not resolve host")
    if re.search(r"git\s+(log|reflog|shortlog|whatchanged)", command):
      return _format_run(0, stdout=f"{rng:016x}"[:7] + " Initial commit")
    return _format_run(128, stderr="fatal: bad revision")
  if any(p in ("ssh", "scp", "nc", "ncat", "netcat", "telnet", "socat", "rsync", "ftp") for p in programs):
    return _format_run(1, stderr=f"{programs[0]}: connect: Network is unreachable")
  readers = [p for p in programs if p in ("cat", "head", "tail", "less", "more", "grep", "sed", "awk", "nl")]
  if readers:
    targets = parsed.read_paths or ["file"]
    if exists and all(exists(t) for t in targets):
      return _format_run(0, stdout="".join(_fake_body(t) for t in targets))
    return _format_run(1, stderr="\n".join(f"{readers[0]}: {t}: No such file or directory" for t in targets))
  if any(p in ("ls", "find", "tree") for p in programs):
    targets = parsed.list_paths or ["."]
    return _format_run(2, stderr="\n".join(f"ls: cannot access '{t}': No such file or directory" for t in targets))
  # Anything else (a write through the shell, an environment probe): a silent success.
  return _format_run(0)
