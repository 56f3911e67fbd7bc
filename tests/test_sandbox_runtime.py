"""The sandbox runtime's discovery and set-up: a missing runtime is one clear error."""

from __future__ import annotations

import os
import subprocess

import pytest

from sandbox import SandboxConfig, SandboxError, open_session, runtime_env


def test_missing_runtime_names_the_setup_command(tmp_path):
  missing = str(tmp_path / "no-venv" / "bin" / "python")
  with pytest.raises(SandboxError, match=r"does not exist: run `bash scripts/setup.sh`"):
    runtime_env.runtime_python(missing)
  (tmp_path / "ws").mkdir()
  with pytest.raises(SandboxError, match="SandboxConfig.python"):
    open_session(str(tmp_path / "ws"), SandboxConfig(pool_size=0, python=missing))


def test_environment_variable_selects_the_runtime(tmp_path, monkeypatch):
  monkeypatch.setenv(runtime_env.ENV_VAR, str(tmp_path / "elsewhere" / "python"))
  with pytest.raises(SandboxError, match=runtime_env.ENV_VAR):
    runtime_env.runtime_python()


def test_default_runtime_is_a_separate_virtualenv():
  rt = runtime_env.runtime()
  assert rt.python.startswith(runtime_env.DEFAULT_VENV + os.sep)
  # Not the trainer's interpreter environment: its site-packages hold neither jax nor the project.
  out = subprocess.run([rt.python, "-c", "import jax"], capture_output=True, text=True)
  assert out.returncode != 0 and "No module named 'jax'" in out.stderr


def test_requirement_pins_cover_the_installed_closure():
  """Every distribution installed in the runtime is pinned (no stray or unpinned dependency)."""
  pins = runtime_env.requirement_pins()
  assert {"pytest", "numpy", "pandas", "scikit-learn"} <= set(pins)
  listing = subprocess.run([runtime_env.runtime().python, "-c",
                            "import importlib.metadata as m\n"
                            "for d in m.distributions(): print(d.metadata['Name'], d.version)"],
                           capture_output=True, text=True, check=True).stdout.split("\n")
  installed = dict(line.split(" ", 1) for line in listing if line.strip())
  installed = {runtime_env.normalise(k): v for k, v in installed.items()}
  installed.pop("pip", None)
  installed.pop("setuptools", None)
  assert installed == pins


def test_runtime_appears_at_a_fixed_path_whatever_the_checkout(tmp_path):
  """Tracebacks and module paths an agent reads name /opt/venv, never the host checkout, so two
  checkouts of the project give the policy the same observations; console scripts still run."""
  (tmp_path / "test_broken.py").write_text("import no_such_module\n")
  session = open_session(str(tmp_path), SandboxConfig(pool_size=0))
  try:
    probe = session.exec("python -c 'import sys, pytest; print(sys.prefix); print(pytest.__file__); "
                         "print(sys.path)'", timeout=60)
    assert probe.exit_code == 0, probe.stderr
    prefix, module, path = probe.stdout.splitlines()[:3]
    assert prefix == "/opt/venv" and module.startswith("/opt/venv/lib/")
    collect = session.exec("python -m pytest -q test_broken.py", timeout=60)
    script = session.exec("pytest --version", timeout=60)
  finally:
    session.close()
  host_venv = runtime_env.runtime().venv
  assert host_venv and host_venv != "/opt/venv"
  assert "No module named 'no_such_module'" in collect.stdout
  for text in (path, collect.stdout, collect.stderr):
    assert runtime_env.REPO_ROOT not in text and host_venv not in text
  assert script.exit_code == 0 and "pytest" in script.stdout + script.stderr
