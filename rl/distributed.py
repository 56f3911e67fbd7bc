"""Multi-device and multi-host plumbing: process start-up, meshes, batch shardings.

Multi-host runs use JAX's own distributed runtime: `initialize(config)` calls
`jax.distributed.initialize` when `config.distributed.coordinator` (or the
standard JAX_COORDINATOR_ADDRESS/JAX_NUM_PROCESSES/JAX_PROCESS_ID environment)
names a coordinator. Every process then runs its own rollout workers and sandbox
pool; the update is one jitted function over the global mesh, and process 0
writes metrics and coordinates checkpoints.
"""

from __future__ import annotations

import math
import os
from typing import Any, Sequence

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

BATCH_AXES = ("data", "fsdp")


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
  """A mesh over `devices` (default: all, across processes); one -1 absorbs the rest."""
  devices = list(jax.devices() if devices is None else devices)
  shape = list(shape)
  known = math.prod(s for s in shape if s != -1)
  if -1 in shape:
    shape[shape.index(-1)] = len(devices) // known
  if math.prod(shape) != len(devices):
    raise ValueError(f"mesh shape {tuple(shape)} does not match {len(devices)} devices")
  return Mesh(np.asarray(devices).reshape(shape), tuple(axes))


def batch_sharding(mesh: Mesh) -> NamedSharding:
  axes = tuple(a for a in BATCH_AXES if a in mesh.axis_names)
  return NamedSharding(mesh, P(axes))


def replicated(mesh: Mesh) -> NamedSharding:
  return NamedSharding(mesh, P())


def global_array(host_value: np.ndarray, sharding: NamedSharding) -> jax.Array:
  """A global array from a value every process holds in full (works multi-process)."""
  host_value = np.asarray(host_value)
  return jax.make_array_from_callback(host_value.shape, sharding, lambda index: host_value[index])


def put_tree(tree: Any, sharding_tree: Any) -> Any:
  return jax.tree.map(lambda x, s: global_array(np.asarray(x), s), tree, sharding_tree)
