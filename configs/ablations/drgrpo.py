r"""Dr.GRPO: GRPO without std normalisation and with a constant-length loss normaliser.

  .venv/bin/python train.py --config configs/ablations/drgrpo.py --workdir runs/drgrpo
"""

from configs.ablations import grpo


def get_config(arg=None):
  c = grpo.get_config(arg).unlock()
  c.algo.advantage_estimator = "drgrpo"
  c.algo.loss_agg = "seq-mean-token-sum-norm"
  return c.lock()
