"""The git repository a task workspace may hold: only the base commit and its ancestors.

A task's repo/ may be a git checkout (repo/.git); the workspace starts as a copy of repo/, so
whatever that repository holds, the agent can read. Future commits, tags, other branches,
remotes, stashes, reflogs and unreachable objects can all hold the fix (an agent restored a
fixed file from a release tag this way), so a workspace repository must hold nothing but
HEAD = the base commit (the commit whose tree repo/ is) and its ancestors.

- `clean_repository(repo_dir)` rebuilds repo/.git in place that way: a fresh `git init` that
  fetches only HEAD from the old repository (the pack protocol sends only objects reachable
  from it), one branch, no remotes, tags, stash, reflog, hooks or other refs. Run it once per
  task (`scripts/check_tasks.py ROOT --clean-git`); the rollout engine falls back to a cleaned
  copy per task and process (`workspace_source`) when a task was not cleaned.
- `repository_problems(repo_dir)` lists what a repository holds besides that, and
  `check_repository` raises a one-line TaskError for the first problem; task validation
  (`rl.tasks.format.validate_task_files`) calls it, so a dirty task fails to load.

A repo/ without .git is fine: the workspace then has no repository at all.
"""

from __future__ import annotations

import atexit
import logging
import os
import pathlib
import shutil
import subprocess
import tempfile
import threading
from typing import Any

from rl.tasks.format import TaskError

# What a clean .git may hold at its top level (a fresh `git init --template=` plus a fetch and
# an index); anything else (FETCH_HEAD, ORIG_HEAD, modules/, worktrees/, rr-cache/ ...) is state
# from outside the base commit.
ALLOWED_ENTRIES = {"HEAD", "config", "description", "index", "objects", "refs", "info", "hooks", "logs",
                   "branches", "packed-refs", "shallow"}
ALLOWED_INFO = {"exclude", "attributes"}
# Config keys that point outside the repository or run programs; remotes, includes and
# submodules are refused by prefix below.
REFUSED_CORE_KEYS = {"core.worktree", "core.hookspath", "core.fsmonitor", "core.sshcommand", "core.gitproxy",
                     "core.alternaterefscommand", "core.alternaterefsprefixes", "core.askpass", "core.editor",
                     "core.pager", "core.excludesfile", "core.attributesfile"}
ALLOWED_KEY_PREFIXES = ("core.", "user.", "extensions.objectformat", "init.defaultbranch", "gc.", "advice.")
DEFAULT_BRANCH = "main"
GIT_TIMEOUT_S = 300
_log = logging.getLogger(__name__)


def _git(repo: pathlib.Path, *args: str, check: bool = True, git_dir: pathlib.Path | None = None) -> str:
  cmd = ["git", "-c", "safe.directory=*"]
  if git_dir is not None:
    cmd += ["--git-dir", str(git_dir), "--work-tree", str(repo)]
  else:
    cmd += ["-C", str(repo)]
  # No system or global config: a user's aliases, hooks path or url rewrites must not change
  # what is built or judged here.
  env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0",
         "LC_ALL": "C"}
  for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
               "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR"):
    env.pop(name, None)
  proc = subprocess.run(cmd + list(args), capture_output=True, text=True, check=False, env=env,
                        timeout=GIT_TIMEOUT_S)
  if check and proc.returncode != 0:
    last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
    raise TaskError(f"git {' '.join(args)} failed in {repo}: {last}")
  return proc.stdout


def has_repository(repo_dir: str | os.PathLike) -> bool:
  return os.path.lexists(os.path.join(repo_dir, ".git"))


def ancestor_count(repo_dir: str | os.PathLike) -> int | None:
  """Commits before the base in the repository a workspace copied from `repo_dir` holds: 0
  when repo/ has no repository (or a HEAD without parents), None when git cannot tell.

  The anti-hack rules read it (`ActionContext.base_ancestors`): with no commit before the
  base, an agent reading older commits' contents reads nothing that could hold the fix.
  Cached per directory and process (a task's repo/ does not change while tasks are served).
  """
  key = os.path.realpath(repo_dir)
  with _cache_lock:
    if key in _ancestors:
      return _ancestors[key]
  if not has_repository(repo_dir):
    count: int | None = 0
  else:
    try:
      out = _git(pathlib.Path(repo_dir), "rev-list", "--count", "HEAD", check=False).strip()
      count = max(int(out) - 1, 0) if out.isdigit() else None
    except (OSError, subprocess.SubprocessError):
      count = None
  with _cache_lock:
    _ancestors[key] = count
  return count


def _nested_repositories(repo: pathlib.Path) -> list[str]:
  nested = []
  for dirpath, dirnames, filenames in os.walk(repo):
    here = pathlib.Path(dirpath)
    if here == repo:
      dirnames[:] = [d for d in dirnames if d != ".git"]
      continue
    for name in dirnames + filenames:
      if name == ".git":
        nested.append((here / name).relative_to(repo).as_posix())
    dirnames[:] = [d for d in dirnames if d != ".git"]
  return nested


def repository_problems(repo_dir: str | os.PathLike) -> list[str]:
  """What repo/'s git repository holds besides the base commit (HEAD) and its ancestors.

  Empty for a clean repository and for a repo/ without one. Each entry is one short phrase.
  """
  repo = pathlib.Path(repo_dir)
  dot_git = repo / ".git"
  if not os.path.lexists(dot_git):
    return []
  nested = _nested_repositories(repo)
  if dot_git.is_symlink() or not dot_git.is_dir():
    return [".git is a link to another git directory (its refs and objects are not this task's)"] + \
           [f"a nested repository at {n}" for n in nested]
  problems = [f"a nested repository at {n}" for n in nested]
  for entry in sorted(os.listdir(dot_git)):
    if entry not in ALLOWED_ENTRIES:
      problems.append(f".git/{entry} (state from outside the base commit)")
  for sub, allowed in (("info", ALLOWED_INFO), ("hooks", None)):
    folder = dot_git / sub
    if folder.is_dir():
      for name in sorted(os.listdir(folder)):
        if (allowed is not None and name not in allowed) or (allowed is None and not name.endswith(".sample")):
          problems.append(f".git/{sub}/{name}")
  if (dot_git / "objects" / "info" / "alternates").exists():
    problems.append("objects borrowed from another repository (.git/objects/info/alternates)")
  logs = [p for p in (dot_git / "logs").rglob("*") if p.is_file()] if (dot_git / "logs").is_dir() else []
  if logs:
    problems.append(f"a reflog (.git/{logs[0].relative_to(dot_git).as_posix()})")
  head = _git(repo, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False).strip()
  if not head:
    return problems + ["no HEAD commit"]
  branch = _git(repo, "symbolic-ref", "--quiet", "HEAD", check=False).strip()
  refs = [r for r in _git(repo, "for-each-ref", "--format=%(refname)").splitlines() if r and r != branch]
  if refs:
    problems.append(f"{len(refs)} ref(s) besides HEAD's branch, e.g. {refs[0]} "
                    "(tags, branches, remotes and stashes can hold the fix)")
  for line in _git(repo, "config", "--local", "--list", "--name-only", check=False).splitlines():
    key = line.strip().lower()
    if key and (key in REFUSED_CORE_KEYS or not key.startswith(ALLOWED_KEY_PREFIXES)):
      problems.append(f"config {key}")
  reachable = {line.split(" ", 1)[0] for line in _git(repo, "rev-list", "--objects", "HEAD").splitlines() if line}
  stored = set(_git(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").split())
  extra = sorted(stored - reachable)
  if extra:
    problems.append(f"{len(extra)} object(s) not reachable from HEAD, e.g. {extra[0][:12]}")
  changed = _git(repo, "--no-optional-locks", "status", "--porcelain", "--untracked-files=no",
                 "--ignore-submodules=all", check=False).splitlines()
  if changed:
    problems.append(f"files that differ from the HEAD commit ({changed[0].strip()}): HEAD must be the base")
  return problems


def check_repository(repo_dir: str | os.PathLike, *, task: str) -> None:
  """Raises TaskError (one line) when repo/'s git repository holds more than the base commit."""
  problems = repository_problems(repo_dir)
  if problems:
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    raise TaskError(f"task {task!r}: repo/.git holds {problems[0]}{more}; rebuild it with "
                    "scripts/check_tasks.py ROOT --clean-git")


def clean_repository(repo_dir: str | os.PathLike, *, depth: int | None = None) -> dict[str, Any]:
  """Rebuilds repo/.git in place to hold only HEAD and its ancestors (the newest `depth` commits
  when given); the files of repo/ are not touched. Returns {"head", "branch", "commits"}, or {}
  when repo/ has no repository. Raises TaskError when there is no HEAD commit or repo/
  differs from it (HEAD would not be the base), or for nested repositories."""
  repo = pathlib.Path(repo_dir)
  dot_git = repo / ".git"
  if not os.path.lexists(dot_git):
    return {}
  nested = _nested_repositories(repo)
  if nested:
    raise TaskError(f"{repo}: a nested repository at {nested[0]}; remove it or vendor its files")
  head = _git(repo, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False).strip()
  if not head:
    raise TaskError(f"{repo}: the git repository has no HEAD commit")
  changed = _git(repo, "status", "--porcelain", "--untracked-files=no", "--ignore-submodules=all").splitlines()
  if changed:
    raise TaskError(f"{repo}: files differ from the HEAD commit ({changed[0].strip()}); commit or reset them "
                    "so that HEAD is the base")
  ref = _git(repo, "symbolic-ref", "--quiet", "HEAD", check=False).strip()
  branch = ref[len("refs/heads/"):] if ref.startswith("refs/heads/") else DEFAULT_BRANCH
  object_format = _git(repo, "rev-parse", "--show-object-format", check=False).strip() or "sha1"
  # Fetching HEAD (advertised by every repository) needs no upload-pack settings.
  _build_git_dir(repo, repo.resolve(), "HEAD", head, branch=branch, depth=depth, object_format=object_format)
  commits = int(_git(repo, "rev-list", "--count", "HEAD").strip() or 0)
  return {"head": head, "branch": branch, "commits": commits}


def add_repository(repo_dir: str | os.PathLike, source: str | os.PathLike, commit: str, *,
                   depth: int | None = None, branch: str = DEFAULT_BRANCH) -> dict[str, Any]:
  """Gives repo/ (the files of `commit`, as an importer wrote them) a repository holding only
  `commit` of the git repository `source` and its ancestors (the newest `depth` when given).
  Raises TaskError when repo/'s files differ from that commit (export-ignore, symlinks)."""
  repo = pathlib.Path(repo_dir)
  if os.path.lexists(repo / ".git"):
    raise TaskError(f"{repo}: already holds a git repository")
  object_format = _git(pathlib.Path(source), "rev-parse", "--show-object-format", check=False).strip() or "sha1"
  _build_git_dir(repo, pathlib.Path(source).resolve(), commit, commit, branch=branch, depth=depth,
                 object_format=object_format)
  changed = _git(repo, "status", "--porcelain", "--untracked-files=no").splitlines()
  if changed:
    shutil.rmtree(repo / ".git", ignore_errors=True)
    raise TaskError(f"{repo}: files differ from commit {commit[:12]} ({changed[0].strip()}), so it cannot be "
                    "the workspace repository's HEAD")
  commits = int(_git(repo, "rev-list", "--count", "HEAD").strip() or 0)
  return {"head": commit, "branch": branch, "commits": commits}


def _build_git_dir(repo: pathlib.Path, source: pathlib.Path, rev: str, expected: str, *, branch: str,
                   depth: int | None, object_format: str) -> None:
  """Makes repo/.git a fresh repository whose only ref, `branch` (HEAD), is `rev` of `source`.

  A fetch into a fresh `git init` transfers only the objects reachable from `rev` (the pack
  protocol), so nothing else of `source` comes along.
  """
  staging = pathlib.Path(tempfile.mkdtemp(prefix=".git-clean-", dir=repo.parent))
  try:
    new_git = staging / ".git"
    # --template= : no sample hooks, no description.
    subprocess.run(["git", "init", "-q", "--template=", f"--object-format={object_format}",
                    f"--initial-branch={branch}", str(staging)], check=True, capture_output=True,
                   timeout=GIT_TIMEOUT_S, env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1",
                                               "GIT_CONFIG_GLOBAL": os.devnull})
    # core.logAllRefUpdates=false: no reflog entry for the fetch. unpackLimit=1: one pack
    # instead of a file per object, so each workspace copy stays a handful of files however
    # small the history.
    fetch = ["-c", "core.logAllRefUpdates=false", "-c", "fetch.unpackLimit=1", "fetch", "--quiet", "--no-tags",
             "--no-write-fetch-head", "--no-recurse-submodules", "--update-head-ok"]
    if depth:
      fetch.append(f"--depth={int(depth)}")
    _git(staging, *fetch, str(source), f"+{rev}:refs/heads/{branch}")
    fetched = _git(staging, "rev-parse", f"refs/heads/{branch}").strip()
    if fetched != expected:
      raise TaskError(f"{repo}: fetched {fetched[:12]} instead of {expected[:12]}")
    shutil.rmtree(new_git / "logs", ignore_errors=True)
    _git(repo, "read-tree", "HEAD", git_dir=new_git)
    _git(repo, "update-index", "-q", "--refresh", git_dir=new_git, check=False)
    if os.path.lexists(repo / ".git"):
      os.replace(repo / ".git", staging / "old.git")
    os.replace(new_git, repo / ".git")
  finally:
    shutil.rmtree(staging, ignore_errors=True)


_cache_lock = threading.Lock()
_clean_copies: dict[str, str] = {}
_checked: dict[str, bool] = {}
_ancestors: dict[str, int | None] = {}


def workspace_source(task: Any) -> str:
  """The directory a session's workspace is copied from: repo/ when it has no repository or a
  clean one; otherwise a cleaned copy of repo/, made once per task and process (logged, so
  the task can be cleaned for good with `scripts/check_tasks.py ROOT --clean-git`)."""
  repo = str(task.repo_dir)
  key = os.path.realpath(repo)
  with _cache_lock:
    if key in _clean_copies:
      return _clean_copies[key]
    if _checked.get(key):
      return repo
    if not has_repository(repo):
      _checked[key] = True
      return repo
    problems = repository_problems(repo)
    if not problems:
      _checked[key] = True
      return repo
    copy_root = tempfile.mkdtemp(prefix=f"rlcoder-cleanrepo-{getattr(task, 'id', 'task')}-")
    atexit.register(shutil.rmtree, copy_root, True)
    copy = os.path.join(copy_root, "repo")
    shutil.copytree(repo, copy, symlinks=True)
    try:
      clean_repository(copy)
    except TaskError as e:
      # HEAD is not the base (or nested repositories): no repository beats a leaking one.
      shutil.rmtree(os.path.join(copy, ".git"), ignore_errors=True)
      _log.warning("task %s: repo/.git cannot be cleaned (%s); its workspaces get no repository",
                   getattr(task, "id", repo), e)
    else:
      _log.warning("task %s: repo/.git holds %s; its workspaces use a cleaned copy (run "
                   "scripts/check_tasks.py ROOT --clean-git once)", getattr(task, "id", repo), problems[0])
    _clean_copies[key] = copy
    return copy
