"""The kill-point test hook (rl.killpoints): it kills only at its named point and iteration, and
a malformed setting is an error, never a hook that silently does not fire."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rl import killpoints

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ("from rl import killpoints\n"
           "killpoints.reach('update', 1); killpoints.reach('score', 2); print('alive', flush=True)\n"
           "killpoints.reach('update', 2); print('survived')\n")


def _run(value: str) -> subprocess.CompletedProcess:
  env = {**os.environ, killpoints.ENV_VAR: value}
  return subprocess.run([sys.executable, "-c", PROGRAM], cwd=ROOT, env=env, capture_output=True, text=True,
                        timeout=60)


def test_kills_at_its_point_and_iteration_only():
  proc = _run("update:2")
  assert proc.returncode == -signal.SIGKILL and proc.stdout == "alive\n"
  proc = _run("")
  assert proc.returncode == 0 and proc.stdout == "alive\nsurvived\n"


def test_a_malformed_setting_or_point_is_an_error():
  assert "expected <point>:<iteration>" in _run("update").stderr
  assert "expected <point>:<iteration>" in _run("evaluate:1").stderr
  with pytest.raises(ValueError, match="unknown kill point 'updat'"):
    killpoints.reach("updat", 1)
