r"""PPO with a token-level critic and GAE: the default algorithm, named for ablation tables.

  .venv/bin/python train.py --config configs/ablations/ppo.py --workdir runs/ppo
"""

from configs import default


def get_config(arg=None):
  return default.get_config(arg)
