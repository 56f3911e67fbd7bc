r"""Trains a coding agent with RL. Thin entry point: flags in, one library call.

  .venv/bin/python train.py --config configs/default.py --workdir runs/default
  .venv/bin/python train.py --config configs/ablations/grpo.py --workdir runs/grpo \
      --config.trainer.iterations=10

Bad input (a missing config file, an unknown or invalid config field, a malformed task, a
run directory of another config) ends with one line on stderr and exit status 2.
"""

import sys

from absl import app
from absl import logging
from absl import flags
from ml_collections import config_flags

from rl import cli

_DEFAULT_CONFIG = "configs/default.py"
cli.check_config_args(sys.argv, default=_DEFAULT_CONFIG)  # before ml_collections loads the file
_CONFIG = config_flags.DEFINE_config_file("config", _DEFAULT_CONFIG, "Experiment config file.")
_WORKDIR = flags.DEFINE_string("workdir", None, "Run directory (config, metrics, checkpoints).", required=True)


def main(argv):
  if len(argv) > 1:
    cli.fail(f"unexpected arguments: {' '.join(argv[1:])}")
  from rl.train import trainer  # imported late so --help stays fast

  logging.set_verbosity(logging.WARNING)  # orbax logs every save at INFO; progress is printed
  # orbax warns when a save waits more than a second for the previous asynchronous one, which on
  # a busy machine happens at the default's checkpoint cadence and asks nothing of the user.
  logging.get_absl_logger().addFilter(
      lambda record: not str(record.msg).startswith("Waiting for previous save to complete"))

  with cli.bad_input_exits(trainer.WorkdirError):
    trainer.run(_CONFIG.value, _WORKDIR.value)


if __name__ == "__main__":
  app.run(main, flags_parser=cli.parse_flags)
