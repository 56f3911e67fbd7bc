"""The device mesh and everything laid out on it: shardings of weights, optimizer states and rows.

Every weight carries `logical_axes` metadata (e.g. ("embed", "mlp")); `config.mesh.rules` maps
logical names to mesh axes (default: "embed" over `fsdp`, heads/mlp/vocab over `tensor`, rows of
a batch over `data` x `fsdp`). Weights are born sharded (`jax.jit(init, out_shardings=...)`) or
placed shard by shard while a Hugging Face checkpoint is read; an optimizer state takes the
sharding of the parameter each of its leaves mirrors; jitted steps take and return these.

Multi-host runs use JAX's own distributed runtime: `initialize(config)` calls
`jax.distributed.initialize` when `config.distributed.coordinator` (or the standard
JAX_COORDINATOR_ADDRESS / JAX_NUM_PROCESSES / JAX_PROCESS_ID environment) names a coordinator.
Each process then runs its own share of the rollouts (`process_share`) with its own sandboxes
and a sampler on its own devices (`LocalReplica`: a whole copy of the sharded weights on the
process's devices), and contributes its own rows to the global batch (`rows_to_global`, read back
with `local_rows`); shapes every process must agree on are maxima (`max_over_processes`),
host-side counts are summed (`sum_over_processes`), and what needs every row (batch statistics,
metrics) is gathered (`concat_over_processes`, `gather_objects`).
"""

from __future__ import annotations

import dataclasses
import os
import pickle
from typing import Any, Sequence

import jax
import numpy as np
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec

Rules = Sequence[tuple[str, Any]]
# The rules of configs/default.py (`mesh.rules`), for callers without a config; the config does
# not import this module because config files load before JAX may start (scripts set XLA_FLAGS
# after reading them). tests/test_sharding.py checks the two agree.
DEFAULT_RULES: Rules = (
    ("batch", ("data", "fsdp")),
    ("embed", "fsdp"),
    ("mlp", "tensor"),
    ("heads", "tensor"),
    ("kv_heads", "tensor"),
    ("vocab", "tensor"),
)


# -- processes and meshes ----------------------------------------------------------------------


def initialize(config: Any = None) -> bool:
  """Starts the distributed runtime when configured; returns True when multi-process."""
  dist = config.distributed if config is not None else None  # None: the environment alone
  coordinator = (dist.coordinator if dist is not None else "") or os.environ.get("JAX_COORDINATOR_ADDRESS", "")
  if not coordinator:
    return False
  num_processes = int((dist.num_processes if dist is not None else 0) or os.environ.get("JAX_NUM_PROCESSES", "1"))
  process_id = int(dist.process_id if dist is not None and dist.process_id >= 0
                   else os.environ.get("JAX_PROCESS_ID", "0"))
  jax.distributed.initialize(coordinator_address=coordinator, num_processes=num_processes,
                             process_id=process_id)
  return jax.process_count() > 1


def make_mesh(shape: Sequence[int], axes: Sequence[str], devices: Sequence[Any] | None = None) -> Mesh:
  """A Mesh of `shape` (one -1 absorbs the remaining devices) with named `axes`, over `devices`
  (default: every device of every process)."""
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


def config_rules(config: Any) -> tuple[tuple[str, Any], ...]:
  """`config.mesh.rules` as a tuple of (logical name, mesh axis or axes)."""
  mesh_cfg = config.mesh if hasattr(config, "mesh") else config
  return tuple((name, tuple(v) if isinstance(v, list) else v) for name, v in mesh_cfg.rules)


def mesh_from_config(config: Any, devices: Sequence[Any] | None = None) -> tuple[Mesh, Rules]:
  """(mesh, rules) from a config with `mesh.shape`, `mesh.axes`, `mesh.rules` (configs/default.py)."""
  mesh_cfg = config.mesh if hasattr(config, "mesh") else config
  return make_mesh(mesh_cfg.shape, mesh_cfg.axes, devices), config_rules(config)


# -- shardings ----------------------------------------------------------------------------------


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


def replicated(mesh: Mesh) -> NamedSharding:
  return NamedSharding(mesh, PartitionSpec())


def _var_sharding(var: nnx.Variable, mesh: Mesh, rules: Rules) -> NamedSharding:
  value = var.get_value()
  axes = var.get_metadata().get("logical_axes")
  if axes is None or len(axes) != len(value.shape):
    return replicated(mesh)
  return NamedSharding(mesh, logical_to_spec(axes, value.shape, mesh, rules))


def state_shardings(state: nnx.State, mesh: Mesh, rules: Rules = DEFAULT_RULES) -> nnx.State:
  """A State-shaped tree of NamedShardings (usable as jit in/out_shardings) for `state`."""
  return jax.tree.map(lambda v: v.replace(_var_sharding(v, mesh, rules)), state,
                      is_leaf=lambda x: isinstance(x, nnx.Variable))


def shardings_like(tree: Any, params: Any, param_shardings: Any, mesh: Mesh) -> Any:
  """Shardings for `tree` (e.g. an optimizer state, concrete or abstract) whose leaves mirror the
  parameters: a leaf whose key path ends with a parameter's path and has its shape takes that
  parameter's sharding (Adam's mu and nu); any other leaf (a step count) is replicated."""
  by_path = {}
  for (path, leaf), sharding in zip(jax.tree_util.tree_leaves_with_path(params),
                                    jax.tree.leaves(param_shardings)):
    by_path[tuple(path)] = (tuple(np.shape(leaf)), sharding)

  def pick(path, leaf):
    path = tuple(path)
    for start in range(len(path)):
      hit = by_path.get(path[start:])
      if hit is not None and hit[0] == tuple(np.shape(leaf)):
        return hit[1]
    return replicated(mesh)

  return jax.tree_util.tree_map_with_path(pick, tree)


def rows_sharding(mesh: Mesh, rules: Rules = DEFAULT_RULES, ndim: int = 2, rows: int | None = None
                  ) -> NamedSharding:
  """Sharding of a [B, ...] array: B over the mesh axes that "batch" maps to (replicated when
  `rows` is given and those axes do not divide it)."""
  size = int(np.prod(list(mesh.shape.values()))) if rows is None else rows
  spec = logical_to_spec(("batch",), (size,), mesh, rules)
  return NamedSharding(mesh, PartitionSpec(*spec, *([None] * (ndim - 1))))


def batch_parallel_size(mesh: Mesh, rules: Rules = DEFAULT_RULES) -> int:
  """How many ways rows are split: the product of the mesh axes "batch" maps to."""
  spec = rows_sharding(mesh, rules, ndim=1).spec[0]
  axes = () if spec is None else (spec,) if isinstance(spec, str) else tuple(spec)
  return int(np.prod([mesh.shape[a] for a in axes])) if axes else 1


def kv_cache_sharding(mesh: Mesh, rules: Rules, batch: int, kv_heads: int) -> NamedSharding:
  """A KVCache keys or values array ([B, kv_heads, ...]): rows over the batch axes, heads over
  `tensor` (where they divide), so decoding never gathers the cache or the weights on one device."""
  return NamedSharding(mesh, logical_to_spec(("batch", "kv_heads", None, None),
                                             (batch, kv_heads, 1, 1), mesh, rules))


# -- models -------------------------------------------------------------------------------------


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
  return lambda path: table.get(tuple(path), replicated(mesh))


# -- moving data --------------------------------------------------------------------------------


def global_array(host_value: np.ndarray, sharding: NamedSharding) -> jax.Array:
  """A global array from a value every process holds in full (works multi-process)."""
  host_value = np.asarray(host_value)
  return jax.make_array_from_callback(host_value.shape, sharding, lambda index: host_value[index])


def put_tree(tree: Any, sharding_tree: Any) -> Any:
  return jax.tree.map(lambda x, s: global_array(np.asarray(x), s), tree, sharding_tree)


def place(tree: Any, sharding_tree: Any) -> Any:
  """`tree` laid out as `sharding_tree` says, device to device where it can: a leaf that already
  has its sharding stays as it is; one process reshards with `device_put`; several processes
  reshard a global array inside a jit, and build one from a value each process holds in full."""

  def one(x, sharding):
    if isinstance(x, jax.Array) and x.sharding == sharding:
      return x
    if jax.process_count() == 1:
      return jax.device_put(x, sharding)
    if isinstance(x, jax.Array) and not x.is_fully_addressable:
      return jax.jit(lambda v: v, out_shardings=sharding)(x)
    return global_array(np.asarray(x), sharding)

  return jax.tree.map(one, tree, sharding_tree)


def rows_to_global(rows: np.ndarray, sharding: NamedSharding) -> jax.Array:
  """A global [B, ...] array from this process's own rows [B / processes, ...]: the processes'
  rows in process order (each process ran its own rollouts). One process: `rows` itself."""
  rows = np.asarray(rows)
  if jax.process_count() == 1:
    return jax.device_put(rows, sharding)
  return jax.make_array_from_process_local_data(sharding, rows)


def local_rows(array: jax.Array) -> np.ndarray:
  """This process's rows of a global [B, ...] array (the inverse of `rows_to_global`: rows
  p * B / P to (p + 1) * B / P of process p), whatever sharding XLA gave the array; the whole
  array with one process."""
  if jax.process_count() == 1 or array.is_fully_addressable:
    return np.asarray(array)
  per = array.shape[0] // jax.process_count()
  start = jax.process_index() * per
  out = np.zeros((per,) + array.shape[1:], array.dtype)
  filled = np.zeros(per, bool)
  for shard in array.addressable_shards:
    rows = range(*shard.index[0].indices(array.shape[0]))
    lo, hi = max(rows.start, start), min(rows.stop, start + per)
    if lo >= hi:
      continue
    data = np.asarray(shard.data)[lo - rows.start:hi - rows.start]
    out[(slice(lo - start, hi - start),) + tuple(shard.index[1:])] = data
    filled[lo - start:hi - start] = True
  if not filled.all():
    # The rows were laid out elsewhere (replicated over another process, say): gather them.
    from jax.experimental import multihost_utils
    return np.asarray(multihost_utils.process_allgather(array, tiled=True))[start:start + per]
  return out


def rows_split_by_process(mesh: Mesh, rules: Rules = DEFAULT_RULES) -> bool:
  """Whether the rows of a [B, ...] array split over the batch axes fall into one contiguous block
  per process, in process order: what `rows_to_global` and `local_rows` need (the batch axes
  span the processes; tensor parallelism stays within one)."""
  processes = jax.process_count()
  n = batch_parallel_size(mesh, rules)
  if n % processes:
    return False
  per = n // processes
  owner = np.full(n, -1)
  for device, index in rows_sharding(mesh, rules, 1, rows=n).devices_indices_map((n,)).items():
    rows = np.arange(n)[index[0]]
    if (owner[rows] >= 0).any() and (owner[rows] != device.process_index).any():
      return False  # the same rows on two processes
    owner[rows] = device.process_index
  return bool((owner == np.arange(n) // per).all())


def process_share(items: Sequence[Any]) -> list[Any]:
  """This process's share of `items`: items p, p + P, p + 2P, ... of process p (all of them with
  one process). Every process gets the same number when P divides len(items)."""
  return list(items)[jax.process_index()::jax.process_count()]


def max_over_processes(values: dict[str, int]) -> dict[str, int]:
  """The largest of each process's value per key (a row count or padded length every process
  must agree on)."""
  if jax.process_count() == 1:
    return dict(values)
  from jax.experimental import multihost_utils

  keys = sorted(values)
  gathered = multihost_utils.process_allgather(np.asarray([values[k] for k in keys], np.int64))
  return dict(zip(keys, (int(v) for v in np.asarray(gathered).reshape(-1, len(keys)).max(0))))


def concat_over_processes(tree: Any) -> Any:
  """Every leaf ([n, ...] host arrays of the same shape on every process) concatenated over the
  processes along its first axis, in process order; `tree` itself with one process."""
  if jax.process_count() == 1:
    return tree
  from jax.experimental import multihost_utils

  return jax.tree.map(np.asarray, multihost_utils.process_allgather(tree, tiled=True))


def gather_objects(value: Any) -> list[Any]:
  """Every process's `value` (any picklable object, of any size), in process order; `[value]`
  with one process."""
  if jax.process_count() == 1:
    return [value]
  from jax.experimental import multihost_utils

  data = np.frombuffer(pickle.dumps(value), np.uint8)
  sizes = np.asarray(multihost_utils.process_allgather(np.asarray([data.size], np.int64))).reshape(-1)
  padded = np.zeros(int(sizes.max()), np.uint8)
  padded[:data.size] = data
  gathered = np.asarray(multihost_utils.process_allgather(padded))
  return [pickle.loads(gathered[p, :sizes[p]].tobytes()) for p in range(len(sizes))]


def sum_over_processes(values: dict[str, float]) -> dict[str, float]:
  """Host-side scalars (token and sequence counts of this process's rows) summed over processes."""
  if jax.process_count() == 1:
    return dict(values)
  from jax.experimental import multihost_utils

  keys = sorted(values)
  gathered = multihost_utils.process_allgather(np.asarray([values[k] for k in keys], np.float64))
  return dict(zip(keys, (float(v) for v in np.asarray(gathered).reshape(-1, len(keys)).sum(0))))


@dataclasses.dataclass(frozen=True)
class LocalReplica:
  """A whole copy of sharded weights on this process's own devices, for a process-local sampler.

  `mesh` holds this process's devices with the global mesh's axes (tensor parallelism as the
  global mesh has it where the process's devices hold it, the rest over `fsdp`); `gathered` holds
  every device as [processes, *mesh's shape], row p being process p's `mesh`. `copy` reshards
  onto `gathered` (replicated over processes, each process's copy laid out by `rules` over its
  own devices), which is one collective, and hands each process its copy as arrays of `mesh`:
  decoding then needs no other process.
  """

  mesh: Mesh
  gathered: Mesh
  rules: Rules

  @classmethod
  def of(cls, mesh: Mesh, rules: Rules = DEFAULT_RULES) -> "LocalReplica":
    by_process: dict[int, list] = {}
    for device in mesh.devices.flat:
      by_process.setdefault(device.process_index, []).append(device)
    counts = {len(devices) for devices in by_process.values()}
    if len(counts) != 1:
      raise ValueError(f"processes hold different numbers of the mesh's devices: {sorted(counts)}")
    local = counts.pop()
    shape = {axis: 1 for axis in mesh.axis_names}
    tensor = mesh.shape.get("tensor", 1)
    if "tensor" in shape and local % tensor == 0:
      shape["tensor"] = tensor
    rest = local // int(np.prod(list(shape.values())))
    shape["fsdp" if "fsdp" in shape else mesh.axis_names[0]] *= rest
    dims = tuple(shape[a] for a in mesh.axis_names)
    ordered = [by_process[p] for p in sorted(by_process)]
    own = np.asarray(by_process[jax.process_index()], dtype=object).reshape(dims)
    everyone = np.asarray(ordered, dtype=object).reshape((len(ordered),) + dims)
    return cls(Mesh(own, mesh.axis_names), Mesh(everyone, ("processes",) + tuple(mesh.axis_names)),
               tuple(rules))

  def copy(self, state: nnx.State) -> nnx.State:
    """This process's whole copy of `state` (global arrays), laid out on `mesh`. Collective:
    every process calls it with the same state."""
    gathered = jax.device_put(state, state_shardings(state, self.gathered, self.rules))
    own = state_shardings(state, self.mesh, self.rules)
    return jax.tree.map(
        lambda x, s: jax.make_array_from_single_device_arrays(
            x.shape, s, [shard.data for shard in x.addressable_shards]), gathered, own)


# -- memory -------------------------------------------------------------------------------------


def bytes_per_device(tree: Any) -> int:
  """The largest total, over devices, of the bytes each device holds of `tree`'s arrays (its
  addressable shards; an abstract leaf with a sharding counts its shard shape)."""
  totals: dict[Any, int] = {}
  for leaf in jax.tree.leaves(tree):
    if isinstance(leaf, jax.Array):
      for shard in leaf.addressable_shards:
        totals[shard.device] = totals.get(shard.device, 0) + shard.data.nbytes
    elif isinstance(leaf, jax.ShapeDtypeStruct) and leaf.sharding is not None:
      nbytes = int(np.prod(leaf.sharding.shard_shape(leaf.shape))) * np.dtype(leaf.dtype).itemsize
      for device in leaf.sharding.addressable_devices:
        totals[device] = totals.get(device, 0) + nbytes
  return max(totals.values()) if totals else 0
