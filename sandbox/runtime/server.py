"""Command server that runs inside one sandbox (bubblewrap or container), stdlib only.

It reads JSON requests (one per line) on stdin and answers one JSON line per request. Each
command runs in a forked child with rlimits, its output capped while it streams and a watchdog
that kills every process of the sandbox on timeout. With pytest pre-imported, a
`python -m pytest ...` command is served by forking this warm interpreter instead of starting
a new one. This file is copied to a read-only location; it never sees the project checkout.
"""

import ctypes
import json
import os
import re
import resource
import select
import shlex
import signal
import sys
import time

WORKSPACE = os.environ.get("RLCODER_WORKSPACE", "/workspace")
PYTHON_NAME = re.compile(r"^python(3(\.\d+)?)?$")
SHELL_SPECIAL = set("|&;<>()$`\\*?[]{}~!#\n")
LIMIT_MESSAGES = {
    "memory": (b"MemoryError", b"Cannot allocate memory", b"std::bad_alloc",
               b"out of memory"),
    "procs": (b"Resource temporarily unavailable", b"BlockingIOError", b"fork: retry"),
}


def _set_not_dumpable() -> None:
  # Code under test runs as the same uid; not dumpable means it cannot ptrace this server
  # or write its memory through /proc to forge results.
  try:
    ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
  except Exception:
    pass


def _preimport_pytest() -> bool:
  try:
    import pytest  # noqa: F401
    from _pytest.config import default_plugins
    import importlib
    for name in default_plugins:
      try:
        importlib.import_module("_pytest." + name)
      except Exception:
        pass
    import _pytest.junitxml  # noqa: F401
    import xml.etree.ElementTree  # noqa: F401
    return True
  except Exception:
    return False


def _pytest_args(command: str):
  """Returns pytest's argv if `command` is a plain `python -m pytest ...` / `pytest ...`."""
  if any(ch in SHELL_SPECIAL for ch in command):
    return None
  try:
    words = shlex.split(command)
  except ValueError:
    return None
  if not words:
    return None
  if words[0] == "pytest":
    return words[1:]
  if (PYTHON_NAME.match(words[0]) or words[0] == sys.executable) and words[1:3] == ["-m", "pytest"]:
    return words[3:]
  return None


def _kill_all_others() -> None:
  """Kills every process in this pid namespace except init (1) and this server."""
  me = os.getpid()
  for _ in range(100):
    found = False
    for entry in os.listdir("/proc"):
      if not entry.isdigit():
        continue
      pid = int(entry)
      if pid in (1, me):
        continue
      try:
        os.kill(pid, signal.SIGKILL)
        found = True
      except (ProcessLookupError, PermissionError):
        pass
    _reap()
    if not found:
      return
    time.sleep(0.002)


def _reap() -> None:
  while True:
    try:
      pid, _ = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
      return
    if pid == 0:
      return


def _apply_limits(req: dict) -> None:
  mb = 1024 * 1024
  limits = [
      (resource.RLIMIT_CORE, 0),
      (resource.RLIMIT_CPU, int(req["timeout"]) + 2),
      (resource.RLIMIT_FSIZE, int(req["max_file_mb"]) * mb),
      (resource.RLIMIT_NPROC, int(req["max_procs"])),
  ]
  if req.get("memory_mb"):
    limits.append((resource.RLIMIT_AS, int(req["memory_mb"]) * mb))
  for which, value in limits:
    try:
      resource.setrlimit(which, (value, value))
    except (ValueError, OSError):
      pass


def _child(req: dict, out_w: int, err_w: int, pytest_argv) -> None:
  """Runs in the forked child; never returns."""
  code = 127
  try:
    os.setsid()
    devnull = os.open("/dev/null", os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    os.closerange(3, 4096)
    os.chdir(req.get("cwd") or WORKSPACE)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    _apply_limits(req)
    env = dict(req["env"])
    if pytest_argv is None:
      os.execve("/bin/sh", ["sh", "-c", req["cmd"]], env)
    os.environ.clear()
    os.environ.update(env)
    import pytest
    sys.argv = [os.path.join(os.path.dirname(pytest.__file__), "__main__.py")] + pytest_argv
    sys.path[0] = os.getcwd()
    # What a fresh interpreter would do with PYTHONPATH (and our sitecustomize on it).
    for entry in reversed([p for p in env.get("PYTHONPATH", "").split(":") if p]):
      sys.path.insert(1, entry)
    if env.get("RLCODER_AUDIT_CONFIG"):
      import rlcoder_audit
      rlcoder_audit.install_from_env()
    try:
      code = int(pytest.main())
    except SystemExit as e:
      code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    sys.stdout.flush()
    sys.stderr.flush()
  except BaseException as e:  # report anything that went wrong before the command ran
    try:
      os.write(2, f"sandbox: {type(e).__name__}: {e}\n".encode())
    except OSError:
      pass
  finally:
    os._exit(code if isinstance(code, int) else 1)


def run(req: dict, warm_pytest: bool) -> dict:
  limit = int(req["output_limit"])
  timeout = float(req["timeout"])
  pytest_argv = _pytest_args(req["cmd"]) if warm_pytest else None
  out_r, out_w = os.pipe()
  err_r, err_w = os.pipe()
  start = time.monotonic()
  pid = os.fork()
  if pid == 0:
    _child(req, out_w, err_w, pytest_argv)
  os.close(out_w)
  os.close(err_w)
  pidfd = os.pidfd_open(pid)
  buffers = {out_r: bytearray(), err_r: bytearray()}
  truncated = {out_r: False, err_r: False}
  open_fds = {out_r, err_r, pidfd}
  deadline = start + timeout
  timed_out = False
  exited_at = None
  while open_fds - {pidfd} or pidfd in open_fds:
    now = time.monotonic()
    if exited_at is not None:
      # Background children may hold the pipes open; give them a moment, then stop reading.
      if now > min(deadline, exited_at + 0.05):
        break
    elif now >= deadline:
      timed_out = True
      break
    wait = (min(deadline, exited_at + 0.05) if exited_at is not None else deadline) - now
    ready, _, _ = select.select(list(open_fds), [], [], max(wait, 0))
    for fd in ready:
      if fd == pidfd:
        open_fds.discard(pidfd)
        exited_at = time.monotonic()
        continue
      data = os.read(fd, 65536)
      if not data:
        open_fds.discard(fd)
        continue
      room = limit - len(buffers[fd])
      if room > 0:
        buffers[fd] += data[:room]
      if len(data) > room:
        truncated[fd] = True  # keep draining so the writer never blocks, but drop the bytes
  if timed_out:
    _kill_all_others()
  status = os.waitpid(pid, 0)[1]
  duration = time.monotonic() - start
  for fd in (out_r, err_r, pidfd):
    os.close(fd)
  _reap()
  if os.WIFEXITED(status):
    exit_code, sig = os.WEXITSTATUS(status), 0
  else:
    sig = os.WTERMSIG(status)
    exit_code = -sig
  limits = []
  if timed_out:
    limits.append("timeout")
  err = bytes(buffers[err_r])
  out = bytes(buffers[out_r])
  for name, needles in LIMIT_MESSAGES.items():
    if any(n in err or n in out for n in needles):
      limits.append(name)
  if sig == signal.SIGXCPU:
    limits.append("cpu")
  if sig == signal.SIGXFSZ or b"File too large" in err:
    limits.append("file_size")
  return {
      "exit_code": exit_code, "signal": sig, "timed_out": timed_out,
      "stdout": out.decode("utf-8", "replace"), "stderr": err.decode("utf-8", "replace"),
      "stdout_truncated": truncated[out_r], "stderr_truncated": truncated[err_r],
      "duration_s": duration, "limits_hit": limits, "fast_path": pytest_argv is not None,
  }


def main() -> None:
  proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
  proto_out = os.fdopen(os.dup(1), "wb", buffering=0)
  devnull = os.open("/dev/null", os.O_RDWR)
  for fd in (0, 1, 2):
    os.dup2(devnull, fd)
  _set_not_dumpable()
  warm = os.environ.get("RLCODER_FORK_SERVER") == "1" and _preimport_pytest()
  proto_out.write(json.dumps({"ready": True, "warm": warm, "pid": os.getpid()}).encode() + b"\n")
  pending = b""
  while True:
    chunk = proto_in.read(1 << 20)
    if not chunk:
      return
    pending += chunk
    while b"\n" in pending:
      line, pending = pending.split(b"\n", 1)
      req = json.loads(line)
      if req.get("op") == "kill_all":
        _kill_all_others()
        reply = {"ok": True}
      else:
        try:
          reply = run(req, warm)
        except Exception as e:  # a broken request must not take the server down
          reply = {"error": f"{type(e).__name__}: {e}"}
      proto_out.write(json.dumps(reply).encode() + b"\n")


if __name__ == "__main__":
  main()
