"""Isolation suite: every escape attempt must fail, for every sandbox backend.

Runs against the bubblewrap backend always and the Docker backend when an engine is reachable
(the image is built once, cached by tag, if missing).
"""

from __future__ import annotations

import os
import pathlib
import socket
import subprocess
import sys
import time
import uuid

import pytest

from sandbox import SandboxConfig, SandboxPathError, open_session

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "python3"  # on PATH in both backends


def _docker_config() -> SandboxConfig:
  try:
    import docker
    client = docker.from_env()
    client.ping()
  except Exception as e:  # no SDK or no engine: the docker variant cannot run here
    pytest.skip(f"no Docker engine reachable: {e}")
  config = SandboxConfig(backend="docker", pool_size=1, memory_mb=256, max_procs=64,
                         exec_timeout_s=10)
  try:
    client.images.get(config.docker_image)
  except docker.errors.ImageNotFound:
    # Built once and cached by tag; later runs reuse it.
    subprocess.run([sys.executable, os.path.join(REPO, "scripts", "build_sandbox_image.py"),
                    "--tag", config.docker_image], check=True, timeout=3600)
  return config


@pytest.fixture(scope="module", params=["local", pytest.param("docker", marks=pytest.mark.docker)])
def config(request) -> SandboxConfig:
  if request.param == "docker":
    return _docker_config()
  return SandboxConfig(backend="local", pool_size=1, memory_mb=256, max_procs=64,
                       exec_timeout_s=10)


@pytest.fixture
def workspace(tmp_path):
  ws = tmp_path / "ws"
  ws.mkdir()
  (ws / "main.py").write_text("print('hello')\n")
  return str(ws)


def _python(session, code: str, timeout: float = 10):
  session.write_file("_probe.py", code)
  return session.exec(f"{PY} _probe.py", timeout=timeout)


def _host_processes_with(marker: str) -> list[int]:
  found = []
  for entry in os.listdir("/proc"):
    if entry.isdigit():
      try:
        with open(f"/proc/{entry}/cmdline", "rb") as f:
          if marker.encode() in f.read():
            found.append(int(entry))
      except OSError:
        pass
  return found


def _wait_gone(marker: str, timeout: float = 10.0) -> list[int]:
  deadline = time.monotonic() + timeout
  while time.monotonic() < deadline:
    left = _host_processes_with(marker)
    if not left:
      return []
    time.sleep(0.1)
  return _host_processes_with(marker)


def test_no_tcp_to_host_loopback(config, workspace):
  listener = socket.socket()
  listener.bind(("127.0.0.1", 0))
  listener.listen(5)
  port = listener.getsockname()[1]
  try:
    with open_session(workspace, config) as s:
      r = _python(s, f"import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
                     "s.sendall(b'escaped')\nprint('CONNECTED')")
    assert "CONNECTED" not in r.stdout
    assert r.exit_code != 0
    listener.setblocking(False)
    with pytest.raises(BlockingIOError):  # nothing ever reached the host's listener
      listener.accept()
  finally:
    listener.close()


def test_no_dns_and_no_external_network(config, workspace):
  with open_session(workspace, config) as s:
    dns = _python(s, "import socket\nprint(socket.getaddrinfo('deb.debian.org', 80))")
    external = _python(s, "import socket\nsocket.create_connection(('1.1.1.1', 80), timeout=3)\n"
                          "print('CONNECTED')")
    interfaces = _python(s, "import socket\nprint(sorted(n for _, n in socket.if_nameindex()))")
  assert dns.exit_code != 0 and "gaierror" in dns.stderr
  assert external.exit_code != 0 and "CONNECTED" not in external.stdout
  assert interfaces.stdout.strip() == "['lo']"


def test_host_files_are_invisible(config, workspace, tmp_path):
  secret = tmp_path / "host_secret.txt"
  secret.write_text("TOP-SECRET")
  home = os.path.expanduser("~")
  beside = os.path.dirname(REPO)  # the checkout's neighbours: shared data, other checkouts
  targets = ["/etc/shadow", str(secret), os.path.join(REPO, "sandbox", "local.py"),
             os.path.join(REPO, ".git", "HEAD"), os.path.join(REPO, "requirements.txt"),
             os.path.join(home, ".bash_history"), os.path.join(home, ".bashrc")]
  code = ("import sys\nfor path in sys.argv[1:]:\n  try:\n    open(path).read(); print('READ', path)\n"
          "  except OSError as e:\n    print('DENIED', path, type(e).__name__)\n")
  with open_session(workspace, config) as s:
    s.write_file("_probe.py", code)
    r = s.exec(f"{PY} _probe.py " + " ".join(targets))
    listing = s.exec(f"ls -a {REPO} {home} {beside} 2>&1; true")
  assert r.exit_code == 0, r.stderr
  assert "READ" not in r.stdout
  assert r.stdout.count("DENIED") == len(targets)
  # The local backend binds the interpreter's venv and base Python read-only at their own paths
  # (the venv may live inside the checkout, or beside it): the folders on those paths show;
  # nothing else of the checkout, its neighbours or the home directory does.
  interpreter_dirs = {part for p in (sys.prefix, os.path.realpath(sys.prefix), sys.base_prefix)
                      for part in pathlib.PurePath(p).parts}
  visible = (set(listing.stdout.split()) - {".", ".."} - interpreter_dirs
             - {f"{REPO}:", f"{home}:", f"{beside}:"})
  assert not {"rl", "sandbox", ".git", "shared", "configs"} & visible, listing.stdout


def test_cannot_write_outside_workspace(config, workspace):
  marker = f"escape-{uuid.uuid4().hex}"
  targets = ["/usr/" + marker, "/opt/" + marker, "/etc/" + marker, "/" + marker,
             os.path.join(os.path.dirname(sys.executable), marker), f"{REPO}/{marker}"]
  code = ("import sys\nfor path in sys.argv[1:]:\n  try:\n    open(path, 'w').write('x'); "
          "print('WROTE', path)\n  except OSError as e:\n    print('DENIED', path)\n"
          f"open('/tmp/{marker}', 'w').write('private tmp')\nprint('TMP OK')\n")
  with open_session(workspace, config) as s:
    s.write_file("_probe.py", code)
    r = s.exec(f"{PY} _probe.py " + " ".join(targets))
  # A checkout under /tmp (as in some CI set-ups) sits inside the sandbox's private /tmp:
  # writing there lands in the sandbox's tmpfs, never on the host (checked below).
  wrote = [line.split(" ", 1)[1] for line in r.stdout.splitlines() if line.startswith("WROTE ")]
  assert all(path.startswith("/tmp/") for path in wrote) and "TMP OK" in r.stdout, r.stdout + r.stderr
  for path in targets + [f"/tmp/{marker}"]:
    assert not os.path.exists(path), path
  with pytest.raises(SandboxPathError):
    open_session(workspace, config).write_file("../" + marker, "x")


def test_fork_bomb_is_contained(config, workspace):
  with open_session(workspace, config.replace(max_procs=32)) as s:
    r = s.exec("bomb() { bomb | bomb & }; bomb; sleep 2", timeout=4)
    assert "procs" in r.limits_hit or r.timed_out
    start = time.monotonic()
    after = s.exec("echo alive", timeout=10)
    assert after.stdout.strip() == "alive"
  assert time.monotonic() - start < 10  # the host (and the session) stayed responsive


def test_python_fork_bomb_reports_the_process_limit(config, workspace):
  code = "import os, time\nchildren = 0\nwhile True:\n  if os.fork() == 0:\n    time.sleep(30)\n    os._exit(0)\n"
  with open_session(workspace, config.replace(max_procs=16)) as s:
    r = _python(s, code, timeout=5)
  assert "procs" in r.limits_hit, r


def test_memory_hog_is_killed_with_oom_flag(config, workspace):
  with open_session(workspace, config.replace(memory_mb=200)) as s:
    r = _python(s, "blocks = []\nwhile True:\n  blocks.append(bytearray(16 * 1024 * 1024))\n")
    assert r.oom_killed and "memory" in r.limits_hit, r
    assert r.exit_code != 0
    assert s.exec("echo still-usable").stdout.strip() == "still-usable"


def test_infinite_loop_and_background_child_die(config, workspace):
  marker = f"{uuid.uuid4().int % 10**6 + 1000}.{os.getpid() % 1000}"
  with open_session(workspace, config) as s:
    r = s.exec(f"sleep {marker} & {PY} -c 'while True: pass'", timeout=1.5)
    assert r.timed_out and "timeout" in r.limits_hit
    assert r.duration_s < 10
    bg = s.exec(f"(sleep {marker}1 &) ; echo started", timeout=5)
    assert bg.stdout.strip() == "started" and bg.duration_s < 3
  assert _wait_gone(f"sleep\x00{marker}") == []


def test_huge_output_is_truncated(config, workspace):
  with open_session(workspace, config.replace(output_limit_bytes=4096)) as s:
    r = s.exec("head -c 100000000 /dev/zero | tr '\\0' 'x'; echo done >&2", timeout=30)
  assert r.exit_code == 0
  assert r.stdout_truncated and len(r.stdout) == 4096
  assert r.stderr.strip() == "done" and not r.stderr_truncated


def test_symlink_to_host_file_does_not_leak(config, tmp_path):
  secret = tmp_path / "secret.txt"
  secret.write_text("TOP-SECRET")
  ws = tmp_path / "ws"
  ws.mkdir()
  os.symlink(str(secret), ws / "leak")
  os.symlink("/etc", ws / "etc_dir")
  with open_session(str(ws), config) as s:
    with pytest.raises(SandboxPathError):
      s.read_file("leak")
    with pytest.raises(SandboxPathError):
      s.read_file("etc_dir/hostname")
    with pytest.raises(SandboxPathError):
      s.write_file("etc_dir/evil", "x")
    r = s.exec("cat leak; cat etc_dir/shadow; true")
  assert "TOP-SECRET" not in r.stdout
  assert not os.path.exists("/etc/evil")


def test_concurrent_sessions_cannot_see_each_other(config, tmp_path):
  ws_a, ws_b = tmp_path / "a", tmp_path / "b"
  ws_a.mkdir()
  ws_b.mkdir()
  token = uuid.uuid4().hex
  (ws_a / "secret.txt").write_text(token)
  with open_session(str(ws_a), config) as a, open_session(str(ws_b), config) as b:
    a.exec(f"echo {token} > /tmp/{token}; sleep 30 &", timeout=5)
    paths = [f"/tmp/{token}", "/workspace/secret.txt"]
    host_ws = getattr(a, "host_workspace", None)
    if host_ws:
      paths.append(os.path.join(host_ws, "secret.txt"))
    r = b.exec("cat " + " ".join(paths) + f"; ps -eo args 2>/dev/null | grep -c 'sleep 30' ; true")
    assert token not in r.stdout
    assert b.list_files() == []


# The trainer's own packages and this project: code under test must never import them.
TRAINER_MODULES = ("jax", "jaxlib", "flax", "optax", "orbax", "transformers", "tokenizers",
                   "ml_collections", "absl", "tensorboardX", "docker", "rl", "sandbox", "configs")


def test_trainer_packages_are_not_importable(config, workspace):
  code = ("import importlib, sys\nfor name in sys.argv[1:]:\n  try:\n"
          "    importlib.import_module(name); print('IMPORTED', name)\n"
          "  except ImportError:\n    print('MISSING', name)\n")
  with open_session(workspace, config) as s:
    s.write_file("_probe.py", code)
    r = s.exec(f"{PY} _probe.py " + " ".join(TRAINER_MODULES))
  assert r.exit_code == 0, r.stderr
  assert "IMPORTED" not in r.stdout, r.stdout
  assert r.stdout.count("MISSING") == len(TRAINER_MODULES)


def test_runtime_packages_match_the_pins(config, workspace):
  """Both backends offer sandbox/requirements.txt at the pinned versions, and the same Python."""
  from sandbox import runtime_env
  pins = runtime_env.requirement_pins()
  code = ("import importlib.metadata as m, json, sys\n"
          "print(json.dumps({'python': list(sys.version_info[:2]),\n"
          "  'versions': {n: m.version(n) for n in sys.argv[1:]}}))\n")
  with open_session(workspace, config) as s:
    s.write_file("_probe.py", code)
    r = s.exec(f"{PY} _probe.py " + " ".join(sorted(pins)))
    tools = s.exec("pytest --version && python -m pytest --version")
  assert r.exit_code == 0, r.stderr
  import json
  found = json.loads(r.stdout)
  assert found["versions"] == pins
  assert found["python"] == list(runtime_env.runtime().version[:2])
  assert tools.exit_code == 0, tools.stderr
