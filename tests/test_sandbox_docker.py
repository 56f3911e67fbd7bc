"""Docker backend specifics: container hardening, cleanup on close/crash, reaper, retries.

Skipped when no Docker engine is reachable; the image is built once (cached by tag).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from sandbox import SandboxConfig, SandboxError, open_session

pytestmark = pytest.mark.docker
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def client():
  docker = pytest.importorskip("docker")
  try:
    c = docker.from_env()
    c.ping()
  except Exception as e:
    pytest.skip(f"no Docker engine reachable: {e}")
  return c


@pytest.fixture(scope="module")
def config(client):
  import docker
  cfg = SandboxConfig(backend="docker", pool_size=1, memory_mb=256, max_procs=48, exec_timeout_s=20)
  try:
    client.images.get(cfg.docker_image)
  except docker.errors.ImageNotFound:
    subprocess.run([sys.executable, os.path.join(REPO, "scripts", "build_sandbox_image.py"),
                    "--tag", cfg.docker_image], check=True, timeout=3600)
  return cfg


@pytest.fixture
def workspace(tmp_path):
  ws = tmp_path / "ws"
  (ws / "pkg").mkdir(parents=True)
  (ws / "pkg" / "mod.py").write_text("X = 1\n")
  os.symlink("mod.py", ws / "pkg" / "alias.py")
  return str(ws)


def _labelled(client) -> set[str]:
  # The low-level listing: containers.list() inspects each listed id, which fails with 404 for
  # one removed in between (the sessions remove theirs while this polls).
  return {c["Id"] for c in client.api.containers(all=True, filters={"label": "rlcoder.sandbox"})}


def test_container_is_locked_down(client, config, workspace):
  with open_session(workspace, config) as s:
    attrs = client.api.inspect_container(s.container_id)
    host = attrs["HostConfig"]
    assert host["NetworkMode"] == "none" and host["ReadonlyRootfs"] is True
    assert host["CapDrop"] == ["ALL"] and "no-new-privileges" in host["SecurityOpt"]
    assert host["PidsLimit"] == config.max_procs + 4 and host["Memory"] > 0
    assert host["NanoCpus"] == int(config.docker_cpus * 1e9)
    assert attrs["Config"]["User"] == "1000:1000"
    assert attrs["Config"]["Labels"]["rlcoder.sandbox"] == "1"
    assert not [m for m in attrs["Mounts"] if m["Destination"] == "/workspace" and m["Type"] == "bind"]
    r = s.exec("id -u; touch /usr/x 2>&1; cat /proc/self/status | grep CapEff; ls -l pkg")
    assert r.stdout.splitlines()[0] == "1000"
    assert "Read-only file system" in r.stdout
    assert "CapEff:\t0000000000000000" in r.stdout
    assert "alias.py -> mod.py" in r.stdout  # the workspace copy keeps symlinks as links
    s.exec("echo 2 > pkg/new.txt")
    out = os.path.join(os.path.dirname(workspace), "export")
    s.export_workspace(out)
    assert open(os.path.join(out, "pkg", "new.txt")).read() == "2\n"
    cid = s.container_id
  deadline = time.monotonic() + 10
  while cid in _labelled(client) and time.monotonic() < deadline:
    time.sleep(0.2)
  assert cid not in _labelled(client)


def test_crashed_owner_leaves_no_container(client, config, workspace):
  script = textwrap.dedent(f"""
      import os, sys
      sys.path.insert(0, {REPO!r})
      from sandbox import open_session, SandboxConfig
      s = open_session({workspace!r}, SandboxConfig(backend="docker", pool_size=0))
      print(s.container_id, flush=True)
      os.kill(os.getpid(), 9)
  """)
  out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
  cid = out.stdout.strip()
  assert cid, out.stderr
  deadline = time.monotonic() + 30
  while cid in _labelled(client) and time.monotonic() < deadline:
    time.sleep(0.5)
  assert cid not in _labelled(client)


def test_reaper_removes_containers_of_dead_owners(client, config):
  from sandbox import docker_backend
  finished = subprocess.Popen(["true"])
  finished.wait()
  dead_pid = finished.pid  # a pid that is not running any more
  container = client.containers.create(
      config.docker_image, ["sleep", "300"], network_mode="none",
      labels={docker_backend.LABEL: "1",
              docker_backend.LABEL_OWNER: f"{docker_backend.socket.gethostname()}:{dead_pid}"})
  try:
    assert docker_backend.reap(client) >= 1
    assert container.id not in _labelled(client)
  finally:
    try:
      container.remove(force=True)
    except Exception:
      pass


def test_retries_daemon_errors_then_gives_up(config):
  import docker
  from sandbox import docker_backend
  calls = []
  response = lambda code: type("Response", (), {"status_code": code, "url": "u", "reason": "r"})()

  def flaky():
    calls.append(1)
    if len(calls) < 3:
      raise docker.errors.APIError("boom", response=response(500))
    return "ok"

  assert docker_backend._retry(config, flaky, "test") == "ok" and len(calls) == 3

  def broken():
    raise docker.errors.APIError("down", response=response(503))

  with pytest.raises(SandboxError, match="docker test failed"):
    docker_backend._retry(config.replace(docker_retries=1), broken, "test")


def test_missing_image_names_the_build_command(config, workspace):
  with pytest.raises(SandboxError, match="build_sandbox_image.py"):
    open_session(workspace, config.replace(docker_image="rlcoder-no-such-image:0", pool_size=0))


def test_grading_in_docker(config, tmp_path):
  from sandbox.grading import grade
  ws = tmp_path / "ws"
  ws.mkdir()
  (ws / "calc.py").write_text("def add(a, b):\n  return a + b\n")
  (ws / "conftest.py").write_text("raise SystemExit('agent conftest must not run')\n")
  hidden = tmp_path / "hidden"
  hidden.mkdir()
  (hidden / "test_calc.py").write_text("from calc import add\n\ndef test_add():\n  assert add(1, 2) == 3\n"
                                       "\ndef test_peek():\n  import calc, socket\n  assert add(0, 0) == 0\n")
  report = grade(str(ws), str(hidden), config=config,
                 expected_tests=["tests/test_calc.py::test_add", "tests/test_calc.py::test_peek"])
  assert report.all_passed, report.log
  assert report.passed == 2


@pytest.mark.slow
def _owned(client) -> set[str]:
  """Sandbox containers this process made (other test workers make their own meanwhile)."""
  from sandbox import docker_backend
  owner = f"{docker_backend.LABEL_OWNER}={docker_backend._OWNER}"  # pylint: disable=protected-access
  return {c["Id"] for c in client.api.containers(all=True, filters={"label": owner})}


def test_many_sessions_leave_no_containers(client, config, workspace):
  before = _owned(client)
  cfg = config.replace(pool_size=2, fork_server=False)
  ids = []
  # 40 by default (~1 s per container here); RLCODER_DOCKER_SESSIONS=200 runs the 200.
  for i in range(int(os.environ.get("RLCODER_DOCKER_SESSIONS", "40"))):
    with open_session(workspace, cfg) as s:
      ids.append(s.container_id)
      if i % 10 == 0:
        assert s.exec("sleep 100 & echo ok").stdout == "ok\n"
  from sandbox import docker_backend
  docker_backend.shutdown()
  deadline = time.monotonic() + 20
  while set(ids) & _labelled(client) and time.monotonic() < deadline:
    time.sleep(0.2)
  assert set(ids) & _labelled(client) == set()
  # the pool's spare containers too; compared by owner, since a test running beside this one in
  # another worker may hold a labelled container of its own at this moment
  assert _owned(client) - before == set()


def test_several_engines_and_concurrency_limit(config, workspace):
  import threading
  url = "unix:///var/run/docker.sock"
  if not os.path.exists("/var/run/docker.sock"):
    pytest.skip("the engine is not on the default unix socket")
  two_hosts = config.replace(docker_hosts=(url, url), pool_size=0, fork_server=False)
  with open_session(workspace, two_hosts) as a, open_session(workspace, two_hosts) as b:
    assert a._host is not b._host  # spread over the configured engines
    assert a.exec("echo a").stdout == "a\n" and b.exec("echo b").stdout == "b\n"
  limited = config.replace(docker_hosts=(url,), max_concurrency=1, pool_size=0, fork_server=False)
  first = open_session(workspace, limited)
  opened = threading.Event()

  def open_second():
    with open_session(workspace, limited):
      opened.set()

  thread = threading.Thread(target=open_second)
  thread.start()
  assert not opened.wait(1.5)  # blocked by max_concurrency=1
  first.close()
  assert opened.wait(60)
  thread.join(60)
