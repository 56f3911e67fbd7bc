"""A run's state beyond the update step: where a run starts from (`config.init_from`: a Hugging
Face directory or one of our run directories) and copies of train-state trees.

Checkpoints themselves are rl.train.checkpoint (orbax); the trainer decides what goes in them
(`Trainer.device_state` and `Trainer.host_state`) and resumes from them (`Trainer.maybe_resume`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
from flax import nnx

from rl import models as model_lib

REPO_ROOT = Path(__file__).resolve().parents[2]


def copy_tree(tree: Any) -> Any:
  """A copy of every array of `tree`, each keeping its sharding (the update donates its inputs)."""
  return jax.tree.map(lambda x: jnp.array(x, copy=True), tree)


def resolve_init_from(path: str | Path) -> Path:
  """`config.init_from` as a directory: as given, or relative to the repository (so that
  "rl/assets/tiny_base" works from any working directory)."""
  given = Path(path)
  for candidate in (given, REPO_ROOT / given):
    if candidate.is_dir():
      return candidate
  raise FileNotFoundError(f"config.init_from: no such directory: {str(path)!r} (a Hugging Face "
                          f"directory or a run directory of ours)")


def load_weights(path: str | Path, policy: Any, critic: Any, policy_graphdef: Any, *, mesh: Any = None,
                 rules: Any = None) -> tuple[Any, Any]:
  """(policy, critic) parameter states with the weights of `path` (`config.init_from`) in place of
  the given ones: a Hugging Face directory's policy (read shard by shard with a mesh), or a run
  directory's latest policy and critic (`critic` None: the policy only). Weights only: the
  optimiser states (their kind, their moments) belong to the loading run's config."""
  path = resolve_init_from(path)
  if (path / "config.json").exists() and any(path.glob("*.safetensors")):
    loaded = model_lib.load_hf_checkpoint(path, mesh=mesh, rules=rules)
    src = nnx.state(loaded, nnx.Param)
    want = {jax.tree_util.keystr(k): v.shape for k, v in jax.tree_util.tree_leaves_with_path(policy)}
    got = {jax.tree_util.keystr(k): v.shape for k, v in jax.tree_util.tree_leaves_with_path(src)}
    if want != got:
      diff = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))[:3]
      raise ValueError(f"config.init_from {str(path)!r}: its weights do not fit config.model "
                       f"(first differences: {', '.join(f'{k} {got.get(k)} vs {want.get(k)}' for k in diff)})")
    model = nnx.merge(policy_graphdef, policy)
    nnx.update(model, src)
    return copy_tree(nnx.state(model, nnx.Param)), critic
  from rl.train.checkpoint import Checkpointer  # pylint: disable=import-outside-toplevel

  other = Checkpointer(path, keep=1, best_metric=None)
  weights = {"policy": policy}
  if critic is not None:
    weights["critic"] = critic
  restored, _, _ = other.restore({"train": weights}, partial=True)
  other.close()
  return restored["train"]["policy"], restored["train"].get("critic")
