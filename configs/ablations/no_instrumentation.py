r"""Ablation (MLE experiment): no environment instrumentation, so no +0.1 stage credit.

  .venv/bin/python train.py --config configs/ablations/no_instrumentation.py --workdir runs/no_instrumentation \
      --config.tasks.mle_root=runs/mle_tasks

The paper reports instrumentation as its largest single gain (+22% on average).
"""

from configs.experiments import mle


def get_config(arg=None):
  c = mle.get_config(arg).unlock()
  c.instrumentation.backend = "none"
  return c.lock()
