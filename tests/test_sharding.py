"""Sharding tests on 8 fake CPU devices (run in a subprocess so the device count can be set)."""

import os
import subprocess
import sys

import pytest

from configs.default import get_config


def _sharded_checks() -> None:
  import jax
  import jax.numpy as jnp
  import numpy as np
  from flax import nnx

  from rl.models import forward, load_hf_checkpoint, tiny_config, token_logprobs, init_model
  from rl.parallel import (rows_sharding, create_sharded_model, logical_to_spec, make_mesh,
                           mesh_from_config, state_shardings)

  assert len(jax.devices()) == 8, jax.devices()
  config = get_config()
  mesh, rules = mesh_from_config(config)
  assert dict(mesh.shape) == {"data": 1, "fsdp": 8, "tensor": 1}
  mesh = make_mesh((2, 2, 2), ("data", "fsdp", "tensor"))
  assert logical_to_spec(("embed", "mlp"), (64, 128), mesh, rules) == jax.P("fsdp", "tensor")
  assert logical_to_spec(("kv_heads",), (3,), mesh, rules) == jax.P(None)  # 3 % 2: replicated

  model_config = tiny_config("test", value_head="shared")
  sharded = create_sharded_model(model_config, mesh, rules, seed=7)
  single = init_model(model_config, seed=7)
  graphdef, sharded_state = nnx.split(sharded)
  _, single_state = nnx.split(single)
  gate = sharded.layers[0].mlp.gate_proj.get_value()
  assert gate.sharding.spec == jax.P("fsdp", "tensor"), gate.sharding
  assert len(gate.addressable_shards) == 8 and gate.addressable_shards[0].data.shape == (32, 64)

  rng = np.random.default_rng(0)
  ids = rng.integers(0, 4096, size=(8, 16)).astype(np.int32)
  mask = (rng.random((8, 16)) < 0.6).astype(np.float32)
  data = rows_sharding(mesh, rules)
  ids_sharded = jax.device_put(ids, data)
  fwd = jax.jit(forward, static_argnums=0)
  np.testing.assert_allclose(np.asarray(fwd(graphdef, sharded_state, ids_sharded)),
                             np.asarray(fwd(graphdef, single_state, ids)), atol=1e-5)

  def loss(state, ids, mask):
    out = token_logprobs(nnx.merge(graphdef, state), ids, chunk=8, with_values=True)
    return -(out["logprobs"] * mask).sum() / mask.sum() + (out["values"] ** 2 * mask).mean()

  shardings = state_shardings(sharded_state, mesh, rules)
  sharded_grad = jax.jit(jax.grad(loss), out_shardings=shardings)(
      sharded_state, ids_sharded, jax.device_put(mask, data))
  single_grad = jax.jit(jax.grad(loss))(single_state, ids, mask)
  for (path, a), (_, b) in zip(nnx.to_flat_state(sharded_grad), nnx.to_flat_state(single_grad)):
    np.testing.assert_allclose(np.asarray(a.get_value()), np.asarray(b.get_value()), atol=2e-6,
                               err_msg=str(path))
  assert sharded_grad["layers"][0]["mlp"]["up_proj"].get_value().sharding.spec == jax.P(
      "fsdp", "tensor")

  fixture = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "hf_qwen2")
  loaded = load_hf_checkpoint(fixture, mesh=mesh, rules=rules)
  embed = loaded.embed_tokens.get_value()
  assert embed.sharding.spec == jax.P("tensor", "fsdp"), embed.sharding
  reference = np.load(os.path.join(fixture, "reference_logits.npy"))
  ids = np.load(os.path.join(fixture, "reference_input_ids.npy"))
  np.testing.assert_allclose(np.asarray(jax.jit(lambda m, x: m(x))(loaded, ids)), reference,
                             atol=1e-4)
  print("SHARDING_OK")


@pytest.mark.slow
def test_sharded_forward_and_gradients_match_single_device():
  env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8",
             JAX_PLATFORMS="cpu")
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
  result = subprocess.run([sys.executable, os.path.abspath(__file__)], env=env, cwd=root,
                          capture_output=True, text=True, timeout=600)
  assert result.returncode == 0 and "SHARDING_OK" in result.stdout, (
      result.stdout[-3000:] + result.stderr[-6000:])


def test_default_rules_are_the_default_configs():
  from rl.parallel import DEFAULT_RULES, config_rules
  assert config_rules(get_config()) == tuple(DEFAULT_RULES)


def test_process_helpers_with_one_process_change_nothing():
  import numpy as np

  from rl import parallel
  assert parallel.process_share(["a", "b", "c"]) == ["a", "b", "c"]
  assert parallel.max_over_processes({"rows": 3, "length": 256}) == {"rows": 3, "length": 256}
  assert parallel.sum_over_processes({"tokens": 7.0}) == {"tokens": 7.0}
  tree = {"mask": np.ones((2, 3))}
  assert parallel.concat_over_processes(tree) is tree
  assert parallel.gather_objects({"episodes": [1, 2]}) == [{"episodes": [1, 2]}]
  rows = np.arange(6.0).reshape(3, 2)
  np.testing.assert_array_equal(parallel.local_rows(parallel.rows_to_global(rows, None)), rows)


def test_mesh_errors():
  from rl.parallel import make_mesh
  with pytest.raises(ValueError, match="needs 4 devices"):
    make_mesh((2, 2), ("data", "tensor"), devices=["cpu0"])
  with pytest.raises(ValueError, match="more than one -1"):
    make_mesh((-1, -1), ("data", "tensor"))


if __name__ == "__main__":
  _sharded_checks()
