"""Docker sandbox backend: one locked-down container per session, driven by the command server.

Containers run the same command server as the bubblewrap backend (sandbox/runtime/server.py)
as their main process over an attached stdin/stdout stream, so an exec costs a round trip on
that stream instead of a `docker exec`. No network, read-only root filesystem, tmpfs /tmp,
workspace copied into a per-container volume, all capabilities dropped, no-new-privileges,
non-root user, pids/memory/CPU limits. Containers are labelled and removed on close, when
this process exits (and, since the server exits when its stdin closes and containers are
auto-removed, when it crashes); `reap()` removes leftovers of dead owners.
"""

from __future__ import annotations

import atexit
import collections
import io
import json
import os
import select
import socket
import struct
import tarfile
import threading
import time
from typing import Any, Callable, Mapping

from sandbox import api
from sandbox.api import ExecResult, SandboxConfig, SandboxError, SandboxPathError

LABEL = "rlcoder.sandbox"
LABEL_OWNER = "rlcoder.owner"  # "<hostname>:<pid>" of the process that created it
WORKSPACE = "/workspace"
RUNTIME = "/opt/rlcoder"
START_TIMEOUT_S = 60.0
SERVER_GRACE_S = 15.0
BUILD_HINT = "build it with `python scripts/build_sandbox_image.py --tag {image}`"
_OWNER = f"{socket.gethostname()}:{os.getpid()}"


def _docker():
  try:
    import docker
  except ImportError as e:
    raise SandboxError("the docker backend needs the `docker` Python package "
                       "(pip install docker)") from e
  return docker


def _retry(config: SandboxConfig, fn: Callable[[], Any], what: str) -> Any:
  """Calls `fn`, retrying daemon-side and connection errors with backoff."""
  docker = _docker()
  import requests
  for attempt in range(config.docker_retries + 1):
    try:
      return fn()
    except docker.errors.ImageNotFound as e:
      raise SandboxError(f"docker image {config.docker_image!r} not found: "
                         + BUILD_HINT.format(image=config.docker_image)) from e
    except docker.errors.NotFound:
      raise
    except (docker.errors.APIError, requests.exceptions.ConnectionError,
            requests.exceptions.Timeout) as e:
      status = getattr(e, "status_code", None)
      if (status is not None and status < 500) or attempt == config.docker_retries:
        raise SandboxError(f"docker {what} failed: {e}") from e
      time.sleep(0.2 * 2 ** attempt)


class _Host:
  """One Docker engine with its client, a concurrency limit and pooled containers."""

  def __init__(self, url: str | None, config: SandboxConfig):
    docker = _docker()
    try:
      self.client = docker.DockerClient(base_url=url) if url else docker.from_env()
      self.client.ping()
    except Exception as e:
      raise SandboxError(f"cannot reach the Docker engine {url or os.environ.get('DOCKER_HOST', '(default)')}: {e}") from e
    self.url = url or os.environ.get("DOCKER_HOST", "")
    self.semaphore = threading.BoundedSemaphore(config.max_concurrency)
    self.active = 0
    self.lock = threading.Lock()
    self.pool: collections.deque[_Container] = collections.deque()
    self.filling = False
    self.thread: threading.Thread | None = None
    base = self.client.api.base_url
    # A bind mount of the runtime only works when the engine shares our filesystem.
    self.is_local = base.startswith("http+docker://local") or base.startswith("http+docker://")
    self.is_local = self.is_local and not self.url.startswith(("tcp://", "ssh://"))
    reap(self.client)


_hosts: dict[tuple, list[_Host]] = {}
_hosts_lock = threading.Lock()
_live: "set[_Container]" = set()
_shutting_down = False


def _get_hosts(config: SandboxConfig) -> list[_Host]:
  key = (config.docker_hosts, config.max_concurrency)
  with _hosts_lock:
    if key not in _hosts:
      urls = list(config.docker_hosts) or [None]
      _hosts[key] = [_Host(url, config) for url in urls]
    return _hosts[key]


class _Container:
  """A started container running the command server, attached over stdin/stdout."""

  def __init__(self, host: _Host, config: SandboxConfig):
    self.host = host
    self.config = config
    self.id: str | None = None
    self.sock = None
    self.raw = None
    self._buffer = b""
    self.dead = False
    _live.add(self)
    try:
      self._start()
    except BaseException:
      self.destroy()
      raise

  def _start(self) -> None:
    docker = _docker()
    api_client = self.host.client.api
    cfg = self.config
    binds = {}
    if self.host.is_local:
      from sandbox import local  # the host-side private copy of the runtime files
      binds[local._runtime()] = {"bind": RUNTIME, "mode": "ro"}
    host_config = api_client.create_host_config(
        network_mode="none", read_only=True, auto_remove=True,
        tmpfs={"/tmp": f"rw,nosuid,nodev,size={cfg.tmp_mb}m"},
        cap_drop=["ALL"], security_opt=["no-new-privileges"],
        pids_limit=cfg.max_procs + 4,
        mem_limit=f"{cfg.memory_mb + 96}m", memswap_limit=f"{cfg.memory_mb + 96}m",
        nano_cpus=int(cfg.docker_cpus * 1e9), binds=binds or None,
        mounts=[docker.types.Mount(WORKSPACE, None, type="volume")],
        ulimits=[docker.types.Ulimit(name="core", soft=0, hard=0)])
    env = dict(base_env())
    # The server's own settings; its commands run with base_env's variables only (local.py).
    env["RLCODER_FORK_SERVER"] = "1" if cfg.fork_server else "0"
    env["RLCODER_WORKSPACE"] = WORKSPACE
    created = _retry(cfg, lambda: api_client.create_container(
        cfg.docker_image, ["python3", "-s", "-B", f"{RUNTIME}/server.py"], user=cfg.docker_user,
        stdin_open=True, detach=False, working_dir=WORKSPACE, environment=env,
        hostname="sandbox", labels={LABEL: "1", LABEL_OWNER: _OWNER}, host_config=host_config),
        "create")
    self.id = created["Id"]
    self.sock = _retry(cfg, lambda: api_client.attach_socket(
        self.id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}), "attach")
    self.raw = getattr(self.sock, "_sock", self.sock)
    _retry(cfg, lambda: api_client.start(self.id), "start")
    hello = self._read_reply(START_TIMEOUT_S)
    if not hello or not hello.get("ready"):
      raise SandboxError(f"container {self.id[:12]} did not start its command server: {hello}")

  def _read_frame(self, deadline: float) -> tuple[int, bytes] | None:
    def read_exact(n: int) -> bytes | None:
      data = b""
      while len(data) < n:
        remaining = deadline - time.monotonic()
        try:
          if remaining <= 0 or not select.select([self.raw], [], [], remaining)[0]:
            return None
          chunk = self.raw.recv(n - len(data))
        except (OSError, ValueError):  # closed concurrently (shutdown at exit)
          return None
        if not chunk:
          return None
        data += chunk
      return data
    header = read_exact(8)
    if header is None:
      return None
    size = struct.unpack(">I", header[4:])[0]
    payload = read_exact(size)
    return None if payload is None else (header[0], payload)

  def _read_reply(self, timeout: float) -> dict | None:
    deadline = time.monotonic() + timeout
    while b"\n" not in self._buffer:
      frame = self._read_frame(deadline)
      if frame is None:
        return None
      stream, payload = frame
      if stream == 1:
        self._buffer += payload
    line, self._buffer = self._buffer.split(b"\n", 1)
    return json.loads(line)

  def request(self, req: dict, timeout: float) -> dict | None:
    if self.dead:
      return None
    try:
      self.raw.sendall(json.dumps(req).encode() + b"\n")
    except OSError:
      self.dead = True
      return None
    reply = self._read_reply(timeout)
    if reply is None:
      self.dead = True
    return reply

  def put_workspace(self, workspace_dir: str) -> None:
    data = _tar_workspace(workspace_dir)
    ok = _retry(self.config, lambda: self.host.client.api.put_archive(self.id, WORKSPACE, data),
                "put_archive")
    if not ok:
      raise SandboxError("copying the workspace into the container failed")

  def get_workspace_tar(self) -> bytes:
    stream, _ = _retry(self.config, lambda: self.host.client.api.get_archive(
        self.id, WORKSPACE + "/."), "get_archive")
    return b"".join(stream)

  def destroy(self) -> None:
    self.dead = True
    for closable in (self.raw, self.sock):
      try:
        if closable is not None:
          closable.close()
      except Exception:
        pass
    if self.id is not None:
      docker = _docker()
      try:
        _retry(self.config, lambda: self.host.client.api.remove_container(
            self.id, force=True, v=True), "remove")
      except (docker.errors.NotFound, SandboxError):
        pass  # auto-removed already, or the engine is gone (the reaper catches it later)
      self.id = None
    _live.discard(self)


def base_env() -> dict[str, str]:
  return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp",
          "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "USER": "sandbox",
          "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1", "OPENBLAS_NUM_THREADS": "1",
          "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg"}


def _tar_workspace(workspace_dir: str) -> bytes:
  """The workspace as a tar owned by the sandbox user (symlinks kept, never followed)."""
  uid, _, gid = "1000:1000".partition(":")
  buf = io.BytesIO()
  with tarfile.open(fileobj=buf, mode="w") as tar:
    for dirpath, dirnames, filenames in os.walk(workspace_dir):
      dirnames.sort()
      for name in sorted(dirnames) + sorted(filenames):
        path = os.path.join(dirpath, name)
        info = tar.gettarinfo(path, arcname=os.path.relpath(path, workspace_dir))
        info.uid, info.gid, info.uname, info.gname = int(uid), int(gid), "sandbox", "sandbox"
        if info.isreg():
          with open(path, "rb") as f:
            tar.addfile(info, f)
        else:
          tar.addfile(info)
  return buf.getvalue()


def _extract_safely(tar_bytes: bytes, dest_dir: str) -> None:
  """Extracts a workspace tar, skipping members that would land outside `dest_dir`."""
  os.makedirs(dest_dir, exist_ok=True)
  with tarfile.open(fileobj=io.BytesIO(tar_bytes)) as tar:
    def keep_inside(member, path):
      try:
        return tarfile.data_filter(member, path)
      except tarfile.FilterError:
        return None
    for member in tar.getmembers():
      name = member.name
      if name in (".", "./"):
        continue
      tar.extract(member, dest_dir, filter=keep_inside)


def reap(client=None, only_dead_owners: bool = True) -> int:
  """Removes labelled sandbox containers whose owner process is gone; returns how many."""
  docker = _docker()
  client = client or docker.from_env()
  removed = 0
  try:
    containers = client.api.containers(all=True, filters={"label": LABEL})
  except Exception:
    return 0
  host = socket.gethostname()
  for info in containers:
    owner = (info.get("Labels") or {}).get(LABEL_OWNER, "")
    owner_host, _, pid = owner.rpartition(":")
    if only_dead_owners and owner_host == host and pid.isdigit():
      if pid == str(os.getpid()) or os.path.exists(f"/proc/{pid}"):
        continue
    elif only_dead_owners and owner_host != host:
      continue  # another machine's sandbox: its own reaper decides
    try:
      client.api.remove_container(info["Id"], force=True, v=True)
      removed += 1
    except Exception:
      pass
  return removed


def _pool_refill(host: _Host, config: SandboxConfig) -> None:
  try:
    while not _shutting_down:
      with host.lock:
        if len(host.pool) >= config.pool_size:
          return
      try:
        box = _Container(host, config)
      except Exception:  # engine trouble: sessions will start containers themselves
        return
      with host.lock:
        host.pool.append(box)
  finally:
    with host.lock:
      host.filling = False


def _take(host: _Host, config: SandboxConfig) -> _Container:
  with host.lock:
    box = None
    while host.pool:
      candidate = host.pool.popleft()
      if not candidate.dead and candidate.config == config:
        box = candidate
        break
      threading.Thread(target=candidate.destroy, daemon=True).start()
    if config.pool_size > 0 and not host.filling:
      host.filling = True
      host.thread = threading.Thread(target=_pool_refill, args=(host, config), daemon=True,
                                     name="docker-sandbox-pool")
      host.thread.start()
  return box or _Container(host, config)


def warm_pool(config: SandboxConfig, wait: bool = True, timeout: float = 120.0) -> None:
  for host in _get_hosts(config):
    with host.lock:
      start = not host.filling
      host.filling = True
    if start:
      host.thread = threading.Thread(target=_pool_refill, args=(host, config), daemon=True,
                                     name="docker-sandbox-pool")
      host.thread.start()
    deadline = time.monotonic() + timeout
    while wait and len(host.pool) < config.pool_size and time.monotonic() < deadline:
      time.sleep(0.05)


def shutdown() -> None:
  """Removes pooled and live containers (also runs at interpreter exit)."""
  global _shutting_down
  _shutting_down = True
  for hosts in list(_hosts.values()):
    for host in hosts:
      if host.thread is not None and host.thread is not threading.current_thread():
        host.thread.join(START_TIMEOUT_S)
      with host.lock:
        boxes, host.pool = list(host.pool), collections.deque()
      for box in boxes:
        box.destroy()
  for box in list(_live):
    box.destroy()
  _shutting_down = False


atexit.register(shutdown)


class DockerSession(api.Session):
  """A session on a Docker container; see `sandbox.open_session`."""

  def __init__(self, workspace_dir: str, config: SandboxConfig):
    if not os.path.isdir(workspace_dir):
      raise SandboxError(f"workspace directory does not exist: {workspace_dir!r}")
    self.config = config
    self._closed = True
    self._lock = threading.Lock()
    hosts = _get_hosts(config)
    self._host = min(hosts, key=lambda h: h.active)
    self._host.semaphore.acquire()
    with self._host.lock:
      self._host.active += 1
    self._closed = False
    try:
      self._box = _take(self._host, config)
      self._box.put_workspace(workspace_dir)
    except BaseException:
      self.close()
      raise

  @property
  def closed(self) -> bool:
    return self._closed

  @property
  def container_id(self) -> str | None:
    return self._box.id if getattr(self, "_box", None) else None

  def _check_open(self) -> None:
    if self._closed:
      raise SandboxError("session is closed")
    if self._box.dead:
      raise SandboxError("the sandbox container died")

  supports_verdict_channel = True

  def exec(self, command: str, timeout: float | None = None,
           env: Mapping[str, str] | None = None, verdict_key: bytes | None = None) -> ExecResult:
    if not isinstance(command, str) or not command.strip():
      raise ValueError(f"command must be a non-empty string, got {command!r}")
    timeout = float(self.config.exec_timeout_s if timeout is None else timeout)
    if timeout <= 0:
      raise ValueError(f"timeout must be positive, got {timeout}")
    self._check_open()
    full_env = base_env()
    full_env.update(api.task_environment(self.config))
    if env:
      full_env.update({str(k): str(v) for k, v in env.items()})
    req = {"cmd": command, "timeout": timeout, "env": full_env,
           "output_limit": int(self.config.output_limit_bytes),
           "max_file_mb": self.config.max_file_mb, "max_procs": 0,  # pids cgroup instead
           "memory_mb": self.config.memory_mb}
    if verdict_key is not None:
      req["verdict_key"] = bytes(verdict_key).hex()
    start = time.monotonic()
    with self._lock:
      reply = self._box.request(req, timeout + SERVER_GRACE_S)
    if reply is None or "error" in reply:
      detail = (reply or {}).get("error") or "the container's command server died"
      elapsed = time.monotonic() - start
      return ExecResult(exit_code=-9, stdout="", stderr=f"sandbox: {detail}", duration_s=elapsed,
                        timed_out=elapsed >= timeout,
                        limits_hit=("timeout",) if elapsed >= timeout else ())
    limits = tuple(reply["limits_hit"])
    return ExecResult(
        exit_code=reply["exit_code"], stdout=reply["stdout"], stderr=reply["stderr"],
        stdout_truncated=reply["stdout_truncated"], stderr_truncated=reply["stderr_truncated"],
        verdict_stream=reply.get("verdict_stream"),
        verdict_stream_truncated=bool(reply.get("verdict_stream_truncated")),
        duration_s=reply["duration_s"], timed_out=reply["timed_out"],
        oom_killed="memory" in limits, limits_hit=limits)

  def _file_op(self, req: dict) -> dict:
    self._check_open()
    with self._lock:
      reply = self._box.request(req, SERVER_GRACE_S)
    if reply is None:
      raise SandboxError("the container's command server died")
    kind = reply.get("file_error")
    if kind == "path":
      raise SandboxPathError(reply["message"])
    if kind == "not_found":
      raise FileNotFoundError(reply["message"])
    if kind == "is_dir":
      raise IsADirectoryError(reply["message"])
    if kind:
      raise SandboxError(reply["message"])
    return reply

  def read_file(self, path: str) -> str:
    import base64
    reply = self._file_op({"op": "read", "path": path})
    return base64.b64decode(reply["data"]).decode("utf-8", errors="replace")

  def write_file(self, path: str, content: str | bytes) -> None:
    import base64
    if isinstance(content, str):
      content = content.encode("utf-8")
    if not isinstance(content, (bytes, bytearray)):
      raise TypeError(f"file content must be str or bytes, got {type(content).__name__}")
    self._file_op({"op": "write", "path": path, "data": base64.b64encode(content).decode()})

  def list_files(self, path: str = ".") -> list[str]:
    return self._file_op({"op": "list", "path": path})["files"]

  def export_workspace(self, dest_dir: str) -> None:
    self._check_open()
    _extract_safely(self._box.get_workspace_tar(), dest_dir)

  def close(self) -> None:
    if getattr(self, "_closed", True):
      return
    self._closed = True
    box = getattr(self, "_box", None)
    if box is not None:
      box.destroy()
    with self._host.lock:
      self._host.active -= 1
    self._host.semaphore.release()


def open_docker(workspace_dir: str, config: SandboxConfig) -> DockerSession:
  return DockerSession(workspace_dir, config)
