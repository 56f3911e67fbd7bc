"""Re-runs logged trajectories in fresh sandboxes and reports every step or reward that differs.

  python scripts/replay.py --trajectory runs/x/trajectories --tasks runs/x/tasks [--limit 50]

Each record's actions are executed again (through the same online anti-hack checks), the final
workspace is graded in a fresh sandbox and the reward recomputed. Observations are compared after
masking durations (`--strict` compares them verbatim). Exit status 1 when any reward differs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from rl import config as config_lib
from rl.env.trajectory import read_trajectories  # noqa: E402
from rl.outcome import evaluator as evaluator_lib
from rl.outcome import replay as replay_lib
from rl.tasks import load_task  # noqa: E402


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--trajectory", required=True, help="trajectory JSONL file or directory")
  parser.add_argument("--tasks", required=True, help="task root holding <task_id>/ directories")
  parser.add_argument("--limit", type=int, default=0, help="replay at most this many records (0 = all)")
  parser.add_argument("--strict", action="store_true", help="compare observations verbatim")
  parser.add_argument("--config", default="", help="config file[:arg]; default configs/default.py")
  parser.add_argument("--backend", default="", help="sandbox backend override (local | docker)")
  args = parser.parse_args(argv)

  config = config_lib.load_config(args.config or None)
  if args.backend:
    config.sandbox.backend = args.backend
  evaluator = evaluator_lib.Evaluator(config)
  tasks: dict[str, object] = {}
  replayed = reward_mismatches = observation_mismatches = 0
  for record in read_trajectories(args.trajectory):
    if args.limit and replayed >= args.limit:
      break
    task_id = record["task_id"]
    if task_id not in tasks:
      tasks[task_id] = load_task(os.path.join(args.tasks, task_id))
    out = replay_lib.replay_record(record, tasks[task_id], evaluator, strict=args.strict)
    replayed += 1
    diffs = out["differences"]
    reward_mismatches += any(d["field"] == "final_reward" for d in diffs)
    observation_mismatches += any(d["field"] != "final_reward" for d in diffs)
    for d in diffs:
      print(json.dumps({"task_id": task_id, "episode_id": record.get("episode_id"), **d}, default=str))
  summary = {"replayed": replayed, "reward_mismatches": reward_mismatches,
             "records_with_step_differences": observation_mismatches}
  print(json.dumps(summary))
  return 1 if reward_mismatches else 0


if __name__ == "__main__":
  sys.exit(main())
