"""The sharded update equals the single-device update: 8 fake CPU devices (state sharded
over fsdp), and two processes that each contribute their own rows."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tests" / "helpers" / "sharded_update_check.py"


def _run(args, devices, extra_env=None, timeout=600):
  env = {**os.environ, "JAX_PLATFORMS": "cpu",
         "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices}", **(extra_env or {})}
  return subprocess.Popen([sys.executable, str(SCRIPT), *args], cwd=ROOT, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _result(proc, timeout=600):
  out, err = proc.communicate(timeout=timeout)
  assert proc.returncode == 0, err[-3000:]
  lines = [l for l in out.splitlines() if l.startswith("RESULT ")]
  return json.loads(lines[-1][len("RESULT "):]) if lines else None


def _assert_same(a, b):
  np.testing.assert_allclose(a["fingerprint"], b["fingerprint"], rtol=2e-4, atol=2e-4)
  for key in a["metrics"]:
    np.testing.assert_allclose(a["metrics"][key], b["metrics"][key], rtol=2e-3, atol=2e-5, err_msg=key)


@pytest.mark.slow
def test_update_on_8_fake_devices_equals_single_device():
  single = _result(_run(["1,1,1"], devices=1))
  sharded = _result(_run(["2,4,1"], devices=8))
  assert sharded["devices"] == 8
  _assert_same(single, sharded)


@pytest.mark.slow
def test_two_process_update_equals_single_process():
  """Each process contributes its own rows (its own rollouts: another seed) to the global batch
  and counts its own tokens; the update equals one process given the concatenated rows."""
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
  coordinator = f"127.0.0.1:{port}"
  procs = [_run(["2,1,1", coordinator, "2", str(i), "--parts=2"], devices=1) for i in range(2)]
  results = [_result(p) for p in procs]
  multi = results[0]
  assert multi["processes"] == 2 and multi["devices"] == 2
  single = _result(_run(["1,1,1", "--parts=2"], devices=1))
  _assert_same(single, multi)
  # Not a vacuous equality: the second process's rows change the update.
  one_block = _result(_run(["1,1,1", "--parts=1"], devices=1))
  assert one_block["fingerprint"] != pytest.approx(single["fingerprint"], rel=1e-3)
