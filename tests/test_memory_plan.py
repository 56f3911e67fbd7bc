"""scripts/memory_plan.py: its figures equal the bytes of the real arrays, and shrink on a mesh."""

import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from configs import default
from rl import models as model_lib
from rl import parallel
from rl import tokenizer as tokenizer_lib
from rl.algo import update as update_lib
from rl.models.transformer import KVCache
from rl.train import memory_plan

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "memory_plan.py"
TEST_MODEL = ["--config.model.tiny=test", "--config.model.hidden_size=0", "--config.model.num_layers=0",
              "--config.model.intermediate_size=0"]


def _config(**model):
  c = default.get_config().unlock()
  c.model.tiny = "test"
  c.model.hidden_size = c.model.num_layers = c.model.intermediate_size = 0
  c.algo.kl_coef = 0.01  # a reference policy to plan
  c.mesh.shape = (1, 1, 1)
  for key, value in model.items():
    c.model[key] = value
  return c.lock()


def _nbytes(tree) -> int:
  return int(sum(x.nbytes for x in jax.tree.leaves(tree)))


@pytest.mark.parametrize("value_head", ["separate", "shared"])
def test_plan_equals_the_bytes_of_the_real_state_on_one_device(value_head):
  config = _config(value_head=value_head)
  mesh, rules = parallel.mesh_from_config(config, jax.devices()[:1])
  plan = memory_plan.plan(config, mesh, rules, compile_update=False)

  tokenizer = tokenizer_lib.load_tokenizer(None)
  cfg, policy, critic = model_lib.build_models(config, len(tokenizer), 2, 0)
  from flax import nnx
  policy_state = nnx.state(policy, nnx.Param)
  critic_state = None if critic is None else nnx.state(critic, nnx.Param)
  assert plan.params == _nbytes(policy_state) + (0 if critic is None else _nbytes(critic_state))
  assert plan.reference == _nbytes(policy_state)
  policy_tx, critic_tx = update_lib.optimizers_from_config(config, 10, 10)
  opt = _nbytes(policy_tx.init(policy_state)) + _nbytes(critic_tx.init(critic_state or policy_state))
  assert plan.opt_state == opt
  rows = config.trainer.tasks_per_iteration * config.algo.group_size
  cache = KVCache.create(cfg, rows, config.sampling.max_cache_len)
  assert plan.kv_cache == _nbytes((cache.keys, cache.values))
  assert plan.model_parameters == sum(int(np.prod(x.shape)) for x in jax.tree.leaves(policy_state))


@pytest.mark.slow
def test_plan_on_8_fake_devices_shards_the_state_and_reports_the_update():
  env = {**os.environ, "JAX_PLATFORMS": "cpu"}
  args = [sys.executable, str(SCRIPT), "--config", str(ROOT / "configs" / "default.py"), *TEST_MODEL,
          "--config.optim.micro_batch_size=8", "--config.optim.mini_batch_size=16",
          "--config.agent.max_tokens_per_trajectory=256", "--json"]
  plans = {}
  for mesh, devices in (("1,1,1", 1), ("1,8,1", 8), ("1,4,2", 8)):
    proc = subprocess.run([*args, "--mesh", mesh, "--devices", str(devices)], env=env, capture_output=True,
                          text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    plans[mesh] = json.loads(proc.stdout.splitlines()[-1])
  one = plans["1,1,1"]
  for mesh in ("1,8,1", "1,4,2"):
    for key in ("params", "opt_state", "kv_cache"):
      assert plans[mesh][key] <= one[key] / 8 * 1.10, (mesh, key)
    assert 0 < plans[mesh]["update_scratch"] < one["update_scratch"], mesh
    assert plans[mesh]["fits"]


def test_unknown_checkpoint_without_shapes_is_one_line_error(tmp_path):
  proc = subprocess.run([sys.executable, str(SCRIPT), "--config", str(ROOT / "configs" / "default.py"),
                         f"--config.model.hf_checkpoint={tmp_path / 'no-such-model'}", "--devices", "1",
                         "--mesh", "1,1,1", "--config.init_from="], capture_output=True, text=True, timeout=300,
                        cwd=ROOT, env={**os.environ, "JAX_PLATFORMS": "cpu"})
  assert proc.returncode == 2
  assert proc.stderr.strip().count("\n") == 0 and "no config.json" in proc.stderr, proc.stderr


@pytest.mark.slow
def test_update_scratch_grows_linearly_with_depth():
  """memory_plan extrapolates a deep model's update scratch from two shallow compiles."""
  config = _config(value_head="separate", remat=True)
  mesh, rules = parallel.mesh_from_config(config, jax.devices()[:1])
  cfg = memory_plan.model_config_for(config)
  low, high = memory_plan.EXTRAPOLATE_FROM_LAYERS
  a, b, deep = (memory_plan.update_scratch_bytes(config, cfg.replace(num_layers=n), mesh, rules, 256)
                for n in (low, high, high + 3))
  assert deep == pytest.approx(b + 3 * (b - a), rel=0.02)
