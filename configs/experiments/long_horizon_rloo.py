r"""RLOO on the long-horizon family: leave-one-out group baseline, no critic (the same episodes
as long_horizon_grpo.py).

  .venv/bin/python train.py --config configs/experiments/long_horizon_rloo.py --workdir runs/long_horizon_rloo
"""

from configs.experiments import long_horizon_grpo


def get_config(arg=None):
  c = long_horizon_grpo.get_config(arg).unlock()
  c.algo.advantage_estimator = "rloo"
  c.algo.loss_agg = "token-mean"
  return c.lock()
