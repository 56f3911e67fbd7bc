"""Grades a logged trajectory (its actions replayed in a fresh sandbox) or a workspace directory.

  python scripts/grade.py --task TASK_DIR --trajectory FILE [--index N]
  python scripts/grade.py --task TASK_DIR --workspace DIR

Prints one JSON object with at least `reward`, `tests` and `hack` (shared/ARCHITECTURE.md);
for a trajectory also `logged_reward` and any step whose observation differs. Bad input (a
malformed task, a missing file, no matching record) is one line on stderr, exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from rl import cli  # noqa: E402
from rl import config as config_lib  # noqa: E402
from rl.env.trajectory import read_trajectories  # noqa: E402
from rl.outcome import evaluator as evaluator_lib
from rl.outcome import replay as replay_lib
from rl.tasks import load_task  # noqa: E402


def select_record(path: str, index: int | None, episode_id: int | None, task_id: str) -> dict:
  """The index-th record of `path` (or the one with `episode_id`), which must be for `task_id`."""
  matching = []
  for i, record in enumerate(read_trajectories(path)):
    if episode_id is not None:
      if record.get("episode_id") == episode_id and record["task_id"] == task_id:
        return record
      continue
    if index is not None and i == index:
      return record
    if index is None and record["task_id"] == task_id:
      matching.append(record)
  if index is None and episode_id is None and matching:
    return matching[0]
  raise cli.InputError(f"no matching trajectory record in {path} (index={index}, episode_id={episode_id}, "
                       f"task={task_id})")


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--task", required=True, help="task directory")
  source = parser.add_mutually_exclusive_group(required=True)
  source.add_argument("--trajectory", help="trajectory JSONL file or directory")
  source.add_argument("--workspace", help="grade this directory as is")
  parser.add_argument("--index", type=int, default=None,
                      help="record number in the file (default: the first record of the task)")
  parser.add_argument("--episode-id", type=int, default=None)
  parser.add_argument("--config", default="", help="config file[:arg]; default configs/default.py")
  parser.add_argument("--backend", default="", help="sandbox backend override (local | docker)")
  args = parser.parse_args(argv)

  with cli.bad_input_exits():
    if args.config:
      cli.require_path(args.config.partition(":")[0], "--config file", directory=False)
    cli.require_path(args.task, "--task directory", directory=True)
    if args.workspace:
      cli.require_path(args.workspace, "--workspace directory", directory=True)
    else:
      cli.require_path(args.trajectory, "--trajectory file or directory")
    config = config_lib.load_config(args.config or None)
    if args.backend:
      config.sandbox.backend = args.backend
    config_lib.validate(config)  # an unknown --backend, named with the known ones
    task = load_task(args.task)
    record = None if args.workspace else select_record(args.trajectory, args.index, args.episode_id, task.id)
  evaluator = evaluator_lib.Evaluator(config)
  if args.workspace:
    out = replay_lib.grade_workspace(task, args.workspace, evaluator)
  else:
    out = replay_lib.replay_record(record, task, evaluator)
  print(json.dumps(out, default=str))
  return 0


if __name__ == "__main__":
  sys.exit(main())
