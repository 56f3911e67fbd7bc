r"""GRPO: group-normalised episode scores, no critic (G = 4 episodes per task).

  .venv/bin/python train.py --config configs/ablations/grpo.py --workdir runs/grpo

Same number of episodes per iteration as the default (tasks x G).
"""

from configs import default


def get_config(arg=None):
  c = default.get_config(arg).unlock()
  c.algo.advantage_estimator = "grpo"
  c.algo.group_size = 4
  c.trainer.tasks_per_iteration = max(c.trainer.tasks_per_iteration // 4, 1)
  c.algo.loss_agg = "seq-mean-token-mean"
  c.model.value_head = "separate"  # kept for the model, but never trained or used
  c.optim.critic_warmup_iterations = 0  # no critic to warm up
  return c.lock()
