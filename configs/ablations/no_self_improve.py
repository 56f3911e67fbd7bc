r"""Ablation (MLE experiment): every prompt starts from scratch; no improve-previous prompts.

  .venv/bin/python train.py --config configs/ablations/no_self_improve.py --workdir runs/no_self_improve \
      --config.tasks.mle_root=runs/mle_tasks

The paper finds improve-previous prompts better on 10 of 12 tasks.
"""

from configs.experiments import mle


def get_config(arg=None):
  c = mle.get_config(arg).unlock()
  c.self_improve.enabled = False
  c.self_improve.probability = 0.0
  c.self_improve.probability_final = -1.0
  return c.lock()
