"""Command server that runs inside one sandbox (bubblewrap or container), stdlib only.

It reads JSON requests (one per line) on stdin and answers one JSON line per request. Each
command runs in a forked child with rlimits, its output capped while it streams and a watchdog
that kills every process of the sandbox on timeout or when their resident memory goes over
the limit (an address-space rlimit would count reserved, unused virtual memory: thread stacks
and malloc arenas, so a few threads fail with "can't start new thread"). With pytest pre-imported, a
`python -m pytest ...` command is served by forking this warm interpreter instead of starting
a new one. This file is copied to a read-only location; it never sees the project checkout.
"""

import sys

# Modules any interpreter has before it puts the script's folder on sys.path; a workspace
# module of one of these names is ignored by a fresh interpreter too.
_AT_START = frozenset(sys.modules)

import ctypes  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import resource  # noqa: E402
import select  # noqa: E402
import shlex  # noqa: E402
import signal  # noqa: E402
import time  # noqa: E402

WORKSPACE = os.environ.get("RLCODER_WORKSPACE", "/workspace")
PYTHON_NAME = re.compile(r"^python(3(\.\d+)?)?$")
SHELL_SPECIAL = set("|&;<>()$`\\*?[]{}~!#\n")
LIMIT_MESSAGES = {
    "memory": (b"MemoryError", b"Cannot allocate memory", b"std::bad_alloc",
               b"out of memory"),
    "procs": (b"Resource temporarily unavailable", b"BlockingIOError", b"fork: retry",
              b"Cannot fork"),
}


# Container backends expose their own cgroup here; bubblewrap sandboxes have no /sys (the
# host reads those counters itself).
CGROUP_COUNTERS = {
    "memory": (("/sys/fs/cgroup/memory/memory.oom_control", "oom_kill"),
               ("/sys/fs/cgroup/memory.events", "oom_kill")),
    "procs": (("/sys/fs/cgroup/pids/pids.events", "max"), ("/sys/fs/cgroup/pids.events", "max")),
}


def _cgroup_counters() -> dict:
  counts = {}
  for limit, candidates in CGROUP_COUNTERS.items():
    for path, key in candidates:
      try:
        with open(path) as f:
          for line in f:
            parts = line.split()
            if len(parts) == 2 and parts[0] == key:
              counts[limit] = int(parts[1])
        break
      except (OSError, ValueError):
        continue
  return counts


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
    # Third-party plugins pytest would autoload (hypothesis, anyio, xdist ...) and the
    # libraries they pull in at configure time: importing them here is most of the saving.
    from importlib import metadata
    for entry_point in metadata.entry_points(group="pytest11"):
      try:
        entry_point.load()
      except Exception:
        pass
    for name in ("hypothesis", "unittest.mock", "doctest", "pdb"):
      try:
        importlib.import_module(name)
      except Exception:
        pass
    import xml.etree.ElementTree  # noqa: F401
    return True
  except Exception:
    return False


def _warm_up_pytest() -> None:
  """Runs pytest once on a throw-away test so its lazy imports and caches are warm.

  pytest is built to run repeatedly in one process (it restores capture, warnings, logging
  and import hooks at the end); the directory lives in this sandbox's private /tmp and is
  deleted before any session can use the sandbox.
  """
  import shutil
  import tempfile
  import pytest
  here = os.getcwd()
  tmp = tempfile.mkdtemp(prefix="rlcoder-warmup-")
  try:
    with open(os.path.join(tmp, "test_warmup.py"), "w") as f:
      f.write("import pytest\n\n@pytest.mark.parametrize('x', [1])\ndef test_warmup(x, tmp_path):\n"
              "  assert x == 1\n")
    os.chdir(tmp)
    pytest.main(["-q", "-p", "no:cacheprovider", "--junitxml", os.path.join(tmp, "j.xml"), tmp])
  except BaseException:
    pass
  finally:
    os.chdir(here)
    shutil.rmtree(tmp, ignore_errors=True)
    import glob
    for leftover in glob.glob(os.path.join(tempfile.gettempdir(), "pytest-of-*")):
      shutil.rmtree(leftover, ignore_errors=True)  # tmp_path's base directory
    for name in list(sys.modules):
      if name == "test_warmup" or name.startswith("test_warmup."):
        del sys.modules[name]


def _silence_preimport_warnings() -> None:
  """pytest warns that plugins imported by the server cannot be assertion-rewritten.

  A fresh interpreter would not have imported them before pytest started, so the warning is
  an artefact of the fork-server; plugin modules are not rewritten in either case.
  """
  try:
    from _pytest.assertion import rewrite
    original = rewrite.AssertionRewritingHook._warn_already_imported
    preloaded = set(sys.modules)

    def warn_unless_preloaded(self, name):
      if name not in preloaded:
        original(self, name)

    rewrite.AssertionRewritingHook._warn_already_imported = warn_unless_preloaded
  except Exception:
    pass


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


def _shadows_preloaded(req: dict) -> bool:
  """Whether the workspace provides a top-level module this server has already imported.

  pytest's own dependencies (iniconfig, packaging, pluggy ...) and the standard library modules
  pytest imports (subprocess ...) are imported here before any command; a forked child would
  keep using them even when the workspace holds its own copy (a task on that very library, or
  a shadow module planted by code under test), so such commands run in a fresh interpreter,
  where the workspace copy takes effect, and both paths grade alike. Modules every interpreter
  has at start-up (os, io, ...) are ignored by a fresh interpreter as well.
  """
  cwd = req.get("cwd") or WORKSPACE
  roots = [cwd] + [p for p in req["env"].get("PYTHONPATH", "").split(":")
                   if p == WORKSPACE or p.startswith(WORKSPACE + "/")]
  for root in roots:
    try:
      names = os.listdir(root)
    except OSError:
      continue
    for name in names:
      module = name[:-3] if name.endswith(".py") else name
      if module in sys.modules and module not in _AT_START and module != "__main__":
        if name.endswith(".py") or os.path.isfile(os.path.join(root, name, "__init__.py")):
          return True
  return False


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
  ]
  # RLIMIT_NPROC counts every process of the uid on the kernel, so it is only right where the
  # sandbox has a user namespace of its own (bubblewrap); containers use the pids cgroup.
  if int(req["max_procs"]) > 0:
    limits.append((resource.RLIMIT_NPROC, int(req["max_procs"])))
  for which, value in limits:
    try:
      resource.setrlimit(which, (value, value))
    except (ValueError, OSError):
      pass


MEMORY_POLL_S = 0.05
_RSS_FIELDS = (b"RssAnon:", b"RssShmem:")


def resident_memory_bytes(exclude: tuple = ()) -> int:
  """Anonymous + shared-memory resident bytes of every process in this pid namespace.

  Read from /proc/PID/status, which stays readable for non-dumpable processes. File-backed
  pages (shared libraries, page cache) are left out: they are shared and reclaimable. A page
  shared copy-on-write between forked processes counts once per process (an upper bound).
  """
  total = 0
  for entry in os.listdir("/proc"):
    if not entry.isdigit() or int(entry) in exclude:
      continue
    try:
      with open(f"/proc/{entry}/status", "rb") as f:
        for line in f:
          if line.startswith(_RSS_FIELDS):
            total += int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
      continue
  return total


# Where a grading run finds the verdict channel (sandbox/runtime/audit_site/rlcoder_verdict.py):
# the read end of a pipe holding the per-grading key, and the write end of the outcome stream.
VERDICT_FDS = (1000, 1001)
MAX_VERDICT_BYTES = 64 * 1024 * 1024


def _finalize_like_an_interpreter() -> None:
  """What a fresh interpreter does at exit: join non-daemon threads, then run atexit handlers.

  The child ends with os._exit (the server's own state must not be finalised twice), which
  skips both; without this an atexit handler in code under test would run after a plain
  `python -m pytest` and not here, and the two paths would grade differently.
  """
  try:
    import threading
    threading._shutdown()
  except BaseException:
    pass
  try:
    import atexit
    atexit._run_exitfuncs()
  except BaseException:
    pass
  for stream in (sys.stdout, sys.stderr):
    try:
      stream.flush()
    except BaseException:
      pass


def _child(req: dict, out_w: int, err_w: int, pytest_argv, verdict_fds=None) -> None:
  """Runs in the forked child; never returns."""
  code = 127
  try:
    os.setsid()
    devnull = os.open("/dev/null", os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    if verdict_fds is not None:
      for src, dst in zip(verdict_fds, VERDICT_FDS):
        os.dup2(src, dst)  # inheritable, so the shell's python finds them too
      os.closerange(3, VERDICT_FDS[0])
      os.closerange(VERDICT_FDS[1] + 1, 4096)
    else:
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
    _silence_preimport_warnings()
    sys.argv = [os.path.join(os.path.dirname(pytest.__file__), "__main__.py")] + pytest_argv
    sys.path[0] = os.getcwd()
    # What a fresh interpreter would do with PYTHONPATH (and our sitecustomize on it).
    for entry in reversed([p for p in env.get("PYTHONPATH", "").split(":") if p]):
      sys.path.insert(1, entry)
    # Finders cached by the server describe the workspace as it was then (often empty, or a
    # folder that did not exist yet): drop them so the child sees today's files.
    for cached in list(sys.path_importer_cache):
      if cached == WORKSPACE or cached.startswith(WORKSPACE + "/"):
        sys.path_importer_cache.pop(cached, None)
    import importlib
    importlib.invalidate_caches()
    # The grader's modules come from the server's own copy, imported before any workspace path
    # was on sys.path: a workspace rlcoder_audit.py cannot stand in for them.
    if env.get("RLCODER_VERDICT_FDS") and rlcoder_verdict is not None:
      rlcoder_verdict.install_from_env(sys.argv)
    if env.get("RLCODER_AUDIT_CONFIG") and rlcoder_audit is not None:
      rlcoder_audit.install_from_env()
    try:
      code = int(pytest.main())
    except SystemExit as e:
      code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    _finalize_like_an_interpreter()
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
  if pytest_argv is not None and _shadows_preloaded(req):
    pytest_argv = None  # a fresh interpreter imports the workspace's copy
  out_r, out_w = os.pipe()
  err_r, err_w = os.pipe()
  verdict_fds = chan_r = None
  if req.get("verdict_key"):
    # The grader's key goes into a pipe only the test process reads (then closes); outcome lines
    # come back on a second pipe whose read end only this server holds.
    key_r, key_w = os.pipe()
    os.write(key_w, bytes.fromhex(req["verdict_key"]))
    os.close(key_w)
    chan_r, chan_w = os.pipe()
    verdict_fds = (key_r, chan_w)
    req["env"]["RLCODER_VERDICT_FDS"] = ",".join(map(str, VERDICT_FDS))
  counters_before = _cgroup_counters()
  start = time.monotonic()
  try:
    pid = os.fork()
  except BlockingIOError:
    # A runaway process tree left by an earlier command holds every pid: clear it and retry.
    _kill_all_others()
    pid = os.fork()
  if pid == 0:
    _child(req, out_w, err_w, pytest_argv, verdict_fds)
  os.close(out_w)
  os.close(err_w)
  for fd in verdict_fds or ():
    os.close(fd)
  pidfd = os.pidfd_open(pid)
  buffers = {out_r: bytearray(), err_r: bytearray()}
  truncated = {out_r: False, err_r: False}
  limits_of = {out_r: limit, err_r: limit}
  open_fds = {out_r, err_r, pidfd}
  if chan_r is not None:
    buffers[chan_r] = bytearray()
    truncated[chan_r] = False
    limits_of[chan_r] = MAX_VERDICT_BYTES
    open_fds.add(chan_r)
  deadline = start + timeout
  timed_out = False
  memory_limit = int(req.get("memory_mb") or 0) * 1024 * 1024
  memory_exceeded = False
  next_memory_check = start
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
    if memory_limit and exited_at is None and now >= next_memory_check:
      next_memory_check = now + MEMORY_POLL_S
      if resident_memory_bytes(exclude=(1, os.getpid())) > memory_limit:
        memory_exceeded = True
        break
    wait = (min(deadline, exited_at + 0.05) if exited_at is not None else deadline) - now
    if memory_limit and exited_at is None:
      wait = min(wait, MEMORY_POLL_S)
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
      room = limits_of[fd] - len(buffers[fd])
      if room > 0:
        buffers[fd] += data[:room]
      if len(data) > room:
        truncated[fd] = True  # keep draining so the writer never blocks, but drop the bytes
  if timed_out or memory_exceeded:
    _kill_all_others()
  try:
    status = os.waitpid(pid, 0)[1]
  except ChildProcessError:  # already reaped while killing everything: it died of SIGKILL
    status = signal.SIGKILL
  duration = time.monotonic() - start
  for fd in (out_r, err_r, pidfd) + ((chan_r,) if chan_r is not None else ()):
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
  if memory_exceeded:
    limits.append("memory")
  err = bytes(buffers[err_r])
  out = bytes(buffers[out_r])
  for name, needles in LIMIT_MESSAGES.items():
    if any(n in err or n in out for n in needles):
      limits.append(name)
  for name, count in _cgroup_counters().items():
    if count > counters_before.get(name, 0):
      limits.append(name)
  if "procs" in limits and not timed_out:
    _kill_all_others()  # a fork bomb would otherwise keep the sandbox saturated
  if sig == signal.SIGXCPU:
    limits.append("cpu")
  if sig == signal.SIGXFSZ or b"File too large" in err:
    limits.append("file_size")
  reply = {
      "exit_code": exit_code, "signal": sig, "timed_out": timed_out,
      "stdout": out.decode("utf-8", "replace"), "stderr": err.decode("utf-8", "replace"),
      "stdout_truncated": truncated[out_r], "stderr_truncated": truncated[err_r],
      "duration_s": duration, "limits_hit": list(dict.fromkeys(limits)), "fast_path": pytest_argv is not None,
  }
  if chan_r is not None:
    reply["verdict_stream"] = bytes(buffers[chan_r]).decode("utf-8", "replace")
    reply["verdict_stream_truncated"] = truncated[chan_r]
  return reply


class PathError(Exception):
  pass


def _resolve(path, must_exist=False) -> str:
  """Real path of a workspace-relative path; refuses escapes (absolute, .., symlinks out)."""
  if not isinstance(path, str) or "\x00" in path:
    raise PathError(f"workspace path must be a string without NUL bytes, got {path!r}")
  if os.path.isabs(path):
    raise PathError(f"absolute paths are not allowed in the workspace: {path!r}")
  norm = os.path.normpath(path or ".")
  if norm == ".." or norm.startswith("../"):
    raise PathError(f"path escapes the workspace: {path!r}")
  root = os.path.realpath(WORKSPACE)
  real = os.path.realpath(os.path.join(root, norm))
  if real != root and not real.startswith(root + "/"):
    raise PathError(f"path {path!r} resolves outside the workspace (symlink?)")
  if must_exist and not os.path.lexists(real):
    raise FileNotFoundError(f"no such file in the workspace: {path!r}")
  return real


def file_op(req: dict) -> dict:
  """read / write / list inside the workspace (container backends; bwrap does this host-side)."""
  import base64
  op = req["op"]
  try:
    if op == "read":
      real = _resolve(req["path"], must_exist=True)
      if os.path.isdir(real):
        raise IsADirectoryError(f"{req['path']!r} is a directory")
      fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW)
      with os.fdopen(fd, "rb") as f:
        data = f.read(int(req.get("max_bytes", 1 << 30)))
      return {"data": base64.b64encode(data).decode()}
    if op == "write":
      real = _resolve(req["path"])
      os.makedirs(os.path.dirname(real), exist_ok=True)
      _resolve(os.path.relpath(real, os.path.realpath(WORKSPACE)))
      fd = os.open(real, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
      with os.fdopen(fd, "wb") as f:
        f.write(base64.b64decode(req["data"]))
      return {"ok": True}
    if op == "list":
      root = os.path.realpath(WORKSPACE)
      real = _resolve(req.get("path", "."), must_exist=True)
      if not os.path.isdir(real):
        return {"files": [os.path.relpath(real, root)]}
      out = []
      for dirpath, dirnames, filenames in os.walk(real):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        out += [os.path.relpath(os.path.join(dirpath, n), root) for n in filenames]
        out += [os.path.relpath(os.path.join(dirpath, d), root) for d in dirnames
                if os.path.islink(os.path.join(dirpath, d))]
        if len(out) >= 10000:
          break
      return {"files": sorted(out)[:10000]}
  except PathError as e:
    return {"file_error": "path", "message": str(e)}
  except FileNotFoundError as e:
    return {"file_error": "not_found", "message": str(e)}
  except IsADirectoryError as e:
    return {"file_error": "is_dir", "message": str(e)}
  except OSError as e:
    return {"file_error": "os", "message": f"{type(e).__name__}: {e}"}
  return {"file_error": "os", "message": f"unknown op {op!r}"}


def _import_grading_modules():
  """The grader's audit hook and outcome plugin, from the runtime folder next to this file."""
  here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "audit_site")
  sys.path.insert(0, here)
  try:
    import rlcoder_audit as audit
    import rlcoder_verdict as verdict
    return audit, verdict
  except Exception:
    return None, None
  finally:
    sys.path.remove(here)


rlcoder_audit = rlcoder_verdict = None


def main() -> None:
  global rlcoder_audit, rlcoder_verdict
  rlcoder_audit, rlcoder_verdict = _import_grading_modules()
  proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
  proto_out = os.fdopen(os.dup(1), "wb", buffering=0)
  devnull = os.open("/dev/null", os.O_RDWR)
  for fd in (0, 1, 2):
    os.dup2(devnull, fd)
  _set_not_dumpable()
  warm = os.environ.get("RLCODER_FORK_SERVER") == "1" and _preimport_pytest()
  if warm:
    _warm_up_pytest()
  # Everything imported so far lives for the server's lifetime: freezing it keeps the
  # children's garbage collections (pytest runs several) from walking, and copy-on-write
  # faulting, the whole pre-imported heap.
  import gc
  gc.collect()
  gc.freeze()
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
      elif req.get("op") in ("read", "write", "list"):
        reply = file_op(req)
      else:
        try:
          reply = run(req, warm)
        except Exception as e:  # a broken request must not take the server down
          reply = {"error": f"{type(e).__name__}: {e}"}
      proto_out.write(json.dumps(reply).encode() + b"\n")


if __name__ == "__main__":
  main()
