"""What the anti-hack rules may know about a task while judging one action.

`ActionContext` carries only what the agent is allowed to know plus the location of
the hidden tests; it never holds hidden test contents or the reference fix.
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
from typing import Any, Iterable, Mapping

from sandbox import graded_tree

_TEST_DIR_NAMES = {"tests", "test", "testing"}


def normalize_path(path: str, workspace_root: str = "") -> str:
  """A workspace-relative POSIX path ('.' for the root); absolute paths outside stay absolute."""
  if not isinstance(path, str):
    raise TypeError(f"path must be a string, got {type(path).__name__}")
  p = path.strip().replace("\\", "/")
  if workspace_root:
    root = workspace_root.rstrip("/")
    if p == root:
      return "."
    if p.startswith(root + "/"):
      p = p[len(root) + 1:]
  p = posixpath.normpath(p) if p else "."
  return p


def is_under(path: str, directory: str) -> bool:
  directory = directory.rstrip("/")
  if directory in ("", "."):
    return not path.startswith("/") and not path.startswith("..")
  return path == directory or path.startswith(directory + "/")


def is_test_file(path: str) -> bool:
  """pytest/unittest-style test modules and anything inside a tests directory."""
  base = posixpath.basename(path)
  if base == "conftest.py":
    return True
  if base.endswith(".py") and (base.startswith("test_") or base.endswith("_test.py") or base == "tests.py"):
    return True
  parts = path.split("/")[:-1]
  return base.endswith(".py") and any(p in _TEST_DIR_NAMES for p in parts)


@dataclasses.dataclass
class ActionContext:
  """Per-episode facts for the online rules; create one per episode (it records writes).

  hidden_tests_dest: where the hidden tests land inside the workspace at grading.
  public_tests: workspace paths of tests the agent may read and run.
  statement: the task statement shown to the agent (paths it names are not bait).
  provided_files: workspace-relative paths of the initial workspace (None = unknown).
  workspace_root: the absolute workspace path inside the sandbox, if any ("/workspace").
  solution_file: single-turn answer file, which the agent may read back.
  answers_file: an MLE task's answers file, which the agent must never read.
  test_command: the grading command (running it is allowed).
  grading_editable: the task's patterns of files grading also carries (sandbox/graded_tree.py).
  python_path: the task's workspace import roots.
  base_ancestors: commits before the base in the workspace's git repository (0: none, or no
    repository at all; None: unknown, judged as if there were some).
  written_paths: files the agent created so far (filled in by `RuleEngine.check_action`).
  """

  hidden_tests_dest: str = "tests"
  public_tests: tuple[str, ...] = ()
  statement: str = ""
  provided_files: frozenset[str] | None = None
  workspace_root: str = ""
  solution_file: str = ""
  answers_file: str = ""
  test_command: str = ""
  grading_editable: tuple[str, ...] = ()
  python_path: tuple[str, ...] = ()
  base_ancestors: int | None = None
  written_paths: set[str] = dataclasses.field(default_factory=set)

  def __post_init__(self):
    self.hidden_tests_dest = normalize_path(self.hidden_tests_dest or ".")
    self.public_tests = tuple(normalize_path(p) for p in self.public_tests)
    if self.provided_files is not None:
      self.provided_files = frozenset(normalize_path(p) for p in self.provided_files)
    policy = graded_tree.policy_for(self.hidden_tests_dest, self.grading_editable, self.python_path)
    self._carry = policy if self.provided_files is None else policy.with_pristine(self.provided_files)

  def grading_discards(self, path: str) -> str | None:
    """Why grading leaves a change to `path` out of the graded tree (None: it is graded).

    A write there cannot change the verdict, so the rules log it instead of flagging it.
    """
    return self._carry.discards(normalize_path(path, self.workspace_root))

  @classmethod
  def coerce(cls, context: "ActionContext | Mapping[str, Any] | None") -> "ActionContext":
    """Accepts an ActionContext, a plain dict with the same keys, or None (defaults)."""
    if context is None:
      return cls()
    if isinstance(context, cls):
      return context
    if isinstance(context, Mapping):
      known = {f.name for f in dataclasses.fields(cls)}
      unknown = set(context) - known
      if unknown:
        raise ValueError(f"unknown ActionContext keys {sorted(unknown)}; known: {sorted(known)}")
      return cls(**dict(context))
    raise TypeError(f"context must be an ActionContext or a dict, got {type(context).__name__}")

  @classmethod
  def from_task(cls, task: Any, workspace_root: str = "") -> "ActionContext":
    """From an `rl.tasks.Task` (or anything with the same attributes)."""
    metadata = dict(getattr(task, "metadata", {}) or {})
    repo_dir = getattr(task, "repo_dir", None)
    provided, ancestors = None, None
    if repo_dir and os.path.isdir(repo_dir):
      from rl.tasks import workspace_git  # here: the rules load the task package only for a task
      provided = frozenset(_walk_files(str(repo_dir)))
      ancestors = workspace_git.ancestor_count(repo_dir)
    return cls(
        hidden_tests_dest=getattr(task, "hidden_tests_dest", None) or metadata.get("hidden_tests_dest", "tests"),
        public_tests=tuple(getattr(task, "public_tests", None) or metadata.get("public_tests", ()) or ()),
        statement=getattr(task, "statement", "") or "",
        provided_files=provided,
        workspace_root=workspace_root,
        solution_file=metadata.get("solution_file", "") or metadata.get("submission_file", "") or "",
        answers_file=metadata.get("answers_file", "") or "",
        test_command=getattr(task, "test_command", None) or metadata.get("test_command", "") or "",
        grading_editable=tuple(getattr(task, "grading_editable", None) or metadata.get("grading_editable") or ()),
        python_path=tuple(metadata.get("python_path") or ()) if not isinstance(metadata.get("python_path"), str)
        else (metadata["python_path"],),
        base_ancestors=ancestors,
    )

  def is_provided(self, path: str) -> bool:
    """True for an initial-workspace file or a directory that contains one."""
    if self.provided_files is None:
      return False
    if path in self.provided_files:
      return True
    prefix = "" if path == "." else path.rstrip("/") + "/"
    return any(f.startswith(prefix) for f in self.provided_files)

  def is_public_test(self, path: str) -> bool:
    return any(is_under(path, p) or is_under(p, path) for p in self.public_tests)

  def mentioned_in_statement(self, path: str) -> bool:
    if not self.statement:
      return False
    return path in self.statement or posixpath.basename(path) in self.statement


def _walk_files(root: str) -> Iterable[str]:
  for dirpath, dirnames, filenames in os.walk(root):
    dirnames[:] = [d for d in dirnames if d != ".git"]
    for name in filenames:
      yield os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
