r"""Ablation: stage-1 rules only, no judge (the default's anti-hack, named for the table).

  .venv/bin/python train.py --config configs/ablations/rules_only.py --workdir runs/rules_only
"""

from configs import default


def get_config(arg=None):
  c = default.get_config(arg).unlock()
  c.antihack.rules = "default"
  c.antihack.judge = "none"
  return c.lock()
