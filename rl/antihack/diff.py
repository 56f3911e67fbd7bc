"""The final diff as the stage-1 diff rules see it: changed files, added lines, parsed ASTs.

Only code the agent added or changed is judged: an AST node counts when one of its
lines is new, so pre-existing repository code (which may legitimately call sys.exit)
never flags an episode.

Nothing is skipped silently. A file value may be text (`str`), raw `bytes` (decoded the
way Python decodes source: BOM, PEP 263 coding cookie, else UTF-8, else latin-1) or an
`Unreadable` marker (a symlink, a file over the reader's size limit, an unreadable file;
`read_workspace` produces them). A changed file the analysis cannot read or parse gets a
`problem`, which the `unreadable_files` checker turns into a rule hit. Non-`.py` files
that changed code loads as code at run time (runpy.run_path, SourceFileLoader, exec of
open(...).read(), a python shebang) are parsed as Python too.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import difflib
import io
import os
import posixpath
import re
import tokenize
from typing import Any, Iterator, Mapping

from rl.antihack.context import is_test_file
# Every parse goes through rl.parsing's lock: CPython 3.11's AST constructor is not thread-safe,
# and rules run in grading threads.
from rl import parsing

MAX_FILE_BYTES = 1 << 20  # read_workspace: larger files become Unreadable("oversized")


@dataclasses.dataclass(frozen=True)
class Unreadable:
  """A workspace entry whose text the rules cannot see: a symlink, an oversized or unreadable file."""
  reason: str  # "symlink" | "oversized" | "unreadable"
  detail: str = ""  # the link target, the size, the error

  def describe(self) -> str:
    return f"{self.reason} ({self.detail})" if self.detail else self.reason


def read_workspace(root: str, max_bytes: int = MAX_FILE_BYTES) -> dict[str, Any]:
  """Workspace-relative path -> text, raw bytes or `Unreadable` for every entry under `root`.

  The input `RuleEngine.check_diff` needs to see everything: symlinks (to files or
  directories) and files over `max_bytes` are kept as `Unreadable` markers instead of
  being left out, and non-UTF-8 files as bytes (decoded like Python source at parse time).
  Only .git and bytecode caches are left out.
  """
  out: dict[str, Any] = {}
  for dirpath, dirnames, filenames in os.walk(root):
    keep = []
    for d in sorted(dirnames):
      full = os.path.join(dirpath, d)
      rel = os.path.relpath(full, root).replace(os.sep, "/")
      if d in (".git", "__pycache__"):
        continue
      if os.path.islink(full):
        out[rel] = Unreadable("symlink", os.readlink(full))
      else:
        keep.append(d)
    dirnames[:] = keep
    for name in sorted(filenames):
      full = os.path.join(dirpath, name)
      rel = os.path.relpath(full, root).replace(os.sep, "/")
      try:
        if os.path.islink(full):
          out[rel] = Unreadable("symlink", os.readlink(full))
          continue
        size = os.path.getsize(full)
        if size > max_bytes:
          out[rel] = Unreadable("oversized", f"{size} bytes > {max_bytes}")
          continue
        with open(full, "rb") as fh:
          data = fh.read()
      except OSError as e:
        out[rel] = Unreadable("unreadable", f"{type(e).__name__}: {e}")
        continue
      try:
        out[rel] = data.decode("utf-8")
      except UnicodeDecodeError:
        out[rel] = data
  return out


def decode_source(data: bytes) -> tuple[str, str]:
  """(text, encoding) of Python source bytes as the interpreter reads them (BOM, coding cookie)."""
  try:
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    if encoding == "utf-8-sig" or text.startswith("\ufeff"):
      text = text.lstrip("\ufeff")
    return text, encoding
  except (SyntaxError, LookupError, UnicodeDecodeError):
    return data.decode("latin-1"), "latin-1"


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
  problem: str = ""  # why the rules could not read or parse this file ("" = fine)
  loaded_as_code: str = ""  # a non-.py file that changed code loads as code: how

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


_CODE_SUFFIXES = (".py", ".pyw")
_PY_SHEBANG = re.compile(r"\A(\ufeff)?#![^\n]*\bpython")


def build_diff(initial_files: Mapping[str, Any], final_files: Mapping[str, Any]) -> Diff:
  for name, files in (("initial_files", initial_files), ("final_files", final_files)):
    if not isinstance(files, Mapping):
      raise TypeError(f"{name} must be a dict of path -> text, got {type(files).__name__}")
  changed = []
  for path in sorted(set(initial_files) | set(final_files)):
    if _IGNORED_PARTS & set(path.split("/")) or path.endswith((".pyc", ".pyo")):
      # Caches written by running Python or pytest. Not a blind spot: grading deletes
      # bytecode and caches before the tests run, and A013 flags writing bytecode by hand.
      continue
    before = initial_files.get(path)
    after = final_files.get(path)
    if before == after:
      continue
    if after is None:
      changed.append(ChangedFile(path, "deleted", _as_text(before), "", frozenset(), is_test_file(path)))
      continue
    before_t = _as_text(before)
    after_t, problem = _text_and_problem(after)
    cf = ChangedFile(path, "added" if before is None else "modified", before_t, after_t,
                     _added_lines(before_t, after_t), is_test_file(path), problem=problem)
    if not problem and (path.endswith(_CODE_SUFFIXES) or _PY_SHEBANG.match(after_t)):
      _parse(cf)
    changed.append(cf)
  _parse_code_loaded_at_run_time(changed)
  return Diff(files=changed, initial_files=initial_files)


def _parse(cf: ChangedFile) -> None:
  try:
    cf.tree = parsing.parse(cf.after, filename=cf.path)
    cf.aliases = resolve_aliases(cf.tree)
  # SystemError/RecursionError: CPython 3.11's parser fails on some deeply nested valid
  # sources ("AST constructor recursion depth mismatch"). Such a file is not skipped
  # silently: its problem becomes a finding of the unreadable_files checker.
  except (SyntaxError, ValueError, SystemError, RecursionError, MemoryError) as e:
    cf.tree = None
    cf.problem = f"does not parse as Python ({type(e).__name__}: {str(e)[:80]})"


_LOADERS = {"runpy.run_path", "importlib.machinery.SourceFileLoader", "importlib.util.spec_from_file_location",
            "imp.load_source", "imp.load_module", "importlib.machinery.SourcelessFileLoader",
            "exec", "builtins.exec", "compile", "builtins.compile", "eval", "builtins.eval", "execfile"}


def _parse_code_loaded_at_run_time(files: list[ChangedFile]) -> None:
  """Parses changed non-.py files that changed Python code names in a loader call."""
  others = {posixpath.basename(f.path): f for f in files
            if f.status != "deleted" and f.tree is None and not f.problem and not f.path.endswith(_CODE_SUFFIXES)}
  if not others:
    return
  for f in [f for f in files if f.tree is not None]:
    for node in ast.walk(f.tree):
      if not isinstance(node, ast.Call):
        continue
      name = canonical_name(dotted_name(node.func, f.aliases)) or ""
      if name not in _LOADERS and not name.endswith(("SourceFileLoader", "spec_from_file_location", "run_path")):
        continue
      for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and sub.value:
          target = others.get(posixpath.basename(sub.value.replace("\\", "/")))
          if target is not None and not target.loaded_as_code:
            target.loaded_as_code = f"{name}() in {f.path}:{node.lineno}"
            _parse(target)
            if target.problem:
              target.problem += f"; it is loaded as code by {target.loaded_as_code}"


def _text_and_problem(value: Any) -> tuple[str, str]:
  """The text of a final-file value and, if the rules cannot see all of it, why."""
  if isinstance(value, Unreadable):
    return "", value.describe()
  if isinstance(value, (bytes, bytearray)):
    return decode_source(bytes(value))[0], ""
  text = str(value)
  if text.startswith("\ufeff"):  # a BOM decoded as text: Python ignores it, ast.parse does not
    text = text[1:]
  return text, ""


def _as_text(text: Any) -> str:
  if text is None or isinstance(text, Unreadable):
    return ""
  if isinstance(text, (bytes, bytearray)):
    return decode_source(bytes(text))[0]
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


BUILTIN_NAMES = frozenset(dir(builtins))
_MODULE_FACTORIES = {"__import__", "builtins.__import__", "importlib.import_module", "importlib.__import__"}


def resolve_aliases(tree: ast.AST) -> dict[str, str]:
  """Import aliases plus names bound by assignment to builtins, modules or their attributes.

  A small data-flow over the module (all scopes, to a fixed point): `e = exec`,
  `m = sys.modules`, `d = base64.urlsafe_b64decode`, `g = getattr(builtins, "exec")`,
  `b = __import__("builtins")`, `(x := eval)`, `a, b = exec, eval` make `e(...)`,
  `m["x"]`, `d(...)` resolve to what they name. A name bound to such an origin anywhere
  in the module keeps it (may-alias: rebinding it elsewhere does not hide it).
  Names the module defines itself (def, class, parameters) are never builtins.
  """
  aliases = import_aliases(tree)
  own: set[str] = set()
  pairs: list[tuple[ast.AST, ast.AST]] = []
  for node in ast.walk(tree):
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
      own.add(node.name)
    elif isinstance(node, ast.arg):
      own.add(node.arg)
    elif isinstance(node, ast.Assign):
      for t in node.targets:
        pairs.extend(_target_pairs(t, node.value))
    elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
      pairs.extend(_target_pairs(node.target, node.value))
  for _ in range(8):  # chains: a = exec; b = a
    changed = False
    for target, value in pairs:
      if target in aliases:
        continue
      origin = _origin(value, aliases, own)
      if origin and origin != target:
        aliases[target] = origin
        changed = True
    if not changed:
      break
  return aliases


def _target_pairs(target: ast.AST, value: ast.AST) -> list[tuple[str, ast.AST]]:
  if isinstance(target, ast.Name):
    return [(target.id, value)]
  if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
      and len(target.elts) == len(value.elts):
    return [p for t, v in zip(target.elts, value.elts) for p in _target_pairs(t, v)]
  return []


def _origin(value: ast.AST, aliases: Mapping[str, str], own: set[str]) -> str | None:
  """The dotted origin an expression names (a builtin, a module, one of their attributes), else None."""
  if isinstance(value, ast.Name):
    if value.id in aliases:
      return aliases[value.id]
    if value.id in BUILTIN_NAMES and value.id not in own or value.id == "__builtins__":
      return value.id
    return None
  if isinstance(value, (ast.Attribute, ast.Subscript, ast.Call)):
    name = dotted_name(value, aliases)
    if not name:
      return None
    root = name.split(".", 1)[0]
    known_root = (root in aliases.values() or root in BUILTIN_NAMES or root == "__builtins__"
                  or any(v.split(".", 1)[0] == root for v in aliases.values()))
    return canonical_name(name) if known_root else None
  return None


def canonical_name(name: str | None) -> str | None:
  """One spelling per builtin: `builtins.exec`, `__builtins__["exec"]`, `vars(builtins)["exec"]`,
  `builtins.__dict__["exec"]`, `getattr(builtins, "exec")` all become "exec"; `X.__dict__.k`
  becomes `X.k`."""
  if not name:
    return name
  name = name.replace(".__dict__.", ".")
  for prefix in ("__builtins__.", "builtins.", "sys.modules.builtins."):
    if name.startswith(prefix) and name[len(prefix):].split(".", 1)[0] in BUILTIN_NAMES:
      return name[len(prefix):]
  return name


def dotted_name(node: ast.AST, aliases: Mapping[str, str] | None = None) -> str | None:
  """'os.path.join' for an attribute chain, resolved through import aliases; None otherwise.

  Also sees through `getattr(X, "name")`, `vars(X)` and `__import__("mod")` /
  `importlib.import_module("mod")` with constant arguments.
  """
  parts = []
  while isinstance(node, ast.Attribute):
    parts.append(node.attr)
    node = node.value
  if isinstance(node, ast.Call) and node.args and not node.keywords:
    fname = dotted_name(node.func, aliases)
    arg = node.args[-1]
    const = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None
    if fname in ("getattr", "builtins.getattr") and len(node.args) == 2 and const:
      inner = dotted_name(node.args[0], aliases)
      return None if inner is None else ".".join([inner, const] + list(reversed(parts)))
    if fname in ("vars", "builtins.vars") and len(node.args) == 1:
      inner = dotted_name(node.args[0], aliases)
      return None if inner is None else ".".join([inner, "__dict__"] + list(reversed(parts)))
    if fname in _MODULE_FACTORIES and len(node.args) == 1 and const:
      return ".".join([const] + list(reversed(parts)))
    return None
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
