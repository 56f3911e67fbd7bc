"""Runs one update step on a mesh and prints a JSON fingerprint (for sharding tests).

Used by tests/test_sharded_update.py in subprocesses: with 8 fake CPU devices, and as
two cooperating processes over JAX's distributed runtime on localhost.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import jax  # noqa: E402


def main():
  args = [a for a in sys.argv[1:] if not a.startswith("--parts=")]
  parts = int(next((a.split("=")[1] for a in sys.argv[1:] if a.startswith("--parts=")), "1"))
  sys.argv = [sys.argv[0], *args]
  mesh_shape = tuple(int(s) for s in sys.argv[1].split(","))
  if len(sys.argv) > 2:  # multi-process: coordinator, num_processes, process_id
    jax.distributed.initialize(coordinator_address=sys.argv[2], num_processes=int(sys.argv[3]),
                               process_id=int(sys.argv[4]))
  import jax.numpy as jnp
  import numpy as np
  from flax import nnx

  from rl import parallel
  from rl import models as model_lib
  from rl.algo import update as update_lib

  cfg = model_lib.tiny_config("test", vocab_size=64)
  policy = model_lib.init_model(cfg, seed=0)
  critic = model_lib.make_critic(cfg, seed=1)
  model_lib.copy_trunk(policy, critic)
  pg, pstate = nnx.split(policy, nnx.Param)
  cg, cstate = nnx.split(critic, nnx.Param)
  # Plain SGD: parameter changes are proportional to gradients (Adam would amplify float noise
  # in near-zero gradients into visible differences).
  import optax
  tx = optax.sgd(0.5)
  state = update_lib.TrainState(step=jnp.zeros((), jnp.int32), policy=pstate, policy_opt=tx.init(pstate),
                                critic=cstate, critic_opt=tx.init(cstate))
  def make_rows(seed, B, T=16):
    rng = np.random.default_rng(seed)
    mask = (rng.random((B, T)) < 0.5).astype(np.float32)
    mask[:, 0] = 0
    mask[:, 3] = 1
    f = lambda: rng.normal(size=(B, T)).astype(np.float32)  # noqa: E731
    batch = {"tokens": rng.integers(1, 64, (B, T)).astype(np.int32), "valid": np.ones((B, T), np.float32),
             "mask": mask, "advantages": f() * mask, "returns": f() * mask,
             "old_logprobs": -4 + f() * 0.1 * mask, "old_values": f() * mask, "ref_logprobs": -4 + f() * 0.1,
             "sampler_logprobs": -4 + f() * 0.1, "token_weights": np.ones((B, T), np.float32),
             "sample_weights": np.ones((B,), np.float32), "has_sampler": np.ones((B,), np.float32)}
    # [B, T, K] extras: a sampler support holding each token (algo.logprob_support) and the
    # reference's top-k ids and log-probs (algo.kl_topk).
    ids = (batch["tokens"][..., None] + np.arange(4)) % 64
    batch.update(support=ids.astype(np.int32), ref_top_ids=((ids + 5) % 64).astype(np.int32),
                 ref_top_logprobs=np.log(rng.uniform(0.05, 0.2, (B, T, 4))).astype(np.float32))
    return batch

  # The batch is `parts` blocks of rows, each from its own seed (a process's own rollouts). With
  # several processes, process p holds block p only and contributes it to the global batch; one
  # process holds the concatenation.
  B = 8
  local = jax.process_count() > 1
  if local:
    assert parts == jax.process_count(), "one block of rows per process"
    batch = make_rows(jax.process_index(), B // parts)
  else:
    blocks = [make_rows(p, B // parts) for p in range(parts)]
    batch = {k: np.concatenate([b[k] for b in blocks]) for k in blocks[0]}
  mesh = parallel.make_mesh(mesh_shape, ("data", "fsdp", "tensor"))
  settings = update_lib.UpdateSettings(
      micro_batch_size=8 // (mesh_shape[0] * mesh_shape[1]) * (mesh_shape[0] * mesh_shape[1]),
      support_top_k=4, support_top_p=1.0, kl_topk=4, kl_in_loss=True)
  # The state sharded as the trainer lays it out (FSDP over fsdp, tensor parallel over tensor).
  state_sharding = update_lib.train_state_shardings(pstate, cstate, tx, tx, mesh, parallel.DEFAULT_RULES)
  bs = parallel.rows_sharding(mesh, ndim=1)
  batch_sharding = {k: bs for k in batch}
  step = update_lib.make_update_step(pg, cg, tx, tx, settings, state_sharding=state_sharding,
                                     batch_sharding=batch_sharding)
  state = parallel.put_tree(jax.tree.map(np.asarray, state), state_sharding)
  gbatch = {k: parallel.rows_to_global(v, bs) for k, v in batch.items()}
  # Token and sequence counts of the whole batch: each process counts its own rows.
  counts = parallel.sum_over_processes({"num_tokens": float(batch["mask"].sum()),
                                        "num_sequences": float(len(batch["mask"]))})
  scalars = {"num_tokens": jnp.float32(counts["num_tokens"]), "num_sequences": jnp.float32(counts["num_sequences"]),
             "kl_coef": jnp.float32(0.1), "temperature": jnp.float32(1.0)}
  for _ in range(2):
    state, metrics = step(state, gbatch, scalars, True, True)
  leaves = jax.tree.leaves(state.policy) + jax.tree.leaves(state.critic)
  fingerprint = [float(jnp.sum(x.astype(jnp.float32) * (1 + i % 7))) for i, x in enumerate(leaves)]
  out = {"metrics": {k: float(v) for k, v in metrics.items()}, "fingerprint": fingerprint,
         "devices": jax.device_count(), "processes": jax.process_count()}
  if jax.process_index() == 0:
    print("RESULT " + json.dumps(out))


if __name__ == "__main__":
  main()
