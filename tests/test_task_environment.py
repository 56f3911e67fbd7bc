"""A task's own environment in the real sandbox: import roots that beat installed packages,
variables, built setup folders, per-task limits on resident memory, byte-exact grading, and
the grading removing only what it must."""

import os
import pathlib
import shutil
import subprocess

import pytest

from rl.tasks import TaskError, write_task
from rl.tasks.environment import build_task_env, task_sandbox_config
from sandbox import SandboxConfig, open_session
from sandbox.grading import grade, prepare_grading_copy
from sandbox.runtime_env import requirement_pins, runtime_python

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
CONFIG = SandboxConfig(backend="local", pool_size=0, memory_mb=512, exec_timeout_s=60)


def _task(root, tid, repo, tests, dest="tests", command="python -m pytest -q tests", **meta):
  return write_task(root, statement="Make it work.", repo_files=repo, test_files=tests,
                    metadata={"id": tid, "source": "unit", "license": "MIT", "hidden_tests_dest": dest,
                              "test_command": command, "timeout_s": 60, **meta})


def _grade(task, workspace=None, config=CONFIG):
  return grade(str(workspace or task.repo_dir), str(task.tests_dir), task.hidden_tests_dest, task.test_command,
               task.timeout_s, config=task_sandbox_config(task, config), pristine_dir=str(task.repo_dir))


@pytest.mark.parametrize("layout,package", [("src", "iniconfig"), (".", "iniconfig"), ("src", "packaging")])
def test_workspace_package_wins_over_the_installed_one(tmp_path, layout, package):
  """`iniconfig` and `packaging` are installed in the sandbox runtime (pytest needs them, and
  the fork-server has already imported iniconfig); a task on that library must import the
  workspace's copy."""
  assert requirement_pins()[package] != "0.0.1+workspace"
  prefix = "" if layout == "." else f"{layout}/"
  # The workspace holds the library's own code (pytest itself imports the workspace's copy in
  # a fresh interpreter, as upstream CI does), marked with another version.
  source = pathlib.Path(subprocess.run([runtime_python(), "-c", f"import {package}; print({package}.__file__)"],
                                       capture_output=True, text=True, check=True).stdout.strip()).parent
  repo = {f"{prefix}{package}/{p.relative_to(source)}": p.read_bytes() for p in source.rglob("*")
          if p.is_file() and "__pycache__" not in p.parts}
  repo[f"{prefix}{package}/__init__.py"] += b"\n__version__ = '0.0.1+workspace'\n"
  tests = {f"test_{package}.py": f"import {package}\n\n\ndef test_version():\n"
                                 f"    assert {package}.__file__.startswith('/workspace/'), {package}.__file__\n"
                                 f"    assert {package}.__version__ == '0.0.1+workspace'\n"}
  with_path = _task(tmp_path, f"{package}-ok", repo, tests, python_path=[layout])
  report = _grade(with_path)
  assert report.all_passed, report.log
  if layout != ".":
    # Without the import root, the installed release (another version) is what loads.
    report = _grade(_task(tmp_path, f"{package}-bare", repo, tests))
    assert not report.all_passed and report.failed == 1, report.log


def test_env_and_built_setup_are_visible(tmp_path):
  repo = {"m.py": "import builtmod\nimport os\n\nMODE = os.environ['TASK_MODE']\nVALUE = builtmod.VALUE\n"}
  tests = {"test_m.py": "import m\n\n\ndef test_m():\n    assert (m.MODE, m.VALUE) == ('strict', 42)\n"}
  task = _task(tmp_path / "root", "setup", repo, tests, env={"TASK_MODE": "strict"},
               setup=["printf 'VALUE = 42\\n' > \"$RLCODER_TASK_ENV/site/builtmod.py\""])
  cache = tmp_path / "cache"
  built = build_task_env(task, CONFIG, cache_dir=cache)
  assert (pathlib.Path(built) / "site" / "builtmod.py").read_text() == "VALUE = 42\n"
  assert build_task_env(task, CONFIG, cache_dir=cache) == built  # cached by content
  config = CONFIG.replace(python_path=("." ,), task_env=task.environment.env, task_env_dir=built)
  report = grade(str(task.repo_dir), str(task.tests_dir), "tests", task.test_command, 60, config=config,
                 pristine_dir=str(task.repo_dir))
  assert report.all_passed, report.log
  with open_session(str(task.repo_dir), config) as s:  # read-only at episode time
    r = s.exec("touch /opt/rlcoder-task-env/site/x.py")
    assert r.exit_code != 0
  broken = _task(tmp_path / "root", "broken", repo, tests, setup=["exit 3"])
  with pytest.raises(TaskError, match="setup command 'exit 3' failed with exit code 3"):
    build_task_env(broken, CONFIG, cache_dir=cache)


def test_threads_run_under_the_memory_limit_and_resident_memory_is_limited(tmp_path):
  """Under the old 1 GiB address-space limit a few threads failed to start; resident memory
  is what counts now, per task (metadata memory_mb)."""
  # 32 threads alive at once, each with its stack and malloc arena: about 2.5 GB of address
  # space reserved, a few MB resident.
  tests = {"test_threads.py": "import threading\n\n\ndef test_threads():\n    out, go = [], threading.Barrier(33)\n"
                              "    def work():\n        data = [bytes(1000) for _ in range(100)]\n        go.wait()\n"
                              "        out.append(len(data))\n"
                              "    ts = [threading.Thread(target=work) for _ in range(32)]\n"
                              "    [t.start() for t in ts]\n    go.wait()\n    [t.join() for t in ts]\n    assert len(out) == 32\n",
           "test_numbers.py": "import numpy\n\n\ndef test_numbers():\n    assert numpy.ones(10).sum() == 10\n"}
  task = _task(tmp_path, "threads", {"README": "x\n"}, tests, memory_mb=256)
  assert task_sandbox_config(task, CONFIG).memory_mb == 256
  report = _grade(task)
  assert report.all_passed and report.passed == 2, report.log
  with open_session(str(tmp_path), CONFIG.replace(memory_mb=200)) as s:
    r = s.exec("python -c \"x = bytearray(600 * 1024 * 1024); print('survived')\"", timeout=30)
    assert "survived" not in r.stdout and "memory" in r.limits_hit and r.oom_killed
    r = s.exec("python -c \"x = bytearray(50 * 1024 * 1024); print('fits')\"", timeout=30)
    assert r.stdout.strip() == "fits" and not r.limits_hit


def test_grading_keeps_bytes_and_unrelated_test_named_files(tmp_path):
  odd = {"data/cr.txt": b"a\rb\r", "data/crlf.txt": b"a\r\nb\r\n", "data/latin1.txt": "\xe9t\xe9\n".encode("latin-1"),
         "data/blob.bin": bytes(range(256)), "pyproject.toml": b"[project]\r\nname = 'x'\r\n",
         "docs/testing.rst": b"Testing\n", "testutils.py": b"HELPER = 1\n", "test_public.py": b"def test_p():\n  pass\n"}
  task = _task(tmp_path / "root", "bytes", odd, {"test_hidden.py": "def test_h():\n    pass\n"}, dest=".",
               command="python -m pytest -q test_hidden.py")
  workspace = tmp_path / "ws"
  shutil.copytree(task.repo_dir, workspace)
  (workspace / "test_added.py").write_text("def test_a():\n    pass\n")
  (workspace / "conftest.py").write_text("raise SystemExit\n")
  staging = tmp_path / "staging"
  prepare_grading_copy(str(workspace), str(staging), str(task.tests_dir), ".", str(task.repo_dir))
  for rel, data in odd.items():
    assert (staging / rel).read_bytes() == data, rel
  assert not (staging / "test_added.py").exists() and not (staging / "conftest.py").exists()
  assert (staging / "test_hidden.py").is_file()
  report = _grade(task, workspace)
  assert report.all_passed and report.passed == 1, report.log


def test_bad_environment_metadata_is_named(tmp_path):
  for meta, message in (({"python_path": ["../x"]}, "python_path entry '../x' escapes"),
                        ({"env": {"PYTHONPATH": "x"}}, "set import roots with python_path"),
                        ({"memory_mb": -1}, "memory_mb must be a positive integer"),
                        ({"setup": [""]}, "setup must be a command")):
    with pytest.raises(TaskError, match=message):
      _task(tmp_path, "bad", {"a.py": ""}, {"test_a.py": ""}, **meta)
  assert os.path.isdir(tmp_path)


def test_docker_tasks_use_their_image_and_local_tasks_their_limits(tmp_path):
  task = _task(tmp_path, "img", {"a.py": ""}, {"test_a.py": ""}, image="example/task:1", max_procs=16,
               setup=["pip install --no-deps --target $RLCODER_TASK_ENV/site ."])
  docker = task_sandbox_config(task, SandboxConfig(backend="docker"))
  assert docker.docker_image == "example/task:1" and docker.max_procs == 16 and not docker.task_env_dir
  plain = _task(tmp_path, "plain", {"a.py": ""}, {"test_a.py": ""})
  assert task_sandbox_config(plain, CONFIG) is CONFIG  # the shared warm pool serves it


def _wheel(name: str, module: str) -> bytes:
  """A minimal pure-Python wheel, built by hand (no network, no build backend)."""
  import base64
  import hashlib
  import io
  import zipfile
  info = f"{name}-1.0.dist-info"
  files = {f"{name}.py": module.encode(), f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n".encode(),
           f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
  record = [f"{n},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},{len(d)}"
            for n, d in files.items()] + [f"{info}/RECORD,,"]
  files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
  buffer = io.BytesIO()
  with zipfile.ZipFile(buffer, "w") as z:
    for n, d in files.items():
      z.writestr(n, d)
  return buffer.getvalue()


def test_setup_installs_a_vendored_wheel_offline(tmp_path):
  wheel = "vendor/vendored_dep-1.0-py3-none-any.whl"
  task = _task(tmp_path / "root", "wheel", {wheel: _wheel("vendored_dep", "VALUE = 7\n"), "m.py": "X = 1\n"},
               {"test_dep.py": "import vendored_dep\n\n\ndef test_dep():\n    assert vendored_dep.VALUE == 7\n"},
               setup=[f"pip install --no-deps --no-index --target $RLCODER_TASK_ENV/site {wheel}"])
  built = build_task_env(task, CONFIG, cache_dir=tmp_path / "cache")
  assert (pathlib.Path(built) / "site" / "vendored_dep.py").is_file()
  config = task_sandbox_config(task, CONFIG, build=False).replace(task_env_dir=built)
  report = grade(str(task.repo_dir), str(task.tests_dir), "tests", task.test_command, 60, config=config,
                 pristine_dir=str(task.repo_dir))
  assert report.all_passed, report.log
