r"""The default experiment on renamed task variants: every synthetic bug in three spellings.

Each bug appears with the library's parameter, variable and module names and in two renamed
variants (rl/tasks/synthetic/rename.py), so a task's path and lines are only known from the
prompt and the files, not from memory; the expert always reads the file it edits. Held-out
tasks are renamed the same way.

Measured (docs/experiments.md, ninth round), SFT alone: 240 steps take 8 minutes and leave the renamed
training tasks mostly unsolved (pass@1 0.39 greedy, 0.056 at T = 0.7); 720 steps memorise
them (0.986) and open the held-out task's file 10 times in 18, with held-out pass@1 still 0.

  .venv/bin/python train.py --config configs/experiments/renamed.py --workdir runs/renamed
"""

from configs.experiments import scratch


def get_config(arg=None):
  c = scratch.get_config(arg).unlock()
  c.tasks.synthetic_renames = 2
  c.tasks.synthetic_tiers = "easy=1"
  c.tasks.num_synthetic = 90
  c.sft.expert_read_prob = 1.0
  c.sft.demos_per_task = 1
  c.sft.steps = 240  # as measured; more steps memorise more (720: 0.986)
  return c.lock()
