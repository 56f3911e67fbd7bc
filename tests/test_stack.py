"""The pinned JAX stack imports together and runs one jitted, checkpointed step."""

import numpy as np


def test_pinned_stack_runs_one_jitted_step(tmp_path):
  import flax
  import jax
  import jax.numpy as jnp
  import ml_collections
  import optax
  import orbax.checkpoint as ocp
  import transformers
  from flax import nnx

  model = nnx.Linear(4, 1, rngs=nnx.Rngs(0))
  optimizer = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)
  x = jnp.ones((8, 4))
  y = jnp.zeros((8, 1))

  @nnx.jit
  def step(model, optimizer, x, y):
    loss, grads = nnx.value_and_grad(lambda m: jnp.mean((m(x) - y) ** 2))(model)
    optimizer.update(model, grads)
    return loss

  first = float(step(model, optimizer, x, y))
  for _ in range(20):
    last = float(step(model, optimizer, x, y))
  assert last < first

  state = nnx.state(model, nnx.Param)
  with ocp.StandardCheckpointer() as ckptr:
    ckptr.save(tmp_path / "ckpt", state)
  with ocp.StandardCheckpointer() as ckptr:
    restored = ckptr.restore(tmp_path / "ckpt", state)
  np.testing.assert_array_equal(np.asarray(restored["kernel"][...]), np.asarray(model.kernel[...]))
  assert ml_collections.ConfigDict({"a": 1}).a == 1
  assert transformers.__version__ and flax.__version__ and jax.__version__
