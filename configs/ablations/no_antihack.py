r"""Ablation: no anti-hack filter at all (no rules, no judge): how much reward is hacked?

  .venv/bin/python train.py --config configs/ablations/no_antihack.py --workdir runs/no_antihack

Compare train/reward_mean with eval/pass@1 against the default (rules_only): a reward that
rises while held-out pass@1 does not is the signature of reward hacking.
"""

from configs import default


def get_config(arg=None):
  c = default.get_config(arg).unlock()
  c.antihack.rules = "none"
  c.antihack.judge = "none"
  return c.lock()
