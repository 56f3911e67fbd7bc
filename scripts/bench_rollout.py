"""Benchmark: how much sandbox work (tools, grading) the rollout engine hides behind generation.

  python scripts/bench_rollout.py --tasks runs/default/tasks [--num-tasks 8] [--group-size 2]
      [--gen-ms 200] [--repeats 3]

A scripted expert that sleeps `--gen-ms` per batched policy call stands in for the model, so the
numbers isolate the engine. For each setting it prints the median wall time over the repeats,
the generation time, the sandbox busy time (union over workers) and total sandbox job time, the
share of generation time that overlapped sandbox work, and the speed-up against the serial
baseline (generation time + total sandbox job time: the same work, one thing at a time).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from rl import config as config_lib
from rl.env import actors  # noqa: E402
from rl.env import rollout  # noqa: E402
from rl.env import tools as tools_lib  # noqa: E402
from rl.tasks import load_task_root  # noqa: E402
from rl.tokenizer import load_tokenizer  # noqa: E402


class SlowExpert(actors.ScriptedExpert):
  """The scripted expert with a fixed latency per batched call (a stand-in for decoding)."""

  def __init__(self, renderer, gen_s: float, **kw):
    super().__init__(renderer, **kw)
    self.gen_s = gen_s

  def act(self, requests):
    time.sleep(self.gen_s)
    return super().act(requests)


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--tasks", required=True, help="task root with tasks that carry metadata['fix']")
  parser.add_argument("--num-tasks", type=int, default=8)
  parser.add_argument("--group-size", type=int, default=2)
  parser.add_argument("--gen-ms", type=float, default=200.0)
  parser.add_argument("--repeats", type=int, default=3)
  parser.add_argument("--workers", type=int, default=2)
  args = parser.parse_args(argv)

  tasks = [t for t in load_task_root(args.tasks) if t.metadata.get("fix")][:args.num_tasks]
  if not tasks:
    raise SystemExit(f"no tasks with metadata['fix'] under {args.tasks}")
  config = config_lib.load_config(None)
  config.agent.num_workers = args.workers
  renderer = tools_lib.ChatRenderer.from_config(load_tokenizer(), config)
  print(f"{len(tasks)} tasks x {args.group_size} episodes, {args.gen_ms:.0f} ms per policy call, "
        f"{args.workers} sandbox workers, {args.repeats} repeats (medians)")
  print(f"{'setting':<26} {'wall_s':>8} {'gen_s':>7} {'sb_busy_s':>10} {'sb_jobs_s':>10} {'gen_overlap':>12} "
        f"{'serial_s':>9} {'speed-up':>9}")
  for fraction in (1.0, 0.5):
    config.agent.min_ready_fraction = fraction
    rows = []
    for repeat in range(args.repeats):
      engine = rollout.RolloutEngine(config, SlowExpert(renderer, args.gen_ms / 1000, seed=repeat), renderer)
      episodes, m = engine.run(tasks, group_size=args.group_size)
      if not all(e.success for e in episodes):
        print(f"warning: {sum(not e.success for e in episodes)} expert episodes failed")
      rows.append(m)
    med = lambda key: statistics.median(r[key] for r in rows)  # noqa: E731
    serial = med("perf/generate_s") + med("perf/sandbox_job_s")
    print(f"{'min_ready_fraction=' + str(fraction):<26} {med('rollout/wall_s'):>8.2f} {med('perf/generate_s'):>7.2f} "
          f"{med('perf/sandbox_busy_s'):>10.2f} {med('perf/sandbox_job_s'):>10.2f} "
          f"{med('perf/overlap_gen_frac'):>12.2f} {serial:>9.2f} {serial / med('rollout/wall_s'):>8.2f}x")
  return 0


if __name__ == "__main__":
  sys.exit(main())
