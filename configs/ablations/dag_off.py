r"""Ablation (MLE experiment): duration-aware gradients off; every trajectory weighs the same.

  .venv/bin/python train.py --config configs/ablations/dag_off.py --workdir runs/dag_off \
      --config.tasks.mle_root=runs/mle_tasks

The paper reports +3.85% on average from duration-aware gradients (dt / mean dt).
"""

from configs.experiments import mle


def get_config(arg=None):
  c = mle.get_config(arg).unlock()
  c.algo.duration_weight = "none"
  return c.lock()
