r"""Checks a task root: executability, stability over repeated runs, context completeness,
secrets and license. Prints a summary table and writes a JSON report.

  .venv/bin/python scripts/check_tasks.py tasks/quixbugs --runs 3 --report quixbugs_check.json --enforce

States are graded exactly as rollouts grade a final workspace (rl.outcome.evaluator.Evaluator with the
--config, default configs/default.py; its LLM judge is not called): the task's own sandbox
settings, the same test removal and counting, the anti-hack rules and the reward scheme. The
rules that fired are listed per task in the report. --batch is a faster pre-filter that runs
pytest batched in one session without the rules; it is not the training verdict.

--enforce exits 1 when any task fails a check; --prune-manifest rewrites manifest.jsonl to
list only the tasks that pass (loaders then skip flaky or broken ones). A malformed task is a
failed check in the table; a ROOT that is missing, or that is one task's directory, is bad
input: one line on stderr, exit status 2.

A task whose repo/ is a git checkout fails to load when its repository holds anything but the
base commit (HEAD) and its ancestors (tags, other branches, remotes, stashes, reflogs,
unreachable objects: places the fix can hide). --clean-git first rebuilds each such
repo/.git to hold only that (rl.tasks.workspace_git.clean_repository), then checks.
"""

import argparse
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from rl import cli  # noqa: E402
from rl.tasks.checks import check_root, format_table  # noqa: E402
from rl.tasks.format import load_task, write_manifest  # noqa: E402


def make_evaluator(config_spec: str, *, no_sandbox: bool):
  """The rollouts' grading path (rules and reward of the config; no LLM judge)."""
  from rl import config as config_lib
  from rl.outcome import evaluator as evaluator_lib
  from rl.tasks.verify import subprocess_grade  # pylint: disable=import-outside-toplevel
  with cli.bad_input_exits():
    config = config_lib.load_config(config_spec or None)
  config.antihack.judge = "none"
  config.reward.grade_cache = False  # the stability check needs real repeated runs
  return evaluator_lib.Evaluator(config, grade_fn=subprocess_grade if no_sandbox else None)


def clean_git(root: pathlib.Path) -> None:
  """Rebuilds the repo/.git of every task under `root` (tasks without one are left alone)."""
  from rl.tasks.format import TaskError
  from rl.tasks.workspace_git import clean_repository, has_repository, repository_problems
  for d in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
    repo = d / "repo"
    if not has_repository(repo) or not repository_problems(repo):
      continue
    try:
      info = clean_repository(repo)
      print(f"{d.name}: repo/.git rebuilt: {info['branch']} at {info['head'][:12]}, {info['commits']} commit(s)",
            file=sys.stderr)
    except TaskError as e:
      print(f"{d.name}: repo/.git not rebuilt: {e}", file=sys.stderr)


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("root")
  parser.add_argument("--runs", type=int, default=2, help="repeated runs for the stability check")
  parser.add_argument("--workers", type=int, default=2)
  parser.add_argument("--report", default=None, help="JSON report path (default ROOT/check_report.json)")
  parser.add_argument("--no-sandbox", action="store_true", help="run tests in plain subprocesses (trusted tasks only)")
  parser.add_argument("--batch", action="store_true",
                      help="fast pre-filter: batched pytest runs in one sandbox session, without the anti-hack "
                           "rules or the reward scheme (not the training verdict)")
  parser.add_argument("--no-batch", action="store_true", help=argparse.SUPPRESS)  # the default now
  parser.add_argument("--config", default="", help="config file[:arg] whose grading, rules and reward the "
                                                     "check uses (default configs/default.py)")
  parser.add_argument("--no-statement-check", action="store_true",
                      help="skip the statement check (leaks, issue-number-only statements)")
  parser.add_argument("--no-exec", action="store_true", help="static checks only (no test runs)")
  parser.add_argument("--allow-module", action="append", default=[],
                      help="a module hidden tests may import besides the workspace and stdlib (repeatable)")
  parser.add_argument("--enforce", action="store_true", help="exit 1 if any task fails a check")
  parser.add_argument("--prune-manifest", action="store_true", help="rewrite manifest.jsonl with passing tasks only")
  parser.add_argument("--clean-git", action="store_true",
                      help="first rebuild every task's repo/.git to hold only HEAD and its ancestors")
  args = parser.parse_args(argv)
  cli.require_path(args.root, "task root", directory=True)
  if (pathlib.Path(args.root) / "metadata.json").is_file():
    cli.fail(f"{args.root} is a task directory, not a task root: pass the folder that holds it")
  if args.report:
    cli.require_path(str(pathlib.Path(args.report).absolute().parent), "--report folder", directory=True)
  if args.config:
    cli.require_path(args.config.partition(":")[0], "--config file", directory=False)
  if args.clean_git:
    clean_git(pathlib.Path(args.root))
  evaluator = None
  if not args.no_exec and not args.batch:
    evaluator = make_evaluator(args.config, no_sandbox=args.no_sandbox)
  report = check_root(args.root, grader="subprocess" if args.no_sandbox else "sandbox", runs=args.runs,
                      workers=args.workers, allowed_modules=args.allow_module, execute=not args.no_exec,
                      batch=args.batch, evaluator=evaluator, check_statements=not args.no_statement_check,
                      log=lambda s: print(s, file=sys.stderr, flush=True))
  path = pathlib.Path(args.report or pathlib.Path(args.root) / "check_report.json")
  path.write_text(json.dumps(report, indent=1) + "\n")
  print(format_table(report))
  print(f"report: {path}")
  if args.prune_manifest:
    good = [load_task(pathlib.Path(args.root) / e["id"]) for e in report["tasks"] if e["ok"]]
    write_manifest(args.root, good)
    print(f"manifest.jsonl now lists {len(good)} of {len(report['tasks'])} tasks")
  if args.enforce and report["summary"]["ok"] < report["summary"]["tasks"]:
    return 1
  return 0


if __name__ == "__main__":
  sys.exit(main())
