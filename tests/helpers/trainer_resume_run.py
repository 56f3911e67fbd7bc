"""Runs the kill-and-resume test's tiny two-iteration training (tests/test_trainer.py).

The test runs the same command several times in one run directory, in a subprocess each, with
RLCODER_KILL_AT set for the runs that die with SIGKILL at a named point (rl.killpoints):
  RLCODER_KILL_AT=update:2 python tests/helpers/trainer_resume_run.py TASKS_ROOT WORKDIR
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def main():
  from rl.train import trainer as trainer_lib
  from test_trainer import KILLED_RUN, tiny_config

  tasks_root, workdir = sys.argv[1], sys.argv[2]
  trainer_lib.run(tiny_config(tasks_root, iterations=2, **KILLED_RUN), workdir)


if __name__ == "__main__":
  main()
