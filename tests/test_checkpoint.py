"""Checkpoints round-trip device and host state; keep-last-N and best-by-metric."""

import jax.numpy as jnp
import pytest
import numpy as np

from rl.train.checkpoint import Checkpointer


def test_round_trip_keep_last_and_best(tmp_path):
  ckpt = Checkpointer(tmp_path, keep=2)
  for step, score in [(1, 0.1), (2, 0.9), (3, 0.3)]:
    state = {"params": {"w": jnp.full((3,), float(step))}, "step": jnp.asarray(step)}
    ckpt.save(step, state, {"buffer": [step], "data_position": step * 10}, {"eval/pass@1": score})
  assert ckpt.latest_step() == 3
  abstract = {"params": {"w": jnp.zeros((3,))}, "step": jnp.asarray(0)}
  state, host, step = ckpt.restore(abstract)
  assert step == 3 and host == {"buffer": [3], "data_position": 30}
  np.testing.assert_array_equal(state["params"]["w"], np.full((3,), 3.0))
  _, host, best_step = ckpt.restore(abstract, best=True)
  assert best_step == 2 and host["data_position"] == 20
  kept = sorted(p.name for p in (tmp_path / "checkpoints" / "last").iterdir() if p.name.isdigit())
  assert kept == ["2", "3"]
  ckpt.close()


def test_partial_restore_reads_a_subtree_whatever_the_rest(tmp_path):
  """init_from reads the weights only, so a checkpoint whose optimiser state has another
  structure (AdamW moments vs SGD momentum) still initialises a run."""
  ckpt = Checkpointer(tmp_path, keep=1)
  saved = {"train": {"policy": {"w": jnp.arange(3.0)}, "opt": [jnp.ones(3), jnp.zeros(3)]},
           "ref": {"w": jnp.zeros(3)}}
  ckpt.save(1, saved, {}, {})
  with pytest.raises(ValueError):  # the full-state restore refuses a different structure
    ckpt.restore({"train": {"policy": {"w": jnp.zeros(3)}, "opt": [jnp.zeros(3)]},
                  "ref": {"w": jnp.zeros(3)}})
  state, _, step = ckpt.restore({"train": {"policy": {"w": jnp.zeros(3)}}}, partial=True)
  assert step == 1 and set(state) == {"train"} and set(state["train"]) == {"policy"}
  np.testing.assert_array_equal(state["train"]["policy"]["w"], np.arange(3.0))
  ckpt.close()
