"""Session API and the bubblewrap backend: files, exec, limits, pool hygiene, fork-server."""

from __future__ import annotations

import os
import time
import uuid

import pytest

from sandbox import (ExecResult, SandboxConfig, SandboxError, SandboxPathError, open_session)
from sandbox import local

CONFIG = SandboxConfig(backend="local", pool_size=1, memory_mb=512, exec_timeout_s=20)
TESTS = "from mod import add\n" + "".join(
    f"def test_{i}():\n  assert add({i}, 1) == {i + 1}\n" for i in range(5))


@pytest.fixture
def workspace(tmp_path):
  ws = tmp_path / "ws"
  (ws / "pkg").mkdir(parents=True)
  (ws / "mod.py").write_text("def add(a, b):\n  return a + b\n")
  (ws / "pkg" / "data.txt").write_text("data")
  (ws / "tests").mkdir()
  (ws / "tests" / "test_mod.py").write_text(TESTS)
  return str(ws)


def test_config_validation_and_mapping():
  with pytest.raises(ValueError, match="memory_mb"):
    SandboxConfig(memory_mb=0)
  with pytest.raises(ValueError, match="unknown sandbox config fields"):
    SandboxConfig.from_mapping({"backend": "local", "memroy_mb": 5})
  cfg = SandboxConfig.from_mapping({"backend": "docker", "docker_hosts": "tcp://h:2375"})
  assert cfg.docker_hosts == ("tcp://h:2375",)


def test_unknown_backend_lists_known_names(workspace):
  with pytest.raises(LookupError, match="docker, local"):
    open_session(workspace, CONFIG, backend="nope")


def test_missing_bubblewrap_names_install_command(workspace, monkeypatch):
  monkeypatch.setattr(local.shutil, "which", lambda name: None)
  with pytest.raises(SandboxError, match="apt-get install bubblewrap"):
    open_session(workspace, CONFIG)


def test_exec_and_files(workspace):
  with open_session(workspace, CONFIG) as s:
    r = s.exec("pwd; echo err >&2; exit 3")
    assert isinstance(r, ExecResult)
    assert (r.exit_code, r.stdout, r.stderr) == (3, "/workspace\n", "err\n")
    assert not r.timed_out and not r.oom_killed and r.duration_s > 0
    assert s.list_files() == ["mod.py", "pkg/data.txt", "tests/test_mod.py"]
    assert s.list_files("pkg") == ["pkg/data.txt"]
    s.write_file("pkg/new/deep.py", "x = 1\n")
    assert s.exec("cat pkg/new/deep.py").stdout == "x = 1\n"
    s.exec("echo from-sandbox > made.txt")
    assert s.read_file("made.txt") == "from-sandbox\n"
    with pytest.raises(FileNotFoundError):
      s.read_file("nope.txt")
    with pytest.raises(IsADirectoryError):
      s.read_file("pkg")
    out = os.path.join(os.path.dirname(workspace), "export")
    s.export_workspace(out)
    assert open(os.path.join(out, "made.txt")).read() == "from-sandbox\n"
  # The session worked on a copy: the original workspace is untouched.
  assert not os.path.exists(os.path.join(workspace, "made.txt"))
  assert s.closed
  with pytest.raises(SandboxError, match="closed"):
    s.exec("true")


@pytest.mark.parametrize("path", ["../x", "/etc/passwd", "pkg/../../x", "a/../../../etc"])
def test_path_escapes_are_refused(workspace, path):
  with open_session(workspace, CONFIG) as s:
    with pytest.raises(SandboxPathError):
      s.read_file(path)
    with pytest.raises(SandboxPathError):
      s.write_file(path, "x")


def test_symlink_made_inside_sandbox_is_refused(workspace, tmp_path):
  outside = tmp_path / "outside.txt"
  outside.write_text("host data")
  with open_session(workspace, CONFIG) as s:
    s.exec(f"ln -s {outside} link.txt; ln -s {tmp_path} dirlink; ln -s mod.py inside.py")
    with pytest.raises(SandboxPathError):
      s.read_file("link.txt")
    with pytest.raises(SandboxPathError):
      s.write_file("dirlink/outside.txt", "overwritten")
    assert s.read_file("inside.py").startswith("def add")  # links within the workspace work
  assert outside.read_text() == "host data"


def test_fifo_in_workspace_does_not_hang_export(workspace, tmp_path):
  with open_session(workspace, CONFIG) as s:
    s.exec("mkfifo trap.fifo && echo made")
    s.export_workspace(str(tmp_path / "out"))
  assert sorted(os.listdir(tmp_path / "out")) == ["mod.py", "pkg", "tests"]


def test_timeout_kills_setsid_escapees(workspace):
  marker = f"{uuid.uuid4().int % 10**6 + 1000}.{os.getpid() % 997}"
  with open_session(workspace, CONFIG) as s:
    r = s.exec(f"setsid sleep {marker} & sleep 60", timeout=1)
    assert r.timed_out and r.exit_code < 0
    assert s.exec("ps -eo args | grep -c '^sleep'").stdout.strip() == "0"


def test_file_size_limit(workspace):
  with open_session(workspace, CONFIG.replace(max_file_mb=1)) as s:
    r = s.exec("head -c 3000000 /dev/zero > big.bin")
    assert r.exit_code != 0 and "file_size" in r.limits_hit
    assert os.path.getsize(os.path.join(s.host_workspace, "big.bin")) <= 1024 * 1024


def test_fast_pytest_path_matches_a_fresh_interpreter(workspace):
  slow_cfg = CONFIG.replace(fork_server=False, pool_size=0)
  with open_session(workspace, CONFIG) as fast, open_session(workspace, slow_cfg) as slow:
    for s in (fast, slow):
      s.write_file("conftest.py", "def pytest_report_header():\n  return 'HEADER-FROM-CONFTEST'\n")
    runs = {}
    for name, s in (("fast", fast), ("slow", slow)):
      ok = s.exec("python -m pytest tests")
      s.write_file("mod.py", "def add(a, b):\n  return a - b\n")
      bad = s.exec("python -m pytest -q tests")
      env = s.exec("python -m pytest -q tests -x", env={"EXTRA_FLAG": "1"})
      runs[name] = (ok, bad, env)
  for ok, bad, env in runs.values():
    assert ok.exit_code == 0 and "5 passed" in ok.stdout and "HEADER-FROM-CONFTEST" in ok.stdout
    assert bad.exit_code == 1 and "5 failed" in bad.stdout
    assert env.exit_code == 1 and "1 failed" in env.stdout
    assert "Warning" not in ok.stdout + ok.stderr


def test_commands_see_no_variable_only_our_sandboxes_set(workspace):
  """A name only this project's sandboxes set (the server's own settings) would let code behave
  well only inside them: in the agent's commands, in grading and in the oracle alike, and
  wrong everywhere else. Neither a shell command nor the fork-server's pytest sees one."""
  with open_session(workspace, CONFIG) as s:
    s.write_file("tests/test_env.py", "import os\n\ndef test_env():\n"
                 "  assert not [k for k in os.environ if k.startswith('RLCODER')], sorted(os.environ)\n")
    shell = s.exec("env")
    assert shell.exit_code == 0 and "PATH=" in shell.stdout and "RLCODER" not in shell.stdout, shell.stdout
    pytest_run = s.exec("python -m pytest -q tests/test_env.py")
    assert pytest_run.exit_code == 0, pytest_run.stdout + pytest_run.stderr


def test_pool_sessions_share_nothing(workspace, tmp_path):
  other = tmp_path / "other"
  other.mkdir()
  cfg = CONFIG.replace(pool_size=1)
  local.warm_pool(cfg)
  pooled = list(local._get_pool(cfg).ready)
  token = uuid.uuid4().hex
  with open_session(workspace, cfg) as first:
    first.exec(f"echo {token} > /tmp/state; echo {token} > leftover.txt; "
               f"(sleep 3{token[:3].translate(str.maketrans('abcdef', '123456'))} &)")
    assert first._box in pooled  # served from the pool, and the pooled sandbox was alive
    first_ws = first.host_workspace
  time.sleep(0.5)  # let the pool thread finish: a sandbox must outlive the thread that made it
  local.warm_pool(cfg)
  pooled = list(local._get_pool(cfg).ready)
  with open_session(str(other), cfg) as second:
    r = second.exec("cat /tmp/state; ls; ps -eo args | grep -c '^sleep'; true")
    assert second._box in pooled
    assert second.host_workspace != first_ws
    assert token not in r.stdout
    assert r.stdout.split()[-1] == "0"
    assert second.list_files() == []
  assert not os.path.exists(first_ws)


def test_sandbox_starts_at_the_first_command(workspace):
  cfg = CONFIG.replace(pool_size=1)
  local.warm_pool(cfg)
  pool = local._get_pool(cfg)
  pooled = list(pool.ready)
  with open_session(workspace, cfg) as s:  # file tools only: no sandbox
    s.write_file("notes.txt", "draft")
    assert s.read_file("notes.txt") == "draft" and "notes.txt" in s.list_files()
    staging = s.host_workspace
    assert s._box is None and list(pool.ready) == pooled
  assert not os.path.exists(staging)
  with open_session(workspace, cfg) as s:
    s.write_file("notes.txt", "written before the sandbox ran")
    staging = s.host_workspace
    r = s.exec("cat notes.txt; echo more >> notes.txt")
    assert r.stdout == "written before the sandbox ran" and s._box in pooled
    assert not os.path.exists(staging)  # the workspace moved into the sandbox
    assert s.read_file("notes.txt").endswith("more\n")
    assert s.host_workspace == s._box.workspace


def test_server_killed_by_sandboxed_code_recovers(workspace):
  with open_session(workspace, CONFIG) as s:
    s.write_file("keep.txt", "kept")
    r = s.exec("kill -9 -1; sleep 1")
    assert r.exit_code != 0
    again = s.exec("cat keep.txt")
    assert again.stdout == "kept"


def test_close_leaves_nothing_behind(workspace):
  with open_session(workspace, CONFIG.replace(pool_size=0)) as s:
    s.exec("sleep 300 & echo started")
    ws = s.host_workspace
    box = s._box
    pid = box.proc.pid
    cgroups = dict(box.cgroups.paths)
  assert not os.path.exists(ws)
  assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"
  for path in cgroups.values():
    assert not os.path.exists(path)


@pytest.mark.slow
def test_two_hundred_sessions_leave_no_leftovers(workspace):
  marker = f"{uuid.uuid4().int % 10**5 + 1000}"
  # Without the fork-server a sandbox starts in a fraction of the time, which keeps this
  # test affordable on a small machine; the pool and teardown paths are the same.
  cfg = CONFIG.replace(pool_size=2, fork_server=False)
  used_dirs = []
  for i in range(200):
    with open_session(workspace, cfg) as s:
      used_dirs += [s.host_workspace, s.host_run_dir]
      if i % 20 == 0:
        assert s.exec(f"sleep {marker} & echo ok").stdout == "ok\n"
  local.shutdown()
  assert [d for d in used_dirs if os.path.exists(d)] == []
  assert len(local._live_sandboxes) == 0
  leftovers = []
  for entry in os.listdir("/proc"):
    if entry.isdigit():
      try:
        cmdline = open(f"/proc/{entry}/cmdline", "rb").read()
      except OSError:
        continue
      if f"sleep\x00{marker}".encode() in cmdline:
        leftovers.append(entry)
  assert leftovers == []
  cgroup_parent = os.path.join(local.CGROUP_ROOT, "pids", local.CGROUP_PARENT)
  if os.path.isdir(cgroup_parent):  # other processes' sandboxes may be there too
    ours = {os.path.basename(d) for d in used_dirs}
    assert [d for d in os.listdir(cgroup_parent) if d in ours] == []


def _fake_file(path, text=""):
  path.parent.mkdir(parents=True, exist_ok=True)
  path.write_text(text)


def test_cgroup_v1_limits_and_counters(tmp_path):
  for controller in ("pids", "memory"):
    _fake_file(tmp_path / controller / "tasks")
  groups = local._Cgroups("box", CONFIG.replace(max_procs=10, memory_mb=100), root=str(tmp_path))
  assert groups.mode == "v1"
  group = tmp_path / "memory" / local.CGROUP_PARENT / "box"
  assert (tmp_path / "pids" / local.CGROUP_PARENT / "box" / "pids.max").read_text() == "14"
  assert (group / "memory.limit_in_bytes").read_text() == str(196 * 1024 * 1024)
  (group / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n")
  (tmp_path / "pids" / local.CGROUP_PARENT / "box" / "pids.events").write_text("max 7\n")
  assert groups.oom_kills() == 3 and groups.pids_max_events() == 7


def test_cgroup_v2_enables_controllers_and_sets_limits(tmp_path):
  _fake_file(tmp_path / "cgroup.controllers", "cpu memory pids")
  _fake_file(tmp_path / "cgroup.subtree_control", "cpu")
  _fake_file(tmp_path / local.CGROUP_PARENT / "cgroup.subtree_control", "")
  groups = local._Cgroups("box", CONFIG.replace(max_procs=10, memory_mb=100), root=str(tmp_path))
  assert groups.mode == "v2"
  assert (tmp_path / "cgroup.subtree_control").read_text() == "+pids +memory"
  group = tmp_path / local.CGROUP_PARENT / "box"
  assert (group / "pids.max").read_text() == "14"
  assert (group / "memory.max").read_text() == str(196 * 1024 * 1024)
  (group / "memory.events").write_text("low 0\nhigh 0\nmax 2\noom 1\noom_kill 1\n")
  assert groups.oom_kills() == 1


def test_no_cgroups_means_rlimits_only(tmp_path):
  groups = local._Cgroups("box", CONFIG, root=str(tmp_path))
  assert groups.mode is None and groups.paths == {}
  assert list(tmp_path.iterdir()) == []  # nothing created in a non-cgroup directory
