"""The tree grading runs on: the pristine repository plus the agent's changes it may make.

Grading never runs the agent's workspace as it is. As SWE-bench applies a patch to a clean
checkout, it copies the task's pristine repository and carries over only the changes a fix
may make: to source files outside the test surface. Everything else the agent wrote (a
conftest.py, a pytest.toml, a .pth, a `*.dist-info` folder, bytecode, symlinks, edited test
modules, data files the tests read, a module that shadows an installed one) does not exist
there, so it cannot shape how the hidden tests are collected or what they read. A task
widens the default with `grading_editable` patterns in its metadata (rl/tasks/format.py).

`CarryPolicy.discards` is the one statement of the rule; the anti-hack rules ask it too,
so that a write grading discards is logged, not punished (rl/antihack/context.py).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import os
import posixpath
import re
import shutil
import sys
from typing import Iterable

# Python source: what a fix edits. Anything else is data (or packaging) and stays pristine.
SOURCE_SUFFIXES = (".py", ".pyi")
# Files that configure pytest or run at interpreter start-up: never the agent's, whatever a
# task's `grading_editable` says.
SURFACE_NAMES = frozenset({
    "conftest.py", "pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "tox.ini",
    "setup.cfg", "pyproject.toml", "sitecustomize.py", "usercustomize.py"})
NEVER_SUFFIXES = (".pth", ".pyc", ".pyo", ".so", ".pyd", ".dll", ".dylib")
# Folders that are never part of a fix: version control, caches, installed metadata (a
# `*.dist-info` folder's entry points would load as pytest plugins), the grader's own files.
NEVER_DIRS = frozenset({".git", "__pycache__", ".pytest_cache", ".rlcoder_grading", ".rlcoder_oracle",
                        ".hg", ".svn"})
NEVER_DIR_SUFFIXES = (".dist-info", ".egg-info", ".egg-link")
TEST_MODULE_RE = re.compile(r"^(test_.*|.*_test|tests)\.py$")
# Top-level names the test process imports from outside the workspace: a new workspace module
# of one of these names would replace pytest, its plugins or the standard library.
# Besides the runtime's packages: what a virtualenv's own start-up imports (`.pth` files such as
# distutils-precedence.pth run `import _distutils_hack` before any grader code is installed).
RUNTIME_MODULES = frozenset({
    "pytest", "_pytest", "pluggy", "iniconfig", "packaging", "py", "pygments", "numpy", "pandas",
    "sklearn", "scipy", "joblib", "dateutil", "tzdata", "cloudpickle", "threadpoolctl", "narwhals",
    "rlcoder_verdict", "rlcoder_collect", "rlcoder_audit", "_distutils_hack", "distutils", "setuptools",
    "pkg_resources", "pip", "_virtualenv", "easy_install", "wheel"})
SHADOWED_MODULES = frozenset(sys.stdlib_module_names) | RUNTIME_MODULES


@dataclasses.dataclass(frozen=True)
class CarryPolicy:
  """Which workspace changes grading carries into the graded tree.

  hidden_tests_dest: where the hidden tests land (that folder is the grader's).
  editable: fnmatch patterns of workspace paths a task also lets the agent change (data files
    a fix must write, a non-Python source); the test surface stays out of reach.
  import_roots: workspace folders on the test process' import path ("." and the task's
    python_path); a new module there may not shadow an installed one.
  """

  hidden_tests_dest: str = "tests"
  editable: tuple[str, ...] = ()
  import_roots: tuple[str, ...] = (".",)
  shadowed_modules: frozenset[str] = SHADOWED_MODULES
  # Files of the pristine repository (None: unknown, every path counts as new).
  pristine: frozenset[str] | None = None

  def with_pristine(self, files: Iterable[str]) -> "CarryPolicy":
    return dataclasses.replace(self, pristine=frozenset(files))

  def discards(self, path: str) -> str | None:
    """Why grading discards a change (addition, edit or deletion) to workspace path `path`;
    None when the change carries."""
    rel = posixpath.normpath(path.replace("\\", "/")) if path else "."
    if rel.startswith("/") or rel == ".." or rel.startswith("../"):
      return "outside the workspace"
    if rel == ".":
      return "not a file"
    parts = rel.split("/")
    name = parts[-1]
    for part in parts[:-1]:
      if part in NEVER_DIRS or part.endswith(NEVER_DIR_SUFFIXES):
        return f"inside {part}/ (never part of a fix)"
    dest = posixpath.normpath(self.hidden_tests_dest or ".")
    if dest != "." and (rel == dest or rel.startswith(dest + "/")):
      return "where the hidden tests land"
    if name in SURFACE_NAMES:
      return "test or start-up configuration"
    if name.endswith(NEVER_SUFFIXES) or name in NEVER_DIRS:
      return "bytecode, a compiled module or a start-up hook"
    shadowed = self.shadows(rel) if name.endswith(SOURCE_SUFFIXES) or "/" in rel else None
    if shadowed:  # never a fix, whatever `editable` says
      return f"shadows the installed module {shadowed!r}"
    if any(fnmatch.fnmatchcase(rel, pattern) for pattern in self.editable):
      return None
    if not name.endswith(SOURCE_SUFFIXES):
      return "not a source file (data and other files stay pristine)"
    if TEST_MODULE_RE.match(name) or any(p in ("tests", "test") for p in parts[:-1]):
      return "a test module"
    return None

  def shadows(self, rel: str) -> str | None:
    """The installed top-level module that workspace file `rel` would newly replace, if any
    (a top-level module or package the pristine repository already has is its own)."""
    for root in self.import_roots:
      root = posixpath.normpath(root or ".")
      if root == ".":
        inner = rel
      elif rel.startswith(root + "/"):
        inner = rel[len(root) + 1:]
      else:
        continue
      head = inner.split("/")[0]
      module = head if "/" in inner else head.rsplit(".", 1)[0]
      top = head if root == "." else f"{root}/{head}"
      if module in self.shadowed_modules and not self._pristine_has(top):
        return module
    return None

  def _pristine_has(self, top: str) -> bool:
    if self.pristine is None:
      return False
    return top in self.pristine or any(f.startswith(top + "/") for f in self.pristine)


@dataclasses.dataclass
class GradedTree:
  """What building the graded tree did: changes carried over, and changes left out (why)."""
  carried: list[str] = dataclasses.field(default_factory=list)  # added or modified files
  deleted: list[str] = dataclasses.field(default_factory=list)  # pristine files the fix removes
  discarded: dict[str, str] = dataclasses.field(default_factory=dict)  # path -> reason
  digest: str = ""  # of the carried changes (with the pristine tree's digest: the graded tree)
  modes: dict[str, int] = dataclasses.field(default_factory=dict)  # carried file -> 0o644 | 0o755


def _entries(root: str) -> dict[str, tuple[str, str]]:
  """{relative path: ("file", abs path) | ("link", target)} without following symlinks."""
  out: dict[str, tuple[str, str]] = {}
  for dirpath, dirnames, filenames in os.walk(root):
    dirnames.sort()
    for name in sorted(filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]):
      full = os.path.join(dirpath, name)
      rel = os.path.relpath(full, root).replace(os.sep, "/")
      out[rel] = ("link", os.readlink(full)) if os.path.islink(full) else ("file", full)
  return out


def _same_file(a: str, b: str) -> bool:
  if os.path.getsize(a) != os.path.getsize(b):
    return False
  with open(a, "rb") as fa, open(b, "rb") as fb:
    return fa.read() == fb.read()


def _ignore_never_dirs(directory: str, names: list[str]) -> set[str]:
  del directory
  return {n for n in names if n in NEVER_DIRS or n.endswith(NEVER_DIR_SUFFIXES)}


def _write_inside(root: str, rel: str, data: bytes, mode: int = 0o644) -> None:
  """Writes root/rel, replacing any symlink or file on the way by a real directory."""
  current = root
  for part in rel.split("/")[:-1]:
    current = os.path.join(current, part)
    if os.path.islink(current) or (os.path.exists(current) and not os.path.isdir(current)):
      os.unlink(current)
    if not os.path.exists(current):
      os.mkdir(current)
  target = os.path.join(root, *rel.split("/"))
  if os.path.islink(target) or os.path.isfile(target):
    os.unlink(target)
  elif os.path.isdir(target):
    shutil.rmtree(target)
  with open(target, "wb") as f:
    f.write(data)
  os.chmod(target, mode)


def changes(workspace_dir: str, pristine_dir: str, policy: CarryPolicy) -> tuple[GradedTree, dict[str, bytes]]:
  """The workspace's changes against the pristine repository, sorted by the policy.

  Returns the summary and the bytes of every carried file. Symlinks the pristine repository
  does not have are discarded (a link can point at the hidden tests or outside the tree).
  """
  tree = GradedTree()
  data: dict[str, bytes] = {}
  pristine = _entries(pristine_dir)
  workspace = _entries(workspace_dir)
  policy = policy.with_pristine(pristine)
  digest = hashlib.sha256()
  for rel, (kind, value) in workspace.items():
    before = pristine.get(rel)
    if before is not None and before[0] == kind and (
        value == before[1] if kind == "link" else _same_file(value, before[1])):
      continue
    if kind == "link":
      tree.discarded[rel] = "a symlink"
      continue
    reason = policy.discards(rel)
    if reason:
      tree.discarded[rel] = reason
      continue
    with open(value, "rb") as f:
      data[rel] = f.read()
    # The executable bit comes along (a script the tests run as ./tool), nothing else.
    tree.modes[rel] = 0o755 if os.stat(value).st_mode & 0o100 else 0o644
    tree.carried.append(rel)
    digest.update(b"+" + rel.encode("utf-8", "surrogateescape") + b"\0" + oct(tree.modes[rel]).encode()
                  + hashlib.sha256(data[rel]).digest())
  for rel in pristine:
    if rel in workspace:
      continue
    reason = policy.discards(rel)
    if reason:
      tree.discarded[rel] = "deleted; " + reason
      continue
    tree.deleted.append(rel)
    digest.update(b"-" + rel.encode("utf-8", "surrogateescape") + b"\0")
  tree.digest = digest.hexdigest()
  return tree, data


def build(workspace_dir: str, pristine_dir: str, staging: str, policy: CarryPolicy,
          computed: tuple[GradedTree, dict[str, bytes]] | None = None) -> GradedTree:
  """Fills `staging` with the pristine repository (no .git, caches or installed metadata)
  plus the carried changes; returns what was carried and what was discarded."""
  tree, data = computed or changes(workspace_dir, pristine_dir, policy)
  shutil.copytree(pristine_dir, staging, symlinks=True, dirs_exist_ok=True, ignore=_ignore_never_dirs)
  for rel in tree.deleted:
    target = os.path.join(staging, *rel.split("/"))
    if os.path.islink(target) or os.path.isfile(target):
      os.unlink(target)
  for rel in tree.carried:
    _write_inside(staging, rel, data[rel], tree.modes.get(rel, 0o644))
  return tree


def policy_for(hidden_tests_dest: str, editable: Iterable[str] = (), python_path: Iterable[str] = ()) -> CarryPolicy:
  """The policy of a task: its hidden-tests destination, editable patterns and import roots."""
  roots = tuple(dict.fromkeys([".", *(posixpath.normpath(p) for p in python_path)]))
  return CarryPolicy(hidden_tests_dest=hidden_tests_dest or ".", editable=tuple(editable), import_roots=roots)
