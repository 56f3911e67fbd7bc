"""A task's own sandbox settings: its import roots, variables, limits, image and built setup.

`task_sandbox_config(task, base)` turns a task's metadata (`rl.tasks.format.TaskEnvironment`)
into the `SandboxConfig` its episodes, gradings and checks run with. A task with `setup`
commands gets an environment directory built once by `build_task_env`: the commands run in a
sandbox on a copy of repo/ and install into `$RLCODER_TASK_ENV/site`; the directory is cached
under a hash of repo/, the commands and the runtime, and bound read-only into later sandboxes.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import shutil
import tempfile
import threading
from typing import Any

from rl.tasks.format import Task, TaskError

BUILD_DIR = ".rlcoder_task_env"  # inside the build sandbox's workspace
BUILD_TIMEOUT_S = 600.0
_build_lock = threading.Lock()
_memo_lock = threading.Lock()
_built_dirs: dict[tuple, str] = {}


def cache_root() -> pathlib.Path:
  base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
  return pathlib.Path(base) / "rlcoder" / "task-envs"


def task_env_key(task: Task, base: Any) -> str:
  """Hash of what decides a built environment: repo/ bytes, the commands, the runtime."""
  h = hashlib.sha256(json.dumps([list(task.environment.setup), str(getattr(base, "python", "")),
                                 str(getattr(base, "backend", "local"))]).encode())
  for p in sorted(task.repo_dir.rglob("*")):
    if p.is_file() and not p.is_symlink():
      h.update(p.relative_to(task.repo_dir).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
  return h.hexdigest()[:32]


def build_task_env(task: Task, base: Any, *, cache_dir: str | os.PathLike | None = None) -> str:
  """The host directory holding the task's built environment (built now if not cached).

  Raises TaskError naming the command when a setup command fails.
  """
  from sandbox import open_session  # pylint: disable=import-outside-toplevel
  env = task.environment
  root = pathlib.Path(cache_dir) if cache_dir else cache_root()
  target = root / task_env_key(task, base)
  if (target / "site").is_dir():
    return str(target)
  with _build_lock:
    if (target / "site").is_dir():
      return str(target)
    root.mkdir(parents=True, exist_ok=True)
    config = base.replace(python_path=env.python_path, task_env=env.env, task_env_dir="")
    if env.memory_mb:
      config = config.replace(memory_mb=env.memory_mb)
    with tempfile.TemporaryDirectory(prefix="rlcoder-setup-", dir=root) as tmp:
      with open_session(str(task.repo_dir), config) as session:
        variables = {"RLCODER_TASK_ENV": f"/workspace/{BUILD_DIR}",
                     "PYTHONPATH": f"/workspace/{BUILD_DIR}/site"}
        session.exec(f"mkdir -p {BUILD_DIR}/site", timeout=30)
        for command in env.setup:
          result = session.exec(command, timeout=BUILD_TIMEOUT_S, env=variables)
          if result.exit_code != 0:
            tail = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
            raise TaskError(f"task {task.id!r}: setup command {command!r} failed with exit code "
                            f"{result.exit_code}: {tail[0][:300]}")
        session.export_workspace(os.path.join(tmp, "ws"))
      built = pathlib.Path(tmp) / "ws" / BUILD_DIR
      staged = pathlib.Path(tmp) / "env"
      shutil.move(str(built), staged)
      for dirpath, dirnames, filenames in os.walk(staged):  # readable by the sandbox's uid
        os.chmod(dirpath, 0o755)
        for name in filenames:
          path = os.path.join(dirpath, name)
          if not os.path.islink(path):
            os.chmod(path, 0o755 if os.access(path, os.X_OK) else 0o644)
      try:
        os.replace(staged, target)
      except OSError:  # another process built it meanwhile
        if not (target / "site").is_dir():
          raise
    os.chmod(root, 0o755)
  return str(target)


def task_sandbox_config(task: Any, base: Any, *, build: bool = True) -> Any:
  """`base` with the task's python_path, env, limits, image and built setup applied.

  Tasks without any of these fields get `base` itself, so the shared warm pool serves them.
  """
  environment = getattr(task, "environment", None)
  if environment is None or base is None or not hasattr(base, "replace"):
    return base
  changes: dict[str, Any] = {}
  if environment.python_path:
    changes["python_path"] = environment.python_path
  if environment.env:
    changes["task_env"] = environment.env
  if environment.memory_mb:
    changes["memory_mb"] = environment.memory_mb
  if environment.max_procs:
    changes["max_procs"] = environment.max_procs
  if environment.image and getattr(base, "backend", "") == "docker":
    changes["docker_image"] = environment.image
  if environment.setup and build and "docker_image" not in changes:
    if getattr(base, "backend", "local") != "local":
      raise TaskError(f"task {task.id!r}: setup commands are built for the local backend; on "
                      f"{base.backend!r} give the task an image with its environment instead")
    # Hashing repo/ for every episode would cost more than the episode on a large repository.
    memo_key = (str(task.dir), getattr(task, "version", ""), environment.setup, base.python, base.backend)
    with _memo_lock:
      built = _built_dirs.get(memo_key)
    if built is None or not os.path.isdir(built):
      built = build_task_env(task, base)
      with _memo_lock:
        _built_dirs[memo_key] = built
    changes["task_env_dir"] = built
  return base.replace(**changes) if changes else base
