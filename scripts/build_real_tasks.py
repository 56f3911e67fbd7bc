r"""Rebuilds the real-repository task set: fix commits of small public Python libraries.

The commits and their per-commit options are listed in scripts/real_repos/commits.json; the
repositories themselves are not part of this project. Give local clones (any clone or bare
mirror holding the commits), then check the result:

  git clone https://github.com/hukkin/tomli repos/hukkin+tomli        # ... one per repository
  .venv/bin/python scripts/build_real_tasks.py --repos repos --out T/real
  .venv/bin/python scripts/check_tasks.py T/real --runs 1

A repository is looked up under --repos as `owner+name` (optionally with a `repo` or `.git`
folder inside), `owner/name` or `name`; `--repo owner/name=PATH` points at one directly. A
missing repository is bad input: one line on stderr, exit status 2. Commits that cannot become
tasks are listed as skipped with their reasons.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from rl import cli  # noqa: E402
from rl.tasks.format import write_manifest  # noqa: E402
from rl.tasks.git_import import import_git  # noqa: E402

DEFAULT_LIST = pathlib.Path(__file__).resolve().parent / "real_repos" / "commits.json"


def find_repository(repo: str, roots: list[pathlib.Path], overrides: dict[str, str]) -> pathlib.Path:
  """The local git directory of `owner/name`."""
  if repo in overrides:
    return pathlib.Path(overrides[repo])
  owner, name = repo.split("/", 1)
  for root in roots:
    for candidate in (root / f"{owner}+{name}" / "repo", root / f"{owner}+{name}", root / owner / name,
                      root / name, root / f"{name}.git"):
      if (candidate / "HEAD").is_file() or (candidate / ".git").exists():
        return candidate
  raise cli.InputError(f"no local clone of {repo} under {', '.join(map(str, roots)) or '(no --repos)'}: "
                       f"clone https://github.com/{repo} into {owner}+{name} there, or pass --repo {repo}=PATH")


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--out", required=True, help="task root to write")
  parser.add_argument("--repos", action="append", default=[], help="folder holding the clones (repeatable)")
  parser.add_argument("--repo", action="append", default=[], metavar="OWNER/NAME=PATH",
                      help="one repository's clone (repeatable)")
  parser.add_argument("--list", default=str(DEFAULT_LIST), help="commit list (default scripts/real_repos/commits.json)")
  parser.add_argument("--only", action="append", default=[], metavar="OWNER/NAME", help="only these repositories")
  parser.add_argument("--no-options", action="store_true",
                      help="ignore the per-commit options of the list (the importer's defaults only)")
  parser.add_argument("--git-history", choices=("none", "full", "base"), default="none",
                      help="the workspace's git repository: none (default), the base commit and its ancestors "
                           "(full) or the base commit alone (base); never the fix, later commits or tags")
  args = parser.parse_args(argv)
  with cli.bad_input_exits():
    cli.require_path(args.list, "--list file", directory=False)
    for root in args.repos:
      cli.require_path(root, "--repos folder", directory=True)
    overrides = {}
    for item in args.repo:
      if "=" not in item or "/" not in item.split("=", 1)[0]:
        raise cli.InputError(f"--repo takes OWNER/NAME=PATH, got {item!r}")
      key, path = item.split("=", 1)
      overrides[key] = cli.require_path(path, f"--repo {key}", directory=True)
    try:
      listing = json.loads(pathlib.Path(args.list).read_text(encoding="utf-8"))
      repositories = listing["repositories"]
    except (ValueError, KeyError, TypeError) as e:
      raise cli.InputError(f"{args.list}: not a commit list ({e})") from None
    selected = [r for r in repositories if not args.only or r["repo"] in args.only]
    paths = {r["repo"]: find_repository(r["repo"], [pathlib.Path(p) for p in args.repos], overrides)
             for r in selected}
  out = pathlib.Path(args.out)
  out.mkdir(parents=True, exist_ok=True)
  summary = {"out": str(out), "repositories": {}, "tasks": 0, "skipped": []}
  for entry in selected:
    commits = [c if isinstance(c, str) else (c["commit"] if args.no_options else c) for c in entry["commits"]]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
      json.dump(commits, f)
      commits_file = f.name
    with cli.bad_input_exits():
      result = import_git(paths[entry["repo"]], out, commits_file=commits_file,
                          repo_name=entry["repo"].replace("/", "-"),
                          license=None if args.no_options else entry.get("license"),
                          git_history=args.git_history)
    pathlib.Path(commits_file).unlink()
    summary["repositories"][entry["repo"]] = {"tasks": len(result.tasks), "skipped": len(result.skipped)}
    summary["tasks"] += len(result.tasks)
    summary["skipped"] += [f"{entry['repo']}: {s}" for s in result.skipped]
  write_manifest(out)
  for line in summary["skipped"]:
    print(f"skipped: {line}", file=sys.stderr)
  print(json.dumps(summary, indent=1))
  return 0


if __name__ == "__main__":
  sys.exit(main())
