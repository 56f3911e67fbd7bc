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
