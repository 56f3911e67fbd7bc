"""The trainer on 8 fake CPU devices: state born sharded (FSDP, FSDP x tensor parallel), per-device
memory an eighth of one device's, and the same iteration and greedy decoding as one device.

Each run is a subprocess (tests/helpers/trainer_mesh_run.py) so that it can set its device count.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HELPER = Path(__file__).resolve().parent / "helpers" / "trainer_mesh_run.py"
ROWS = 8  # one mini-batch of 8 rollouts: every batch axis of both meshes divides it
UPDATE_KEYS = ("actor/pg_loss", "actor/entropy", "actor/grad_norm", "critic/value_loss",
               "critic/grad_norm", "adv/mean", "adv/std")
ROLLOUT_KEYS = ("train/reward_mean", "train/success_rate", "train/pass_fraction",
                "length/tokens_p50", "length/tokens_p90")


def _run(tasks_root, workdir, devices, mesh=None):
  env = {**os.environ, "JAX_PLATFORMS": "cpu",
         "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices}"}
  args = [sys.executable, str(HELPER), str(tasks_root), str(workdir), "--rows", str(ROWS), "--greedy"]
  if mesh:
    args += ["--mesh", mesh]
  proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=900)
  assert proc.returncode == 0, proc.stderr[-3000:]
  return json.loads([l for l in proc.stdout.splitlines() if l.startswith("RESULT ")][-1][len("RESULT "):])


@pytest.fixture(scope="module")
def single(tmp_path_factory):
  root = tmp_path_factory.mktemp("sharded")
  return root, _run(root / "tasks", root / "d1", devices=1)


def _assert_same_iteration(one: dict, other: dict) -> None:
  for key in ROLLOUT_KEYS:  # the rollouts do not depend on the layout
    assert other["row"][key] == one["row"][key], key
  assert other["greedy"] == one["greedy"]  # the sampler on the mesh decodes the same tokens
  assert one["row"]["actor/grad_norm"] > 0  # a real update, not a batch of zero advantages
  for key in UPDATE_KEYS:
    assert other["row"][key] == pytest.approx(one["row"][key], rel=2e-3, abs=1e-5), key


def _assert_memory_is_an_eighth(one: dict, other: dict) -> None:
  # Parameters (policy and critic) and both AdamW states: each device holds at most an eighth
  # of one device's bytes, plus 10% for what stays replicated (norm weights, step counts).
  for key in ("memory/params_bytes_per_device", "memory/opt_state_bytes_per_device",
              "memory/ref_bytes_per_device"):
    assert other["row"][key] <= one["row"][key] / 8 * 1.10, (key, other["row"][key], one["row"][key])
  assert other["row"]["memory/update_temp_bytes_per_device"] > 0


@pytest.mark.slow
def test_fsdp_over_8_devices_shards_the_state_and_trains_the_same(single):
  root, one = single
  fsdp = _run(root / "tasks", root / "fsdp8", devices=8, mesh="1,8,1")
  assert one["mesh"] is None and fsdp["mesh"] == {"data": 1, "fsdp": 8, "tensor": 1}
  assert fsdp["specs"]["['layers'][0]['mlp']['gate_proj'].value"] == "P('fsdp', 'tensor')"
  _assert_memory_is_an_eighth(one, fsdp)
  _assert_same_iteration(one, fsdp)


@pytest.mark.slow
def test_fsdp_and_tensor_parallel_shard_the_state_and_train_the_same(single):
  root, one = single
  both = _run(root / "tasks", root / "fsdp4tp2", devices=8, mesh="1,4,2")
  assert both["mesh"] == {"data": 1, "fsdp": 4, "tensor": 2}
  assert both["specs"]["['embed_tokens'].value"] == "P('tensor', 'fsdp')"
  assert both["specs"]["['layers'][0]['self_attn']['q_proj'].value"] == "P('fsdp', 'tensor', None)"
  _assert_memory_is_an_eighth(one, both)
  _assert_same_iteration(one, both)
