r"""Dr.GRPO on the long-horizon family: GRPO without the std normalisation, constant-length
loss normaliser (the same episodes as long_horizon_grpo.py).

  .venv/bin/python train.py --config configs/experiments/long_horizon_drgrpo.py --workdir runs/long_horizon_drgrpo
"""

from configs.experiments import long_horizon_grpo


def get_config(arg=None):
  c = long_horizon_grpo.get_config(arg).unlock()
  c.algo.advantage_estimator = "drgrpo"
  c.algo.loss_agg = "seq-mean-token-sum-norm"
  return c.lock()
