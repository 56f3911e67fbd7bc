r"""RLOO: leave-one-out group baseline, no critic (G = 4).

  .venv/bin/python train.py --config configs/ablations/rloo.py --workdir runs/rloo
"""

from configs.ablations import grpo


def get_config(arg=None):
  c = grpo.get_config(arg).unlock()
  c.algo.advantage_estimator = "rloo"
  c.algo.loss_agg = "token-mean"
  return c.lock()
