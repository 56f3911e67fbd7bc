r"""Ablation (MLE experiment): duration weights 1 / log(1 + dt) instead of dt / mean(dt).

  .venv/bin/python train.py --config configs/ablations/dag_inverse_log.py --workdir runs/dag_inverse_log \
      --config.tasks.mle_root=runs/mle_tasks

The inverse weighting damps slow programs rather than favouring them: the opposite bias of
the paper's choice, useful to see which way the effect goes on a task set.
"""

from configs.experiments import mle


def get_config(arg=None):
  c = mle.get_config(arg).unlock()
  c.algo.duration_weight = "inverse_log"
  return c.lock()
