"""A task's repo/.git, as the agent's workspace sees it, holds only the base commit and its
ancestors: rl.tasks.workspace_git on real git repositories (future commits, tags, a stash, a
remote, other branches, a reflog and dangling objects), the task validator that rejects a
dirty one, and the workspace a sandbox session gets from it."""

import json
import pathlib
import shutil
import subprocess
import sys

import pytest

from rl.tasks import TaskError, load_task
from rl.tasks import workspace_git
from rl.tasks.verify import sandbox_available

REPO_ROOT = pathlib.Path(__file__).parents[1]
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e", "PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": "/tmp",
           "GIT_CONFIG_NOSYSTEM": "1"}
BASE_CODE = "def median(xs):\n  return xs[len(xs) // 2]  # bug: unsorted\n"
FIXED_CODE = "def median(xs):\n  xs = sorted(xs)  # THE FIX\n  return xs[len(xs) // 2]\n"


def git(repo, *args, check=True):
  proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=GIT_ENV, check=False)
  if check and proc.returncode != 0:
    raise AssertionError(f"git {args}: {proc.stderr}")
  return proc.stdout


def commit(repo, files, message):
  for rel, text in files.items():
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).write_text(text)
  git(repo, "add", "-A")
  git(repo, "commit", "-q", "-m", message)
  return git(repo, "rev-parse", "HEAD").strip()


def make_task(root: pathlib.Path, name="leaky") -> pathlib.Path:
  """A task whose repo/ is a checkout of the base commit in a repository that also holds the fix
  in every place a leak was seen: a future commit on another branch, release tags, a stash, a
  remote-tracking ref, ORIG_HEAD, a reflog and a dangling blob."""
  task = root / name
  repo = task / "repo"
  repo.mkdir(parents=True)
  git(repo, "init", "-q", "-b", "main")
  first = commit(repo, {"stats.py": "def median(xs):\n  pass\n", "README.md": "stats\n"}, "start")
  base = commit(repo, {"stats.py": BASE_CODE}, "median")
  git(repo, "tag", "v0.1", first)
  fix = commit(repo, {"stats.py": FIXED_CODE}, "fix median")
  git(repo, "tag", "-a", "-m", "release", "v1.0")
  git(repo, "branch", "release", fix)
  git(repo, "reset", "-q", "--hard", base)  # leaves ORIG_HEAD and the reflog pointing at the fix
  (repo / "stats.py").write_text(FIXED_CODE)
  git(repo, "stash", "-q")
  git(repo, "remote", "add", "origin", "https://example.invalid/stats.git")
  git(repo, "update-ref", "refs/remotes/origin/main", fix)
  blob = subprocess.run(["git", "-C", str(repo), "hash-object", "-w", "--stdin"], input="answer = 42\n",
                        capture_output=True, text=True, env=GIT_ENV, check=True).stdout.strip()
  (task / "tests").mkdir()
  (task / "tests" / "test_stats.py").write_text("from stats import median\n\n\ndef test_odd():\n  assert median([3, 1, 2]) == 2\n")
  (task / "task.md").write_text("median() is wrong for unsorted input.\n")
  (task / "metadata.json").write_text(json.dumps({
      "id": name, "version": "1", "source": "test", "license": "MIT", "language": "python", "grader": "pytest",
      "test_command": "python -m pytest -q tests", "hidden_tests_dest": "tests", "timeout_s": 30}))
  return task, {"base": base, "fix": fix, "first": first, "blob": blob}


def object_ids(repo):
  return set(git(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").split())


def has_object(repo, sha):
  return subprocess.run(["git", "-C", str(repo), "cat-file", "-e", sha], env=GIT_ENV, capture_output=True).returncode == 0


def reachable(repo):
  return {line.split()[0] for line in git(repo, "rev-list", "--objects", "HEAD").splitlines()}


def assert_only_base(repo, shas):
  assert git(repo, "rev-parse", "HEAD").strip() == shas["base"]
  assert git(repo, "for-each-ref", "--format=%(refname)").split() == ["refs/heads/main"]
  assert git(repo, "tag").strip() == "" and git(repo, "remote").strip() == ""
  assert git(repo, "stash", "list").strip() == ""
  assert git(repo, "reflog", check=False).strip() == ""
  assert object_ids(repo) == reachable(repo)
  assert not has_object(repo, shas["fix"]) and not has_object(repo, shas["blob"])
  assert git(repo, "log", "--all", "--format=%H").split() == [shas["base"], shas["first"]]
  assert "THE FIX" not in git(repo, "log", "--all", "-p")
  # HEAD's tree is the base: the files on disk, nothing staged or changed
  assert git(repo, "status", "--porcelain").strip() == ""
  assert git(repo, "show", "HEAD:stats.py") == BASE_CODE == (repo / "stats.py").read_text()


def test_dirty_repository_problems_name_every_leak(tmp_path):
  task, _ = make_task(tmp_path)
  problems = " | ".join(workspace_git.repository_problems(task / "repo"))
  for expected in ("ORIG_HEAD", "reflog", "ref(s) besides HEAD's branch", "config remote.origin.url",
                   "not reachable from HEAD"):
    assert expected in problems, (expected, problems)


def test_clean_repository_keeps_only_base_and_ancestors(tmp_path):
  task, shas = make_task(tmp_path)
  info = workspace_git.clean_repository(task / "repo")
  assert info == {"head": shas["base"], "branch": "main", "commits": 2}
  assert workspace_git.repository_problems(task / "repo") == []
  assert_only_base(task / "repo", shas)
  # ordinary git use works on the rebuilt repository
  repo = task / "repo"
  (repo / "stats.py").write_text(FIXED_CODE)
  git(repo, "stash", "-q")
  assert (repo / "stats.py").read_text() == BASE_CODE
  git(repo, "stash", "pop", "-q")
  assert "THE FIX" in git(repo, "diff", "HEAD")
  assert git(repo, "log", "--oneline", "-n", "5").count("\n") == 2


def test_clean_repository_shallow_and_refusals(tmp_path):
  task, shas = make_task(tmp_path)
  assert workspace_git.clean_repository(task / "repo", depth=1)["commits"] == 1
  assert workspace_git.repository_problems(task / "repo") == []
  assert not has_object(task / "repo", shas["first"])
  assert git(task / "repo", "rev-list", "--all").split() == [shas["base"]]
  # repo/ differing from HEAD: HEAD would not be the base, so cleaning refuses (one line)
  other, _ = make_task(tmp_path, "edited")
  (other / "repo" / "stats.py").write_text(FIXED_CODE)
  with pytest.raises(TaskError, match=r"differ from the HEAD commit") as e:
    workspace_git.clean_repository(other / "repo")
  assert "\n" not in str(e.value)
  assert any("differ from the HEAD commit" in p for p in workspace_git.repository_problems(other / "repo"))


def test_ancestor_count_tells_the_rules_whether_older_commits_exist(tmp_path):
  """`git log -p` can show the code from before a regression only where the workspace's
  repository holds commits before the base; the rules learn that from the task (rules v16)."""
  from rl.antihack import ActionContext, RuleEngine, load_rule_set

  engine = RuleEngine(load_rule_set("default"))
  task, _ = make_task(tmp_path)
  shallow, _ = make_task(tmp_path, "shallow")
  workspace_git.clean_repository(shallow / "repo", depth=1)
  plain = tmp_path / "plain" / "repo"
  plain.mkdir(parents=True)
  (plain / "stats.py").write_text(BASE_CODE)
  # the dirty repository's future commits, tags and stash are not ancestors of HEAD
  assert workspace_git.ancestor_count(task / "repo") == 1
  assert workspace_git.ancestor_count(shallow / "repo") == 0
  assert workspace_git.ancestor_count(plain) == 0

  class Task:
    statement, hidden_tests_dest, public_tests, test_command, metadata = "Fix median", "tests", (), "pytest", {}

  def rules(repo_dir, command):
    Task.repo_dir = str(repo_dir)
    ctx = ActionContext.from_task(Task())
    return ctx.base_ancestors, engine.check_action("run", {"command": command}, ctx).rules

  assert rules(task / "repo", "git log -p -- stats.py") == (1, ("A004-git-history",))
  assert rules(shallow / "repo", "git log -p -- stats.py") == (0, ())
  assert rules(shallow / "repo", "git show HEAD~1:stats.py") == (0, ())
  assert rules(plain, "git log --all --reflog -p -S sorted") == (0, ("A004-git-history",))
  assert rules(plain, "git fetch origin") == (0, ("A004-git-history",))


@pytest.mark.parametrize("dirt", ["tag", "branch", "stash", "remote", "dangling", "reflog", "orig_head", "gitlink"])
def test_each_kind_of_dirt_is_found(tmp_path, dirt):
  task, shas = make_task(tmp_path)
  repo = task / "repo"
  workspace_git.clean_repository(repo)
  if dirt == "tag":
    git(repo, "tag", "v9")
  elif dirt == "branch":
    git(repo, "branch", "other")
  elif dirt == "stash":
    (repo / "stats.py").write_text(FIXED_CODE)
    git(repo, "stash", "-q")
  elif dirt == "remote":
    git(repo, "remote", "add", "upstream", "/elsewhere")
  elif dirt == "dangling":
    subprocess.run(["git", "-C", str(repo), "hash-object", "-w", "--stdin"], input="x = 1\n", text=True,
                   env=GIT_ENV, check=True, capture_output=True)
  elif dirt == "reflog":
    git(repo, "reflog", "expire", "--expire=never", "--all")
    (repo / ".git" / "logs").mkdir(exist_ok=True)
    (repo / ".git" / "logs" / "HEAD").write_text(f"{shas['fix']} {shas['base']} t <t@e> 0 +0000\tcheckout\n")
  elif dirt == "orig_head":
    (repo / ".git" / "ORIG_HEAD").write_text(shas["fix"] + "\n")
  elif dirt == "gitlink":
    (tmp_path / "elsewhere.git").mkdir()
    shutil.move(str(repo / ".git"), str(tmp_path / "elsewhere.git" / "g"))
    (repo / ".git").write_text(f"gitdir: {tmp_path / 'elsewhere.git' / 'g'}\n")
  assert workspace_git.repository_problems(repo), dirt


def test_validator_rejects_a_dirty_repository_and_accepts_a_clean_one(tmp_path):
  task, _ = make_task(tmp_path)
  with pytest.raises(TaskError) as e:
    load_task(task)
  message = str(e.value)
  assert "\n" not in message and "repo/.git holds" in message and "--clean-git" in message
  workspace_git.clean_repository(task / "repo")
  assert load_task(task).id == "leaky"
  # check_tasks.py --clean-git rebuilds, then its load check passes (no test runs here)
  other, _ = make_task(tmp_path / "root", "second")
  proc = subprocess.run([sys.executable, "scripts/check_tasks.py", str(tmp_path / "root"), "--clean-git", "--no-exec",
                         "--no-statement-check", "--enforce", "--report", str(tmp_path / "report.json")],
                        cwd=REPO_ROOT, capture_output=True, text=True)
  assert proc.returncode == 0 and "second: repo/.git rebuilt: main at" in proc.stderr, proc.stdout + proc.stderr
  assert workspace_git.repository_problems(other / "repo") == []


def test_workspace_source_cleans_an_uncleaned_task_once(tmp_path):
  task_dir, shas = make_task(tmp_path)
  task = load_task(task_dir, validate=False)
  source = workspace_git.workspace_source(task)
  assert pathlib.Path(source) != task.repo_dir and workspace_git.workspace_source(task) == source
  assert_only_base(pathlib.Path(source), shas)
  assert workspace_git.repository_problems(task.repo_dir)  # the task itself is left as it was
  # no repository: repo/ itself
  plain = tmp_path / "plain"
  (plain / "repo").mkdir(parents=True)
  assert workspace_git.workspace_source(type("T", (), {"repo_dir": plain / "repo", "id": "plain"})()) == \
      str(plain / "repo")


@pytest.mark.skipif(not sandbox_available(), reason="no sandbox backend here")
def test_sandbox_workspace_repository_holds_only_the_base(tmp_path):
  """What the agent sees: a sandbox session opened the way rollouts open it."""
  import sandbox  # pylint: disable=import-outside-toplevel
  task_dir, shas = make_task(tmp_path)
  task = load_task(task_dir, validate=False)
  with sandbox.open_session(workspace_git.workspace_source(task)) as session:
    out = session.exec("git log --all --format=%H; echo ---; git tag; git stash list; git remote; "
                       "git cat-file -e " + shas["fix"] + " && echo LEAK; git log -p --all | grep -c 'THE FIX'; "
                       "git status --porcelain").stdout
  log, rest = out.split("---\n", 1)
  assert log.split() == [shas["base"], shas["first"]]
  assert "LEAK" not in rest and rest.split() == ["0"], out


@pytest.mark.parametrize("history, commits", [("full", 2), ("base", 1)])
def test_git_importer_gives_the_workspace_only_the_parent_and_its_ancestors(tmp_path, history, commits):
  from rl.tasks.git_import import import_git  # pylint: disable=import-outside-toplevel
  src = tmp_path / "src"
  src.mkdir()
  git(src, "init", "-q", "-b", "main")
  commit(src, {"stats.py": "def median(xs):\n  pass\n", "LICENSE": "MIT License\n\nPermission is hereby granted, "
               "free of charge ... The above copyright notice ...\n"}, "start")
  parent = commit(src, {"stats.py": BASE_CODE, "tests/test_stats.py": "def test_one():\n  assert True\n"}, "median")
  fix = commit(src, {"stats.py": FIXED_CODE, "tests/test_stats.py":
                     "from stats import median\n\n\ndef test_odd():\n  assert median([3, 1, 2]) == 2\n"},
               "Sort before taking the median")
  git(src, "tag", "v1.0")
  later = commit(src, {"README.md": "later\n"}, "later work")
  result = import_git(src, tmp_path / "out", commits=[fix], git_history=history)
  assert len(result.tasks) == 1, result.skipped
  task = load_task(result.tasks[0].dir)  # validates the repository too
  repo = task.repo_dir
  assert task.metadata["workspace_git"] == history
  assert git(repo, "rev-parse", "HEAD").strip() == parent
  assert int(git(repo, "rev-list", "--count", "--all").strip()) == commits
  assert not has_object(repo, fix) and not has_object(repo, later)
  assert git(repo, "tag").strip() == "" and git(repo, "status", "--porcelain").strip() == ""
  assert workspace_git.repository_problems(repo) == []
