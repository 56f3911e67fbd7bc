"""Local sandbox backend: one bubblewrap sandbox per session, a warm pool, a fork-server.

Each sandbox unshares every namespace (no network but its own loopback), sees /usr and the
sandbox runtime (`sandbox.runtime_env`: its own pinned virtualenv, never the trainer's) read-only, a private /tmp and a writable
/workspace bound from a fresh host directory, and nothing else of the host. Limits: rlimits
per command, plus pids/memory cgroups (v1 or v2) when this process may create them (root);
a command that times out has every process in its sandbox killed.
"""

from __future__ import annotations

import atexit
import collections
import concurrent.futures
import errno
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import warnings
import weakref
from typing import Mapping

from sandbox import api
from sandbox import runtime_env
from sandbox.api import ExecResult, SandboxConfig, SandboxError

INSTALL_HINT = "bubblewrap (bwrap) is not installed: run `apt-get install bubblewrap`"
RUNTIME_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runtime")
SANDBOX_RUNTIME = "/opt/rlcoder"  # read-only copy of sandbox/runtime inside the sandbox
SANDBOX_WORKSPACE = "/workspace"
# Where the sandbox runtime's virtualenv appears inside the sandbox, wherever it lives on the
# host: tracebacks and module paths an agent reads are then the same in every checkout.
SANDBOX_VENV = "/opt/venv"
# Writable scratch shared with trusted host-side code, outside the workspace.
SANDBOX_RUN = "/run/rlcoder"
SANDBOX_UID = 1000
CGROUP_ROOT = "/sys/fs/cgroup"
CGROUP_PARENT = "rlcoder_sandbox"
START_TIMEOUT_S = 60.0
# Host-side grace on top of a command's timeout before the server itself is presumed stuck.
SERVER_GRACE_S = 15.0

_live_sandboxes: "weakref.WeakSet[_Sandbox]" = weakref.WeakSet()
# bwrap's --die-with-parent (PR_SET_PDEATHSIG) fires when the *thread* that forked it exits,
# so every sandbox is forked from this one long-lived thread, never from a pool or worker
# thread that may finish before the sandbox is used.
_spawner = concurrent.futures.ThreadPoolExecutor(max_workers=1,
                                                 thread_name_prefix="sandbox-spawner")
_runtime_dir: str | None = None
_runtime_lock = threading.Lock()
_venv_bins: dict[str, str] = {}


def bwrap_path() -> str:
  path = shutil.which("bwrap")
  if path is None:
    raise SandboxError(INSTALL_HINT)
  return path


def _runtime() -> str:
  """A private host copy of sandbox/runtime (plus synthetic /etc files), bound read-only.

  Copying keeps the project checkout itself out of every sandbox.
  """
  global _runtime_dir
  with _runtime_lock:
    if _runtime_dir and os.path.isdir(_runtime_dir):
      return _runtime_dir
    path = tempfile.mkdtemp(prefix="rlcoder-runtime-")
    for name in os.listdir(RUNTIME_SOURCE):
      src = os.path.join(RUNTIME_SOURCE, name)
      if name.endswith(".py"):
        shutil.copy(src, os.path.join(path, name))
      elif os.path.isdir(src) and name != "__pycache__":
        shutil.copytree(src, os.path.join(path, name),
                        ignore=shutil.ignore_patterns("__pycache__"))
    etc = os.path.join(path, "etc")
    os.makedirs(etc)
    with open(os.path.join(etc, "passwd"), "w") as f:
      f.write(f"root:x:0:0::/:/usr/sbin/nologin\nsandbox:x:{SANDBOX_UID}:{SANDBOX_UID}::/tmp:/bin/sh\n"
              "nobody:x:65534:65534::/:/usr/sbin/nologin\n")
    with open(os.path.join(etc, "group"), "w") as f:
      f.write(f"root:x:0:\nsandbox:x:{SANDBOX_UID}:\nnogroup:x:65534:\n")
    with open(os.path.join(etc, "hosts"), "w") as f:
      f.write("127.0.0.1 localhost sandbox\n::1 localhost\n")
    with open(os.path.join(etc, "nsswitch.conf"), "w") as f:
      f.write("passwd: files\ngroup: files\nhosts: files dns\n")
    for root, dirs, files in os.walk(path):
      os.chmod(root, 0o755)
      for name in files:
        os.chmod(os.path.join(root, name), 0o644)
    _runtime_dir = path
    atexit.register(shutil.rmtree, path, True)
    return path


def _venv_bin(venv: str) -> str:
  """A private host copy of `venv`/bin for the sandbox's SANDBOX_VENV/bin: console scripts
  (`pytest`, `pip`) name their interpreter by its absolute host path, rewritten here to the
  mount point; the interpreter links are copied as they are."""
  with _runtime_lock:
    if venv in _venv_bins and os.path.isdir(_venv_bins[venv]):
      return _venv_bins[venv]
    path = tempfile.mkdtemp(prefix="rlcoder-venv-bin-")
    source = os.path.join(venv, "bin")
    host, mounted = venv.encode(), SANDBOX_VENV.encode()
    for name in os.listdir(source):
      src, dst = os.path.join(source, name), os.path.join(path, name)
      if os.path.islink(src):
        os.symlink(os.readlink(src), dst)
      elif os.path.isfile(src):
        with open(src, "rb") as f:
          data = f.read()
        with open(dst, "wb") as f:
          f.write(data.replace(host, mounted) if b"\0" not in data else data)
        os.chmod(dst, 0o755 if os.access(src, os.X_OK) else 0o644)
    os.chmod(path, 0o755)
    _venv_bins[venv] = path
    atexit.register(shutil.rmtree, path, True)
    return path


def _bwrap_argv(config: SandboxConfig, workspace: str, run_dir: str) -> list[str]:
  runtime = _runtime()
  argv = [bwrap_path(), "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
          "--new-session", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
          "--hostname", "sandbox", "--cap-drop", "ALL", "--clearenv"]
  # The private /tmp comes first: binds below may live under /tmp (a checkout or venv there)
  # and must be mounted on top of it, not hidden by it.
  argv += ["--size", str(config.tmp_mb * 1024 * 1024), "--tmpfs", "/tmp"]
  argv += ["--ro-bind", "/usr", "/usr"]
  for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
    if os.path.islink(top):
      argv += ["--symlink", os.readlink(top), top]
    elif os.path.isdir(top):
      argv += ["--ro-bind", top, top]
  # Only the few /etc entries programs need; /etc/shadow and friends stay out.
  for name in ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime",
               "ssl", "ca-certificates", "mime.types"):
    if os.path.exists(os.path.join("/etc", name)):
      argv += ["--ro-bind", os.path.join("/etc", name), os.path.join("/etc", name)]
  for name in ("passwd", "group", "hosts", "nsswitch.conf"):
    argv += ["--ro-bind", os.path.join(runtime, "etc", name), os.path.join("/etc", name)]
  python_env = runtime_env.runtime(config.python)
  python = python_env.python
  if python_env.venv:
    for root in python_env.roots:
      if not runtime_env.is_inside(root, python_env.venv):
        argv += ["--ro-bind", root, root]
    argv += ["--ro-bind", python_env.venv, SANDBOX_VENV,
             "--ro-bind", _venv_bin(python_env.venv), os.path.join(SANDBOX_VENV, "bin")]
    python = os.path.join(SANDBOX_VENV, "bin", os.path.basename(python_env.python))
  else:
    for root in python_env.roots:
      argv += ["--ro-bind", root, root]
  # The base interpreter's own site directories stay empty: only the pinned runtime is there.
  for site_dir in python_env.hidden_sites:
    argv += ["--tmpfs", site_dir, "--remount-ro", site_dir]
  for path in config.extra_ro_binds:
    argv += ["--ro-bind", path, path]
  if config.task_env_dir:
    argv += ["--ro-bind", config.task_env_dir, api.TASK_ENV_MOUNT]
  argv += ["--proc", "/proc", "--dev", "/dev",
           "--ro-bind", runtime, SANDBOX_RUNTIME,
           "--bind", workspace, SANDBOX_WORKSPACE,
           "--bind", run_dir, SANDBOX_RUN,
           # bwrap's root is a tmpfs: without this, /, /etc, /opt ... would be writable.
           "--remount-ro", "/",
           "--chdir", SANDBOX_WORKSPACE]
  # The server starts without the task's variables: a PYTHONPATH entry in the empty
  # workspace would be cached as missing in the interpreter every command is forked from.
  env = base_env(config.replace(python_path=(), task_env=(), task_env_dir=""))
  # The server's own settings; its commands run with base_env's variables, not these (a name
  # that only our sandboxes set is a switch for code that behaves well only inside them).
  env["RLCODER_FORK_SERVER"] = "1" if config.fork_server else "0"
  env["RLCODER_WORKSPACE"] = SANDBOX_WORKSPACE
  for key, value in env.items():
    argv += ["--setenv", key, value]
  argv += [python, "-s", "-B", os.path.join(SANDBOX_RUNTIME, "server.py")]
  return argv


def base_env(config: SandboxConfig) -> dict[str, str]:
  """The environment of the command server and its commands: the sandbox runtime first on PATH."""
  python_env = runtime_env.runtime(config.python)
  bin_dir = os.path.join(SANDBOX_VENV, "bin") if python_env.venv else python_env.bin_dir
  return {
      "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
      "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
      "USER": "sandbox", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1",
      "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
      "MPLBACKEND": "Agg",
      **api.task_environment(config),
  }


# cgroups whose last (zombie) task had not been released yet at removal; retried later.
_stale_cgroups: set[str] = set()


def _remove_stale_cgroups() -> None:
  for path in list(_stale_cgroups):
    try:
      os.rmdir(path)
      _stale_cgroups.discard(path)
    except FileNotFoundError:
      _stale_cgroups.discard(path)
    except OSError:
      pass


def cgroup_mode(root: str | None = None) -> str | None:
  """"v2" (unified hierarchy), "v1" (pids/memory controllers mounted), or None."""
  root = root or CGROUP_ROOT
  if os.path.exists(os.path.join(root, "cgroup.controllers")):
    return "v2"
  if any(os.path.exists(os.path.join(root, c, "tasks")) for c in ("pids", "memory")):
    return "v1"
  return None


class _Cgroups:
  """pids + memory cgroups for one sandbox (v1 or v2), when the host lets us create them.

  `paths` maps a controller to its group directory (the same directory for both on v2).
  """

  def __init__(self, name: str, config: SandboxConfig, root: str | None = None):
    _remove_stale_cgroups()
    self.root = root or CGROUP_ROOT
    self.mode = cgroup_mode(self.root)
    self.paths: dict[str, str] = {}
    try:
      if self.mode == "v1":
        self._create_v1(name, config)
      elif self.mode == "v2":
        self._create_v2(name, config)
    except OSError:
      self.remove()
      self.paths = {}

  def _create_v1(self, name: str, config: SandboxConfig) -> None:
    for controller in ("pids", "memory"):
      if not os.path.exists(os.path.join(self.root, controller, "tasks")):
        continue
      path = os.path.join(self.root, controller, CGROUP_PARENT, name)
      try:
        os.makedirs(path, exist_ok=True)
      except OSError:
        continue
      self.paths[controller] = path
    if "pids" in self.paths:
      # Room for bwrap's init and the command server on top of the command's processes.
      self._write("pids", "pids.max", str(config.max_procs + 4))
    if "memory" in self.paths:
      limit = str((config.memory_mb + 96) * 1024 * 1024)
      self._write("memory", "memory.limit_in_bytes", limit)
      if os.path.exists(os.path.join(self.paths["memory"], "memory.memsw.limit_in_bytes")):
        self._write("memory", "memory.memsw.limit_in_bytes", limit)

  def _create_v2(self, name: str, config: SandboxConfig) -> None:
    parent = os.path.join(self.root, CGROUP_PARENT)
    os.makedirs(parent, exist_ok=True)
    # Controllers must be enabled top-down; the root cgroup is exempt from the
    # no-internal-processes rule and our parent group holds no processes.
    for group in (self.root, parent):
      with open(os.path.join(group, "cgroup.subtree_control")) as f:
        enabled = set(f.read().split())
      missing = [c for c in ("pids", "memory") if c not in enabled]
      if missing:
        with open(os.path.join(group, "cgroup.subtree_control"), "w") as f:
          f.write(" ".join("+" + c for c in missing))
    path = os.path.join(parent, name)
    os.makedirs(path, exist_ok=True)
    self.paths = {"pids": path, "memory": path}
    self._write("pids", "pids.max", str(config.max_procs + 4))
    limit = str((config.memory_mb + 96) * 1024 * 1024)
    self._write("memory", "memory.max", limit)
    if os.path.exists(os.path.join(path, "memory.swap.max")):
      self._write("memory", "memory.swap.max", "0")

  def _write(self, controller: str, name: str, value: str) -> None:
    with open(os.path.join(self.paths[controller], name), "w") as f:
      f.write(value)

  def procs_files(self) -> list[str]:
    """The `cgroup.procs` files a process writes its pid to in order to join these groups."""
    return [os.path.join(path, "cgroup.procs") for path in sorted(set(self.paths.values()))]

  def _counter(self, controller: str, v1_file: str, v2_file: str, key: str) -> int:
    if controller not in self.paths:
      return 0
    name = v2_file if self.mode == "v2" else v1_file
    try:
      with open(os.path.join(self.paths[controller], name)) as f:
        for line in f:
          parts = line.split()
          if len(parts) == 2 and parts[0] == key:
            return int(parts[1])
    except (OSError, ValueError):
      pass
    return 0

  def oom_kills(self) -> int:
    return self._counter("memory", "memory.oom_control", "memory.events", "oom_kill")

  def pids_max_events(self) -> int:
    return self._counter("pids", "pids.events", "pids.events", "max")

  def kill_all(self) -> None:
    for path in set(self.paths.values()):
      for _ in range(50):
        try:
          with open(os.path.join(path, "cgroup.procs")) as f:
            pids = [int(p) for p in f.read().split()]
        except (OSError, ValueError):
          break
        if not pids:
          break
        for pid in pids:
          try:
            os.kill(pid, signal.SIGKILL)
          except OSError:
            pass
        time.sleep(0.005)

  def remove(self) -> None:
    for path in set(self.paths.values()):
      for attempt in range(100):
        try:
          os.rmdir(path)
          break
        except FileNotFoundError:
          break
        except OSError as e:
          if e.errno != errno.EBUSY or attempt == 99:
            _stale_cgroups.add(path)
            break
          time.sleep(0.01)


# Arguments: cgroup.procs files, "--", then the command to exec with the shell's pid.
_JOIN_CGROUPS_THEN_EXEC = ('while [ "$1" != "--" ]; do echo $$ > "$1" || exit 111; shift; done; '
                           'shift; exec "$@"')

_warned_root = False


def _warn_root_without_cgroups() -> None:
  global _warned_root
  if not _warned_root:
    _warned_root = True
    warnings.warn("running as root without usable cgroups: RLIMIT_NPROC does not bind processes "
                  "owned by root, so the sandbox process limit is not enforced (run as a normal "
                  "user, or make /sys/fs/cgroup writable)", RuntimeWarning, stacklevel=3)


class _Sandbox:
  """One bubblewrap sandbox running the command server, bound to a private host workspace."""

  def __init__(self, config: SandboxConfig):
    self.config = config
    self.workspace = tempfile.mkdtemp(prefix="rlcoder-ws-")
    self.run_dir = tempfile.mkdtemp(prefix="rlcoder-run-")
    os.chmod(self.run_dir, 0o755)
    self.name = os.path.basename(self.workspace)
    self.proc: subprocess.Popen | None = None
    self.cgroups: _Cgroups | None = None
    self.warm = False
    self._buffer = b""
    self.dead = False
    # kill() may race between a pool thread and shutdown() at exit.
    self._kill_lock = threading.RLock()
    _live_sandboxes.add(self)
    try:
      self.start()
    except BaseException:
      self.destroy()
      raise

  def start(self) -> None:
    self.cgroups = _Cgroups(self.name, self.config)
    if not self.cgroups.paths and os.geteuid() == 0:
      _warn_root_without_cgroups()
    argv = _bwrap_argv(self.config, self.workspace, self.run_dir)
    if self.cgroups.paths:
      # A small shell joins the cgroups and then becomes bwrap, so bwrap and everything it
      # starts are inside. Not a preexec_fn: that makes subprocess fork this multithreaded
      # (JAX) process and run Python in the child, which can deadlock; without one, the
      # child only execs.
      argv = ["/bin/sh", "-c", _JOIN_CGROUPS_THEN_EXEC, "sh",
              *self.cgroups.procs_files(), "--", *argv]
    self.proc = _spawner.submit(
        subprocess.Popen, argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, start_new_session=True).result()
    hello = self._read_reply(START_TIMEOUT_S)
    if hello is None or not hello.get("ready"):
      err = self._stderr_tail()
      self.kill()
      raise SandboxError(f"sandbox failed to start: {err or 'no reply from the command server'}")
    self.warm = bool(hello.get("warm"))
    self.dead = False

  def _stderr_tail(self) -> str:
    if self.proc is None or self.proc.stderr is None:
      return ""
    try:
      if select.select([self.proc.stderr], [], [], 0.5)[0]:
        return os.read(self.proc.stderr.fileno(), 4096).decode("utf-8", "replace").strip()
    except (OSError, ValueError):
      pass
    return ""

  def _read_reply(self, timeout: float) -> dict | None:
    """Reads one JSON line from the server; None on EOF or timeout."""
    deadline = time.monotonic() + timeout
    proc = self.proc
    if proc is None:
      return None
    try:
      fd = proc.stdout.fileno()
    except (OSError, ValueError):
      return None
    while b"\n" not in self._buffer:
      remaining = deadline - time.monotonic()
      if remaining <= 0:
        return None
      try:
        if not select.select([fd], [], [], remaining)[0]:
          return None
        chunk = os.read(fd, 1 << 20)
      except (OSError, ValueError):  # killed concurrently (shutdown at exit)
        return None
      if not chunk:
        return None
      self._buffer += chunk
    line, self._buffer = self._buffer.split(b"\n", 1)
    return json.loads(line)

  def request(self, req: dict, timeout: float) -> dict | None:
    if self.dead or self.proc is None or self.proc.poll() is not None:
      self.dead = True
      return None
    try:
      self.proc.stdin.write(json.dumps(req).encode() + b"\n")
      self.proc.stdin.flush()
    except (BrokenPipeError, OSError):
      self.dead = True
      return None
    reply = self._read_reply(timeout)
    if reply is None:
      self.dead = True
    return reply

  def kill(self) -> None:
    """Kills the whole sandbox: bwrap's init dies with it and takes the pid namespace down."""
    with self._kill_lock:
      self._kill_locked()

  def _kill_locked(self) -> None:
    if self.proc is not None:
      try:
        os.killpg(self.proc.pid, signal.SIGKILL)
      except OSError:
        pass
      try:
        self.proc.wait(timeout=10)
      except subprocess.TimeoutExpired:
        pass
      for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
        try:
          stream.close()
        except OSError:
          pass
      self.proc = None
    if self.cgroups is not None:
      self.cgroups.kill_all()
      self.cgroups.remove()
      self.cgroups = None
    self.dead = True

  def restart(self) -> None:
    self.kill()
    self._buffer = b""
    self.start()

  def destroy(self) -> None:
    with self._kill_lock:
      self._kill_locked()
    shutil.rmtree(self.workspace, ignore_errors=True)
    shutil.rmtree(self.run_dir, ignore_errors=True)
    _live_sandboxes.discard(self)


def _pool_key(config: SandboxConfig) -> tuple:
  return (config.memory_mb, config.max_procs, config.tmp_mb, config.fork_server,
          config.extra_ro_binds, config.python, config.task_env_dir)


class _Pool:
  """Pre-started sandboxes. Each serves exactly one session and is destroyed after it."""

  def __init__(self, config: SandboxConfig):
    self.config = config
    self.ready: collections.deque[_Sandbox] = collections.deque()
    self.lock = threading.Lock()
    self.filling = False
    self.thread: threading.Thread | None = None

  def take(self) -> _Sandbox | None:
    with self.lock:
      while self.ready:
        box = self.ready.popleft()
        if box.proc is not None and box.proc.poll() is None:
          return box
        box.destroy()
    return None

  def refill_async(self) -> None:
    with self.lock:
      if self.filling or len(self.ready) >= self.config.pool_size:
        return
      self.filling = True
      self.thread = threading.Thread(target=self._refill, daemon=True, name="sandbox-pool")
      self.thread.start()

  def _refill(self) -> None:
    try:
      while True:
        with self.lock:
          if len(self.ready) >= self.config.pool_size or _shutting_down:
            return
        try:
          box = _Sandbox(self.config)
        except SandboxError:
          return
        except RuntimeError:
          # The interpreter is exiting: concurrent.futures shuts its executors down before the
          # atexit handler that sets _shutting_down runs, and the spawner refuses new work.
          return
        with self.lock:
          if _shutting_down:
            box.destroy()
            return
          self.ready.append(box)
    finally:
      with self.lock:
        self.filling = False

  def drain(self) -> None:
    thread = self.thread
    if thread is not None and thread is not threading.current_thread():
      thread.join(START_TIMEOUT_S)
    with self.lock:
      boxes, self.ready = list(self.ready), collections.deque()
    for box in boxes:
      box.destroy()


_pools: dict[tuple, _Pool] = {}
_pools_lock = threading.Lock()
_shutting_down = False


def _get_pool(config: SandboxConfig) -> _Pool:
  key = _pool_key(config)
  with _pools_lock:
    if key not in _pools:
      _pools[key] = _Pool(config)
    pool = _pools[key]
    # The newest config wins for the pool size.
    pool.config = config
    return pool


def warm_pool(config: SandboxConfig, wait: bool = True, timeout: float = 60.0) -> None:
  """Starts `config.pool_size` sandboxes now (e.g. before a rollout), optionally waiting."""
  pool = _get_pool(config)
  pool.refill_async()
  deadline = time.monotonic() + timeout
  while wait and len(pool.ready) < config.pool_size and time.monotonic() < deadline:
    time.sleep(0.02)


def shutdown() -> None:
  """Destroys pooled and live sandboxes (also runs at interpreter exit)."""
  global _shutting_down
  _shutting_down = True
  for pool in list(_pools.values()):
    pool.drain()
  for box in list(_live_sandboxes):
    box.destroy()
  _remove_stale_cgroups()
  _shutting_down = False


atexit.register(shutdown)


class LocalSession(api.Session):
  """A session on a bubblewrap sandbox; see `sandbox.open_session`.

  The sandbox starts (or leaves the warm pool) at the session's first command: until then the
  file tools work on a private host copy of the workspace, which then moves into the sandbox.
  An episode that only lists, reads and edits files costs no sandbox at all.
  """

  def __init__(self, workspace_dir: str, config: SandboxConfig):
    bwrap_path()
    runtime_env.runtime(config.python)  # a missing runtime fails here, with the set-up hint
    if not os.path.isdir(workspace_dir):
      raise SandboxError(f"workspace directory does not exist: {workspace_dir!r}")
    self.config = config
    self._closed = False
    self._lock = threading.Lock()  # one command at a time
    self._move_lock = threading.Lock()  # file tools wait while the workspace moves in
    self._box: _Sandbox | None = None
    self._staging: str | None = tempfile.mkdtemp(prefix="rlcoder-session-")
    try:
      api.copy_tree(workspace_dir, self._staging)
    except BaseException:
      shutil.rmtree(self._staging, ignore_errors=True)
      self._closed = True
      raise

  @property
  def closed(self) -> bool:
    return self._closed

  @property
  def host_workspace(self) -> str:
    """The host directory holding the workspace (bound as /workspace once the sandbox runs);
    for trusted host-side code such as grading."""
    return self._box.workspace if self._box is not None else self._staging

  @property
  def host_run_dir(self) -> str:
    """Host directory bound read-write at /run/rlcoder (junit XML and audit logs)."""
    return self._sandbox().run_dir

  def _check_open(self) -> None:
    if self._closed:
      raise SandboxError("session is closed")

  def _sandbox(self) -> _Sandbox:
    """The session's sandbox, started (or taken from the pool) on first use."""
    if self._box is not None:
      return self._box
    pool = _get_pool(self.config) if self.config.pool_size > 0 else None
    box = pool.take() if pool else None
    if pool:
      pool.refill_async()
    if box is None:
      box = _Sandbox(self.config)
    with self._move_lock:
      try:
        api.copy_tree(self._staging, box.workspace)
      except BaseException:
        box.destroy()
        raise
      self._box = box
      shutil.rmtree(self._staging, ignore_errors=True)
      self._staging = None
    return box

  supports_verdict_channel = True

  def exec(self, command: str, timeout: float | None = None,
           env: Mapping[str, str] | None = None, verdict_key: bytes | None = None) -> ExecResult:
    self._check_open()
    if not isinstance(command, str) or not command.strip():
      raise ValueError(f"command must be a non-empty string, got {command!r}")
    timeout = float(self.config.exec_timeout_s if timeout is None else timeout)
    if timeout <= 0:
      raise ValueError(f"timeout must be positive, got {timeout}")
    full_env = base_env(self.config)
    if env:
      full_env.update({str(k): str(v) for k, v in env.items()})
    req = {"cmd": command, "timeout": timeout, "env": full_env,
           "output_limit": int(self.config.output_limit_bytes),
           "max_file_mb": self.config.max_file_mb, "max_procs": self.config.max_procs,
           "memory_mb": self.config.memory_mb}
    if verdict_key is not None:
      req["verdict_key"] = bytes(verdict_key).hex()
    with self._lock:
      box = self._sandbox()
      if box.dead:
        box.restart()  # sandboxed code killed the server earlier; the workspace survives
      oom_before = box.cgroups.oom_kills() if box.cgroups else 0
      pids_before = box.cgroups.pids_max_events() if box.cgroups else 0
      start = time.monotonic()
      reply = box.request(req, timeout + SERVER_GRACE_S)
      if reply is None or "error" in reply:
        detail = (reply or {}).get("error") or "the sandbox's command server died"
        box.kill()
        return ExecResult(exit_code=-9, stdout="", stderr=f"sandbox: {detail}",
                          duration_s=time.monotonic() - start,
                          timed_out=time.monotonic() - start >= timeout,
                          limits_hit=("timeout",) if time.monotonic() - start >= timeout else ())
      limits = list(reply["limits_hit"])
      oom = "memory" in limits
      if box.cgroups:
        if box.cgroups.oom_kills() > oom_before:
          oom = True
          limits.append("memory")
        if box.cgroups.pids_max_events() > pids_before:
          limits.append("procs")
    return ExecResult(
        exit_code=reply["exit_code"], stdout=reply["stdout"], stderr=reply["stderr"],
        stdout_truncated=reply["stdout_truncated"], stderr_truncated=reply["stderr_truncated"],
        verdict_stream=reply.get("verdict_stream"),
        verdict_stream_truncated=bool(reply.get("verdict_stream_truncated")),
        duration_s=reply["duration_s"], timed_out=reply["timed_out"], oom_killed=oom,
        limits_hit=tuple(dict.fromkeys(limits)))

  def read_file(self, path: str) -> str:
    self._check_open()
    with self._move_lock:
      return api.host_read_file(self.host_workspace, path)

  def write_file(self, path: str, content: str | bytes) -> None:
    self._check_open()
    with self._move_lock:
      api.host_write_file(self.host_workspace, path, content)

  def list_files(self, path: str = ".") -> list[str]:
    self._check_open()
    with self._move_lock:
      return api.host_list_files(self.host_workspace, path)

  def export_workspace(self, dest_dir: str) -> None:
    self._check_open()
    with self._move_lock:
      api.copy_tree(self.host_workspace, dest_dir)

  def close(self) -> None:
    if getattr(self, "_closed", True):
      return
    self._closed = True
    with self._move_lock:  # not the command lock: closing kills a running command
      if self._box is not None:
        self._box.destroy()
      if self._staging is not None:
        shutil.rmtree(self._staging, ignore_errors=True)
        self._staging = None


def open_local(workspace_dir: str, config: SandboxConfig) -> LocalSession:
  return LocalSession(workspace_dir, config)
