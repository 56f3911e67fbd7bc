"""The final diff as the stage-1 diff rules see it: changed files, added lines, parsed ASTs.

Only code the agent added or changed is judged: an AST node counts when one of its
lines is new, so pre-existing repository code (which may legitimately call sys.exit)
never flags an episode.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import posixpath
import threading
from typing import Iterator, Mapping

from rl.antihack.context import is_test_file

# CPython 3.11's AST constructor is not thread-safe ("AST constructor recursion depth mismatch"
# when two threads parse at once); rules run in grading threads.
PARSE_LOCK = threading.Lock()


@dataclasses.dataclass
class ChangedFile:
  path: str
  status: str  # "added" | "modified" | "deleted"
  before: str
  after: str
  added_lines: frozenset[int]  # 1-based line numbers in `after`
  is_test: bool
  tree: ast.AST | None = None  # parsed `after` for Python files that parse
  aliases: dict[str, str] = dataclasses.field(default_factory=dict)  # local name -> dotted origin

  @property
  def is_python(self) -> bool:
    return self.path.endswith(".py")

  def added_text(self) -> Iterator[tuple[int, str]]:
    lines = self.after.splitlines()
    for n in sorted(self.added_lines):
      if 0 < n <= len(lines):
        yield n, lines[n - 1]

  def touches(self, node: ast.AST) -> bool:
    """True when any line of `node` was added or changed by the agent."""
    start = getattr(node, "lineno", None)
    if start is None:
      return False
    end = getattr(node, "end_lineno", None) or start
    return any(n in self.added_lines for n in range(start, end + 1))


@dataclasses.dataclass
class Diff:
  files: list[ChangedFile]
  initial_files: Mapping[str, str]

  def python_files(self) -> list[ChangedFile]:
    return [f for f in self.files if f.tree is not None]


_IGNORED_PARTS = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", ".git"}


def build_diff(initial_files: Mapping[str, str], final_files: Mapping[str, str]) -> Diff:
  for name, files in (("initial_files", initial_files), ("final_files", final_files)):
    if not isinstance(files, Mapping):
      raise TypeError(f"{name} must be a dict of path -> text, got {type(files).__name__}")
  changed = []
  for path in sorted(set(initial_files) | set(final_files)):
    if _IGNORED_PARTS & set(path.split("/")) or path.endswith((".pyc", ".pyo")):
      continue  # caches written by running Python or pytest, not by the agent's hand
    before = initial_files.get(path)
    after = final_files.get(path)
    if before == after:
      continue
    if after is None:
      changed.append(ChangedFile(path, "deleted", _as_text(before), "", frozenset(), is_test_file(path)))
      continue
    before_t, after_t = _as_text(before), _as_text(after)
    cf = ChangedFile(path, "added" if before is None else "modified", before_t, after_t,
                     _added_lines(before_t, after_t), is_test_file(path))
    if path.endswith(".py"):
      try:
        with PARSE_LOCK:
          cf.tree = ast.parse(after_t, filename=path)
        cf.aliases = import_aliases(cf.tree)
      # SystemError/RecursionError: CPython 3.11's parser fails on some deeply nested valid
      # sources ("AST constructor recursion depth mismatch"); such a file gets no syntax rules.
      except (SyntaxError, ValueError, SystemError, RecursionError, MemoryError):
        cf.tree = None
    changed.append(cf)
  return Diff(files=changed, initial_files=initial_files)


def _as_text(text: str | bytes | None) -> str:
  if text is None:
    return ""
  if isinstance(text, bytes):
    return text.decode("utf-8", errors="replace")
  return str(text)


def _added_lines(before: str, after: str) -> frozenset[int]:
  a, b = before.splitlines(), after.splitlines()
  added: set[int] = set()
  for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
    if tag in ("replace", "insert"):
      added.update(range(j1 + 1, j2 + 1))
  return frozenset(added)


def import_aliases(tree: ast.AST) -> dict[str, str]:
  """Maps names bound by imports to what they refer to ("np" -> "numpy", "exit" -> "sys.exit")."""
  aliases: dict[str, str] = {}
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      for a in node.names:
        if a.asname:
          aliases[a.asname] = a.name
        else:
          aliases[a.name.split(".")[0]] = a.name.split(".")[0]
    elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
      for a in node.names:
        aliases[a.asname or a.name] = f"{node.module}.{a.name}"
  return aliases


def dotted_name(node: ast.AST, aliases: Mapping[str, str] | None = None) -> str | None:
  """'os.path.join' for an attribute chain, resolved through import aliases; None otherwise."""
  parts = []
  while isinstance(node, ast.Attribute):
    parts.append(node.attr)
    node = node.value
  if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
    # __builtins__["open"] and sys.modules["pytest"] style roots
    inner = dotted_name(node.value, aliases)
    if inner is None:
      return None
    parts.append(str(node.slice.value))
    parts.append(inner)
    return ".".join(reversed(parts))
  if not isinstance(node, ast.Name):
    return None
  root = node.id
  if aliases and root in aliases:
    root = aliases[root]
  parts.append(root)
  return ".".join(reversed(parts))


def module_name_of(path: str) -> str:
  return posixpath.splitext(posixpath.basename(path))[0]


def unified_diff(initial_files: Mapping[str, str], final_files: Mapping[str, str], context_lines: int = 3) -> str:
  """A git-style unified diff of two {path: text} snapshots (what the judge is shown)."""
  chunks = []
  for path in sorted(set(initial_files) | set(final_files)):
    before, after = initial_files.get(path), final_files.get(path)
    if before == after:
      continue
    a = _as_text(before).splitlines(keepends=True)
    b = _as_text(after).splitlines(keepends=True)
    lines = difflib.unified_diff(a, b, fromfile="/dev/null" if before is None else f"a/{path}",
                                 tofile="/dev/null" if after is None else f"b/{path}", n=context_lines)
    chunks.append("".join(line if line.endswith("\n") else line + "\n" for line in lines))
  return "".join(chunks)
