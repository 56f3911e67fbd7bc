"""The session API every sandbox backend implements: config, exec results, errors, paths.

Callers (rollouts, grading, scripts) only see these types; backends live in `local.py`
(bubblewrap) and `docker_backend.py` and are chosen by name with `SandboxConfig.backend`.
"""

from __future__ import annotations

import abc
import dataclasses
import os
import shutil
import stat
from typing import Any, Mapping


class SandboxError(RuntimeError):
  """A sandbox could not be created or used (missing tool, daemon error, dead session)."""


class SandboxPathError(SandboxError, ValueError):
  """A workspace path escapes the workspace (absolute, `..`, or a symlink pointing out)."""


def _from_mapping(cls, mapping: Mapping[str, Any] | Any, what: str) -> Any:
  """`cls(**mapping)` for a dataclass, with unknown keys named in one error."""
  items = dict(mapping.items()) if hasattr(mapping, "items") else dict(mapping)
  known = {f.name for f in dataclasses.fields(cls)}
  unknown = sorted(set(items) - known)
  if unknown:
    raise ValueError(f"unknown {what} {unknown}; known: {sorted(known)}")
  return cls(**items)


@dataclasses.dataclass(frozen=True)
class FaultInjection:
  """Failures made on purpose (sandbox.faults), to test how a run survives a flaky sandbox.

  Each rate is the share of calls of its kind that raise a `SandboxError` instead of running:
  `open_failure_rate` of session starts, `exec_failure_rate` of session calls (exec, read_file,
  write_file, list_files), `grade_failure_rate` of gradings. Decisions come from a random
  stream per kind seeded with `seed`, so a run fails the same calls again. All 0: no wrapper.
  """
  open_failure_rate: float = 0.0
  exec_failure_rate: float = 0.0
  grade_failure_rate: float = 0.0
  seed: int = 0

  def __post_init__(self):
    for name in ("open_failure_rate", "exec_failure_rate", "grade_failure_rate"):
      value = getattr(self, name)
      if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ValueError(f"FaultInjection.{name} must be a number in [0, 1], got {value!r}")

  @property
  def enabled(self) -> bool:
    return any(r > 0 for r in (self.open_failure_rate, self.exec_failure_rate, self.grade_failure_rate))

  @classmethod
  def from_mapping(cls, mapping: Mapping[str, Any] | Any) -> "FaultInjection":
    return _from_mapping(cls, mapping, "sandbox.fault_injection fields")


NO_FAULTS = FaultInjection()


@dataclasses.dataclass(frozen=True)
class SandboxConfig:
  """Limits and backend choice for sandbox sessions (mirrors `config.sandbox`).

  Attributes beyond the documented interface have defaults that suit the 2-core default run.
  """
  backend: str = "local"
  exec_timeout_s: float = 10.0
  memory_mb: int = 1024
  max_procs: int = 64
  max_file_mb: int = 64
  output_limit_bytes: int = 65536
  pool_size: int = 2
  docker_image: str = "rlcoder-sandbox:2"
  docker_hosts: tuple[str, ...] = ()
  max_concurrency: int = 4
  # Size of the private /tmp (tmpfs) inside a sandbox.
  tmp_mb: int = 256
  # Local backend: a Python fork-server with pytest imported serves `python -m pytest` runs.
  fork_server: bool = True
  # Extra read-only host paths to expose inside local sandboxes (e.g. a dataset directory).
  extra_ro_binds: tuple[str, ...] = ()
  # Local backend: the sandbox runtime's interpreter (sandbox/runtime_env.py); empty means
  # $RLCODER_SANDBOX_PYTHON, else .venv/sandbox/bin/python.
  python: str = ""
  # Docker backend settings.
  docker_cpus: float = 1.0
  docker_user: str = "1000:1000"
  docker_retries: int = 3
  # Test and drill setting: fail a share of opens, session calls and gradings on purpose.
  fault_injection: FaultInjection = NO_FAULTS
  # A task's own environment (its metadata's python_path, env and built setup; set per task
  # by the caller, empty for the shared default): workspace-relative import roots put first on
  # PYTHONPATH, extra environment variables, and a host directory built by the task's setup
  # commands, bound read-only and put on PYTHONPATH after the workspace (local backend).
  python_path: tuple[str, ...] = ()
  task_env: tuple[tuple[str, str], ...] = ()
  task_env_dir: str = ""

  def __post_init__(self):
    for name in ("exec_timeout_s", "memory_mb", "max_procs", "max_file_mb", "output_limit_bytes",
                 "max_concurrency", "tmp_mb"):
      value = getattr(self, name)
      if not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"SandboxConfig.{name} must be a positive number, got {value!r}")
    if self.pool_size < 0:
      raise ValueError(f"SandboxConfig.pool_size must be >= 0, got {self.pool_size!r}")
    if isinstance(self.docker_hosts, str):
      object.__setattr__(self, "docker_hosts", (self.docker_hosts,) if self.docker_hosts else ())
    object.__setattr__(self, "docker_hosts", tuple(self.docker_hosts))
    object.__setattr__(self, "extra_ro_binds", tuple(self.extra_ro_binds))
    if isinstance(self.python_path, str):
      object.__setattr__(self, "python_path", (self.python_path,) if self.python_path else ())
    object.__setattr__(self, "python_path", tuple(check_relative(p) for p in self.python_path))
    env_items = self.task_env.items() if hasattr(self.task_env, "items") else self.task_env
    object.__setattr__(self, "task_env", tuple(sorted((str(k), str(v)) for k, v in env_items)))
    if not isinstance(self.fault_injection, FaultInjection):
      object.__setattr__(self, "fault_injection", FaultInjection.from_mapping(self.fault_injection))

  @classmethod
  def from_mapping(cls, mapping: Mapping[str, Any] | Any) -> "SandboxConfig":
    """Builds a config from `config.sandbox` (a ConfigDict or dict); unknown keys are errors."""
    return _from_mapping(cls, mapping, "sandbox config fields")

  def replace(self, **changes: Any) -> "SandboxConfig":
    return dataclasses.replace(self, **changes)


WORKSPACE_MOUNT = "/workspace"  # where every backend mounts the workspace
TASK_ENV_MOUNT = "/opt/rlcoder-task-env"  # a task's built environment, read-only
TASK_ENV_VAR = "RLCODER_TASK_ENV"


def task_pythonpath(config: SandboxConfig) -> list[str]:
  """PYTHONPATH entries of a task: its workspace import roots, then its built environment.

  They come before the sandbox runtime's site-packages, so the workspace's own package always
  wins over an installed copy of the same distribution (at whatever version).
  """
  paths = [WORKSPACE_MOUNT if p == "." else f"{WORKSPACE_MOUNT}/{p}" for p in config.python_path]
  if config.task_env_dir:
    paths.append(f"{TASK_ENV_MOUNT}/site")
  return paths


def task_environment(config: SandboxConfig) -> dict[str, str]:
  """Environment variables a task adds to every command (its `env`, PYTHONPATH, the env dir)."""
  env = dict(config.task_env)
  paths = task_pythonpath(config)
  if paths:
    env["PYTHONPATH"] = ":".join(paths + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
  if config.task_env_dir:
    env[TASK_ENV_VAR] = TASK_ENV_MOUNT
  return env


def merge_pythonpath(env: Mapping[str, str], extra: str) -> str:
  """`extra` appended to env's PYTHONPATH (a caller's own entries go after the task's)."""
  return ":".join(p for p in (env.get("PYTHONPATH", ""), extra) if p)


@dataclasses.dataclass
class ExecResult:
  """What one command did. Outputs are capped at `output_limit_bytes` each."""
  exit_code: int
  stdout: str
  stderr: str
  stdout_truncated: bool = False
  stderr_truncated: bool = False
  duration_s: float = 0.0
  timed_out: bool = False
  oom_killed: bool = False
  # Which limits the command ran into: "timeout", "memory", "procs", "cpu", "file_size".
  limits_hit: tuple[str, ...] = ()
  # Grading runs only (exec(..., verdict_key=...)): the signed outcome stream the test process
  # wrote to a pipe only the command server reads (sandbox/runtime/audit_site/rlcoder_verdict.py).
  verdict_stream: str | None = None
  verdict_stream_truncated: bool = False

  def to_dict(self) -> dict[str, Any]:
    return dataclasses.asdict(self)


class Session(abc.ABC):
  """One isolated sandbox holding a private copy of a workspace.

  Use as a context manager; `close()` kills every process the session started and removes
  the sandbox. A session is never reused for another episode.
  """

  config: SandboxConfig
  # Whether exec() takes `verdict_key` (the outcome channel grading reads its verdict from).
  supports_verdict_channel = False

  @abc.abstractmethod
  def exec(self, command: str, timeout: float | None = None,
           env: Mapping[str, str] | None = None) -> ExecResult:
    """Runs `command` with /bin/sh in the workspace root."""

  @abc.abstractmethod
  def read_file(self, path: str) -> str:
    """Returns a workspace file's text (undecodable bytes replaced)."""

  @abc.abstractmethod
  def write_file(self, path: str, content: str | bytes) -> None:
    """Writes a workspace file, creating parent directories."""

  @abc.abstractmethod
  def list_files(self, path: str = ".") -> list[str]:
    """Files under `path` (recursive), as sorted paths relative to the workspace root."""

  @abc.abstractmethod
  def export_workspace(self, dest_dir: str) -> None:
    """Copies the current workspace out to `dest_dir` on the host (symlinks kept as links)."""

  @abc.abstractmethod
  def close(self) -> None:
    """Kills all processes of the session and frees its resources; idempotent."""

  @property
  @abc.abstractmethod
  def closed(self) -> bool:
    ...

  def __enter__(self) -> "Session":
    return self

  def __exit__(self, *exc_info) -> None:
    self.close()

  def __del__(self):
    try:
      self.close()
    except Exception:  # interpreter shutdown: nothing useful left to do
      pass


# ---------------------------------------------------------------------------
# Workspace path confinement shared by backends whose workspace is a host directory.

MAX_LISTED_FILES = 10000


def check_relative(path: str) -> str:
  """Normalises a workspace-relative path, refusing absolute paths and `..` escapes."""
  if not isinstance(path, str) or "\x00" in path:
    raise SandboxPathError(f"workspace path must be a string without NUL bytes, got {path!r}")
  if os.path.isabs(path):
    raise SandboxPathError(f"absolute paths are not allowed in the workspace: {path!r}")
  normalized = os.path.normpath(path or ".")
  if normalized == ".." or normalized.startswith("../"):
    raise SandboxPathError(f"path escapes the workspace: {path!r}")
  return normalized


def resolve_in_root(root: str, path: str, *, must_exist: bool = False) -> str:
  """Returns the real host path of `path` inside `root`; symlinks pointing out are refused."""
  rel = check_relative(path)
  real_root = os.path.realpath(root)
  real = os.path.realpath(os.path.join(real_root, rel))
  if real != real_root and not real.startswith(real_root + os.sep):
    raise SandboxPathError(f"path {path!r} resolves outside the workspace (symlink?)")
  if must_exist and not os.path.lexists(real):
    raise FileNotFoundError(f"no such file in the workspace: {path!r}")
  return real


def _open_no_symlinks(real_root: str, real_path: str, flags: int, mode: int = 0o644) -> int:
  """Opens `real_path` walking from `real_root` without following any symlink.

  `resolve_in_root` already resolved symlinks; walking again with O_NOFOLLOW closes the race
  where sandboxed code swaps a directory for a symlink between the check and the open.
  """
  rel = os.path.relpath(real_path, real_root)
  parts = [] if rel == "." else rel.split(os.sep)
  dir_fd = os.open(real_root, os.O_RDONLY | os.O_DIRECTORY)
  try:
    for part in parts[:-1]:
      try:
        next_fd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
      except OSError as e:
        raise SandboxPathError(f"cannot open directory {part!r} in the workspace: {e}") from None
      os.close(dir_fd)
      dir_fd = next_fd
    if not parts:
      raise IsADirectoryError("the workspace root is a directory, not a file")
    try:
      return os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=dir_fd)
    except OSError as e:
      if e.errno == 40:  # ELOOP: the final component became a symlink
        raise SandboxPathError(f"refusing to follow a symlink: {rel!r}") from None
      raise
  finally:
    os.close(dir_fd)


def host_read_file(root: str, path: str, max_bytes: int | None = None) -> str:
  real_root = os.path.realpath(root)
  real = resolve_in_root(root, path, must_exist=True)
  if os.path.isdir(real):
    raise IsADirectoryError(f"{path!r} is a directory")
  fd = _open_no_symlinks(real_root, real, os.O_RDONLY)
  with os.fdopen(fd, "rb") as f:
    if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
      raise SandboxPathError(f"{path!r} is not a regular file")
    data = f.read() if max_bytes is None else f.read(max_bytes)
  return data.decode("utf-8", errors="replace")


def host_write_file(root: str, path: str, content: str | bytes) -> None:
  if isinstance(content, str):
    content = content.encode("utf-8")
  if not isinstance(content, (bytes, bytearray)):
    raise TypeError(f"file content must be str or bytes, got {type(content).__name__}")
  real_root = os.path.realpath(root)
  real = resolve_in_root(root, path)
  if real == real_root:
    raise SandboxPathError("cannot write to the workspace root itself")
  parent = os.path.dirname(real)
  os.makedirs(parent, exist_ok=True)
  # The parent may have been created through a racing symlink; re-resolve before writing.
  resolve_in_root(root, os.path.relpath(real, real_root))
  fd = _open_no_symlinks(real_root, real, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
  with os.fdopen(fd, "wb") as f:
    f.write(content)


def host_list_files(root: str, path: str = ".") -> list[str]:
  real_root = os.path.realpath(root)
  real = resolve_in_root(root, path, must_exist=True)
  if not os.path.isdir(real):
    return [os.path.relpath(real, real_root)]
  out: list[str] = []
  for dirpath, dirnames, filenames in os.walk(real):  # os.walk does not follow dir symlinks
    dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
    for name in filenames:
      out.append(os.path.relpath(os.path.join(dirpath, name), real_root))
      if len(out) >= MAX_LISTED_FILES:
        return sorted(out)
    # Symlinked directories are listed as entries, not descended into.
    out.extend(os.path.relpath(os.path.join(dirpath, d), real_root) for d in dirnames
               if os.path.islink(os.path.join(dirpath, d)))
  return sorted(out)


def _copy_regular_only(src: str, dst: str) -> None:
  # FIFOs, sockets and devices made by sandboxed code are skipped: opening a FIFO to copy it
  # would block the host forever.
  if stat.S_ISREG(os.lstat(src).st_mode):
    shutil.copy2(src, dst)


def copy_tree(src: str, dst: str) -> None:
  """Copies a workspace directory tree, keeping symlinks as symlinks (never following them)."""
  if not os.path.isdir(src):
    raise SandboxError(f"workspace directory does not exist: {src!r}")
  shutil.copytree(src, dst, symlinks=True, dirs_exist_ok=True, copy_function=_copy_regular_only)
