"""The trainer's batch path (scoring, advantages, PPO update, metrics) on fixed episodes, printed
as a JSON fingerprint with the sampler's greedy decodes of a few prompts:
tests/test_trainer_multiprocess.py compares one process given every episode with two processes
that each take half of the groups, as a multi-process iteration splits its tasks.

  python tests/helpers/trainer_batch_check.py TASKS_ROOT WORKDIR [COORDINATOR PROCESSES ID]
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

GROUPS, GROUP_SIZE = 4, 2
# The default algorithm (GAE with a critic, batch-whitened advantages, the 20% highest-entropy
# tokens: two batch statistics) on one mini-batch of every row; packing off, as several
# processes update unpacked.
CHECK_RUN = {"sft.enabled": False, "trainer.train_eval_samples": 0, "trainer.eval_every": 0,
             "trainer.tasks_per_iteration": GROUPS, "algo.group_size": GROUP_SIZE,
             "optim.mini_batch_size": GROUPS * GROUP_SIZE, "optim.micro_batch_size": 4,
             "trainer.pack_fraction": 0.0, "trainer.pad_multiple": 64, "optim.policy_optimizer": "sgd",
             "optim.policy_lr": 0.5}


def episodes(vocab: int):
  """GROUPS x GROUP_SIZE two-turn episodes of different lengths, rewards and run times; the last
  one failed for an infrastructure reason (no row: the process running it pads its share)."""
  import numpy as np

  from rl.env.episode import Episode

  rng = np.random.default_rng(0)
  out = []
  for group in range(GROUPS):
    for _ in range(GROUP_SIZE):
      prompt, act1, obs, act2 = (int(n) for n in rng.integers([6, 3, 2, 3], [12, 20, 10, 40]))
      mask = [0] * prompt + [1] * act1 + [0] * obs + [1] * act2
      tokens = rng.integers(5, vocab, len(mask)).tolist()
      logprobs = [float(-rng.uniform(0.1, 4.0)) if m else 0.0 for m in mask]
      passed = int(rng.integers(0, 4))
      out.append(Episode(
          task_id=f"task-{group}", group_id=group, tokens=tokens, action_mask=mask,
          sampler_logprobs=logprobs, turn_ends=[prompt + act1 - 1, len(mask) - 1],
          turn_rewards=[0.0, 0.0], final_reward=passed / 3, success=passed == 3, terminated="submit",
          truncated=False, duration_s=float(rng.uniform(1, 3)), exec_time_s=float(rng.uniform(0.5, 2)),
          record={"tests": {"passed": passed, "total": 3}, "hack": {"flagged": False}},
          turn_errors=[False, False]))
  out[-1].infra_failure = "exec"
  return out


def main():
  import jax
  import jax.numpy as jnp
  import numpy as np

  from rl import parallel
  from rl.train import state as state_lib
  from rl.train import trainer as trainer_lib
  from test_trainer import tiny_config

  tasks_root, workdir = sys.argv[1:3]
  extra = {}
  if len(sys.argv) > 3:
    extra = {"distributed.coordinator": sys.argv[3], "distributed.num_processes": int(sys.argv[4]),
             "distributed.process_id": int(sys.argv[5])}
  config = tiny_config(tasks_root, iterations=1, **CHECK_RUN, **extra)
  parallel.initialize(config)
  trainer = trainer_lib.Trainer(config, trainer_lib.prepare_workdir(config, workdir))
  trainer.ref_params = state_lib.copy_tree(trainer.state.policy)
  # Greedy decodes of the initial weights by the sampler: with several processes each decodes on
  # its own devices from its own copy of the weights (parallel.LocalReplica).
  trainer._set_policy(0.0, seed=0)  # pylint: disable=protected-access
  rng = np.random.default_rng(1)
  prompts = [rng.integers(5, len(trainer.tokenizer), size=n).tolist() for n in (7, 12, 20, 9)]
  greedy = trainer.model_policy.sampler.sample(prompts, max_new_tokens=8, rng=jax.random.key(0), temperature=0.0)
  every = episodes(len(trainer.tokenizer))
  # Process p runs tasks (groups) p, p + P, ...: its rows of the global batch.
  mine = [e for e in every if e.group_id % jax.process_count() == jax.process_index()]
  metrics = trainer.learn_from_rollout(mine, {"perf/generate_s": 1.0}, 1.0, {})
  leaves = jax.tree.leaves(trainer.state.policy) + jax.tree.leaves(trainer.state.critic)
  total = jax.jit(lambda xs: [jnp.sum(x.astype(jnp.float32) * (1 + i % 7)) for i, x in enumerate(xs)])
  fingerprint = [float(v) for v in total(leaves)]
  skip = ("time/", "perf/", "memory/")
  out = {"metrics": {k: float(v) for k, v in metrics.items() if not k.startswith(skip)},
         "fingerprint": fingerprint, "processes": jax.process_count(), "devices": jax.device_count(),
         "rows": len(mine), "greedy": [list(map(int, t)) for t in greedy.tokens],
         "sampler_mesh": None if trainer.replica is None else dict(trainer.replica.mesh.shape)}
  print("RESULT " + json.dumps(out), flush=True)


if __name__ == "__main__":
  main()
