"""Device mesh and parameter shardings: logical axis names on weights -> mesh axes via config rules.

Every weight carries `logical_axes` metadata (e.g. ("embed", "mlp")); `c.mesh.rules` maps logical
names to mesh axes. Params are born sharded (`jax.jit(init, out_shardings=...)`) or placed shard
by shard while a Hugging Face checkpoint is read; jitted steps then take explicit shardings.
"""

from __future__ import annotations

from typing import Any, Sequence

import jax
import numpy as np
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec

Rules = Sequence[tuple[str, Any]]
DEFAULT_RULES: Rules = (
    ("batch", ("data", "fsdp")),
    ("embed", "fsdp"),
    ("mlp", "tensor"),
    ("heads", "tensor"),
    ("kv_heads", "tensor"),
    ("vocab", "tensor"),
)


def make_mesh(shape: Sequence[int], axes: Sequence[str], devices: Sequence[Any] | None = None) -> Mesh:
  """A Mesh of `shape` (one -1 absorbs the remaining devices) with named `axes`."""
  devices = list(jax.devices() if devices is None else devices)
  shape = list(shape)
  if len(shape) != len(axes):
    raise ValueError(f"mesh shape {tuple(shape)} and axes {tuple(axes)} differ in length")
  if shape.count(-1) > 1:
    raise ValueError(f"mesh shape {tuple(shape)} has more than one -1")
  known = int(np.prod([s for s in shape if s != -1]))
  if -1 in shape:
    if len(devices) % known:
      raise ValueError(f"{len(devices)} devices cannot fill mesh shape {tuple(shape)}")
    shape[shape.index(-1)] = len(devices) // known
  if int(np.prod(shape)) != len(devices):
    raise ValueError(f"mesh shape {tuple(shape)} needs {int(np.prod(shape))} devices, "
                     f"{len(devices)} available")
  return Mesh(np.asarray(devices, dtype=object).reshape(shape), tuple(axes))


def mesh_from_config(config: Any, devices: Sequence[Any] | None = None) -> tuple[Mesh, Rules]:
  """(mesh, rules) from a config with `mesh.shape`, `mesh.axes`, `mesh.rules` (configs/default.py)."""
  mesh_cfg = config.mesh if hasattr(config, "mesh") else config
  rules = tuple((name, tuple(v) if isinstance(v, list) else v) for name, v in mesh_cfg.rules)
  return make_mesh(mesh_cfg.shape, mesh_cfg.axes, devices), rules


def logical_to_spec(logical_axes: Sequence[str | None], shape: Sequence[int], mesh: Mesh,
                    rules: Rules) -> PartitionSpec:
  """PartitionSpec for an array with `logical_axes`; a dimension that a mesh axis does not divide
  (e.g. 2 kv heads on 4-way tensor parallelism) stays replicated, and a mesh axis is used once."""
  table = dict(rules)
  used: set[str] = set()
  spec = []
  for name, size in zip(logical_axes, shape):
    target = table.get(name) if name else None
    mesh_axes = (target,) if isinstance(target, str) else tuple(target or ())
    mesh_axes = tuple(a for a in mesh_axes if a in mesh.shape and a not in used)
    ways = int(np.prod([mesh.shape[a] for a in mesh_axes])) if mesh_axes else 1
    if not mesh_axes or size % ways:
      spec.append(None)
      continue
    used.update(mesh_axes)
    spec.append(mesh_axes[0] if len(mesh_axes) == 1 else mesh_axes)
  return PartitionSpec(*spec)


def _var_sharding(var: nnx.Variable, mesh: Mesh, rules: Rules) -> NamedSharding:
  value = var.get_value()
  axes = var.get_metadata().get("logical_axes")
  if axes is None or len(axes) != len(value.shape):
    return NamedSharding(mesh, PartitionSpec())
  return NamedSharding(mesh, logical_to_spec(axes, value.shape, mesh, rules))


def state_shardings(state: nnx.State, mesh: Mesh, rules: Rules = DEFAULT_RULES) -> nnx.State:
  """A State-shaped tree of NamedShardings (usable as jit in/out_shardings) for `state`."""
  return jax.tree.map(lambda v: v.replace(_var_sharding(v, mesh, rules)), state,
                      is_leaf=lambda x: isinstance(x, nnx.Variable))


def create_sharded_model(config: Any, mesh: Mesh, rules: Rules = DEFAULT_RULES, *, seed: int = 0,
                         lm_head: bool = True):
  """A freshly initialised Transformer whose weights are born sharded on `mesh`."""
  from rl.models.transformer import Transformer, init_model

  abstract = nnx.eval_shape(lambda: Transformer(config, seed=seed, lm_head=lm_head))
  shardings = state_shardings(nnx.state(abstract), mesh, rules)
  return init_model(config, seed, lm_head=lm_head, out_shardings=shardings)


def shard_model(model: nnx.Module, mesh: Mesh, rules: Rules = DEFAULT_RULES) -> nnx.Module:
  """Moves an existing model's weights onto `mesh` (in place) and returns it."""
  state = nnx.state(model)
  nnx.update(model, jax.device_put(state, state_shardings(state, mesh, rules)))
  return model


def hf_param_shardings(config: Any, mesh: Mesh, rules: Rules = DEFAULT_RULES):
  """A path -> sharding callable for `load_hf_checkpoint(..., shardings=...)`."""
  from rl.models.transformer import Transformer

  abstract = nnx.eval_shape(lambda: Transformer(config))
  table = {path: _var_sharding(v, mesh, rules) for path, v in nnx.to_flat_state(nnx.state(abstract))}
  return lambda path: table.get(tuple(path), NamedSharding(mesh, PartitionSpec()))


def batch_sharding(mesh: Mesh, rules: Rules = DEFAULT_RULES, ndim: int = 2) -> NamedSharding:
  """Sharding of a [B, T, ...] batch: B over the mesh axes that "batch" maps to."""
  spec = logical_to_spec(("batch",), (int(np.prod(list(mesh.shape.values()))),), mesh, rules)
  return NamedSharding(mesh, PartitionSpec(*spec, *([None] * (ndim - 1))))
