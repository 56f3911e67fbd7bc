r"""Imports a benchmark (or fix commits of a git repository) as a task root.

  .venv/bin/python scripts/import_tasks.py humaneval shared/data/humaneval/HumanEval.jsonl.gz --out tasks/humaneval
  .venv/bin/python scripts/import_tasks.py humanevalfix shared/data/humanevalfix/humanevalpack_python.jsonl --out tasks/hefix
  .venv/bin/python scripts/import_tasks.py quixbugs shared/data/quixbugs/quixbugs.jsonl --out tasks/quixbugs
  .venv/bin/python scripts/import_tasks.py mbpp mbpp.jsonl --out tasks/mbpp
  .venv/bin/python scripts/import_tasks.py git path/to/repo --commits abc123 def456 --out tasks/mine
  .venv/bin/python scripts/import_tasks.py git path/to/repo --commits-file commits.json --out tasks/mine

git: --commits-file is a JSON (or YAML) list of commits, each a SHA or an object with its own
test_command, statement, setup, python_path, env, image, timeout_s, memory_mb, max_procs and
license; --statement-from is a JSON object {commit: statement} (docs/tasks.md).

Malformed JSONL lines are reported with their line numbers and skipped (--on-error skip,
the default) or abort the import (--on-error reject), one line on stderr and exit status 2,
like any other bad input (a missing input file, a git fix commit without tests). Then run
scripts/check_tasks.py.
"""

import argparse
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from rl import cli  # noqa: E402
from rl.tasks.importers import IMPORTERS, run_importer  # noqa: E402


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("source", choices=sorted(IMPORTERS), help="importer name")
  parser.add_argument("input", help="input file (JSONL / .jsonl.gz) or, for git, a repository path")
  parser.add_argument("--out", required=True, help="task root to write")
  parser.add_argument("--on-error", choices=("skip", "reject"), default="skip",
                      help="what to do with malformed input lines")
  parser.add_argument("--limit", type=int, default=None, help="import at most this many records")
  parser.add_argument("--license", default=None, help="override the license recorded in metadata")
  parser.add_argument("--commits", nargs="*", default=None, help="git: fix commits (default HEAD)")
  parser.add_argument("--commits-file", default=None,
                      help="git: JSON/YAML list of commits with per-commit options (test_command, setup, ...)")
  parser.add_argument("--name", default=None, help="git: repository name used in task ids (default: its folder's)")
  parser.add_argument("--statement-from", default=None,
                      help="git: JSON object {commit: statement} replacing the statements made from commit messages")
  parser.add_argument("--test-command", default=None,
                      help="git: one test command for every commit (default: pytest on the commit's tests)")
  parser.add_argument("--git-history", choices=("none", "full", "base"), default="none",
                      help="git: the workspace's git repository: none (default), the parent commit and its "
                           "ancestors (full), or the parent commit alone (base); never later commits or tags")
  args = parser.parse_args(argv)
  kwargs = {"on_error": args.on_error, "limit": args.limit}
  if args.license:
    kwargs["license"] = args.license
  if args.source == "git":
    kwargs.update(commits=args.commits, test_command=args.test_command, commits_file=args.commits_file,
                  statement_from=args.statement_from, repo_name=args.name, git_history=args.git_history)
    for path, what in ((args.commits_file, "--commits-file"), (args.statement_from, "--statement-from")):
      if path:
        cli.require_path(path, what, directory=False)
  cli.require_path(args.input, "input" if args.source != "git" else "git repository",
                   directory=True if args.source == "git" else False)
  with cli.bad_input_exits():
    result = run_importer(args.source, args.input, args.out, **kwargs)
  for line in result.skipped:
    print(f"skipped: {line}", file=sys.stderr)
  print(json.dumps({"source": args.source, "out": args.out, "tasks": len(result.tasks),
                    "skipped": len(result.skipped)}))
  return 0


if __name__ == "__main__":
  sys.exit(main())
