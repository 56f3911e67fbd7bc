r"""GRPO on the long-horizon family: group-normalised episode scores, no critic, G = 4.

The same 32 episodes per iteration as configs/experiments/long_horizon.py (8 tasks x G = 4),
the same base, SFT and tasks; the policy updates from the first iteration (no critic to warm).

  .venv/bin/python train.py --config configs/experiments/long_horizon_grpo.py --workdir runs/long_horizon_grpo
"""

from configs.experiments import long_horizon


def get_config(arg=None):
  c = long_horizon.get_config(arg).unlock()
  c.algo.advantage_estimator = "grpo"
  c.algo.group_size = 4
  c.trainer.tasks_per_iteration = max(c.trainer.tasks_per_iteration // 4, 1)
  c.algo.loss_agg = "seq-mean-token-mean"
  c.optim.critic_warmup_iterations = 0  # no critic to warm up
  return c.lock()
