r"""Trains a coding agent with RL. Thin entry point: flags in, one library call.

  .venv/bin/python train.py --config configs/default.py --workdir runs/default
  .venv/bin/python train.py --config configs/ablations/grpo.py --workdir runs/grpo \
      --config.trainer.iterations=10
"""

from absl import app
from absl import logging
from absl import flags
from ml_collections import config_flags

_CONFIG = config_flags.DEFINE_config_file("config", "configs/default.py", "Experiment config file.")
_WORKDIR = flags.DEFINE_string("workdir", None, "Run directory (config, metrics, checkpoints).", required=True)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"unexpected arguments: {argv[1:]}")
  from rl import trainer  # imported late so --help stays fast

  logging.set_verbosity(logging.WARNING)  # orbax logs every save at INFO; progress is printed

  trainer.run(_CONFIG.value, _WORKDIR.value)


if __name__ == "__main__":
  app.run(main)
