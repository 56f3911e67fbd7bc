"""Semantics-preserving renaming of the synthetic tasks' code: local names and module files.

A function library of a few dozen entries lets a small policy memorise each task's path and
lines instead of reading them from its context (docs/experiments.md). A renamed variant
of a task keeps its function, bug and tests but calls its parameters and local variables, and
the module file that holds it, by other names, so the same bug appears in several spellings
and only the files in front of the agent tell which one.

Renaming is exact, not textual: the names to rename are the parameters and assignment
targets of the functions (and lambdas and comprehensions) in the module, found on its syntax
tree, and every occurrence is rewritten at the position the tree gives. Attributes, keyword
arguments, function and class names and `self` keep their spelling; a new name never equals
any name the module already uses. The buggy and the fixed module get the same mapping, so
the planted bug and its fix carry over word for word.
"""

from __future__ import annotations

import ast
import builtins
import keyword
import random
from typing import Iterable

# Plausible identifiers for locals; none is a builtin, keyword or common module name.
LOCAL_NAMES = (
    "acc", "val", "res", "tmp", "cur", "idx", "pos", "item", "elem", "buf", "seq", "arr",
    "word", "num", "cnt", "total", "out", "head", "tail", "left", "right", "prev", "step",
    "part", "piece", "key", "value", "entry", "node", "row", "col", "size", "width", "base",
    "first", "last", "lo", "hi", "mid", "best", "found", "flag", "data", "text", "chars",
    "items", "vals", "parts", "result", "count", "index", "amount", "limit", "target",
)
# Module names for the renamed file (stem of `<name>.py`); none shadows a standard module.
MODULE_NAMES = (
    "util", "helpers", "core", "mathx", "textops", "seqs", "misc", "funcs", "algo", "basics",
    "toolbox", "listops", "strtools", "numeric", "parsing", "structs", "kit", "common_ops",
)
_RESERVED = set(dir(builtins)) | set(keyword.kwlist) | {"self", "cls"}


def local_names(source: str) -> list[str]:
  """Parameters and assigned names of every function, lambda and comprehension, in order."""
  tree = ast.parse(source)
  found: dict[str, None] = {}
  for node in ast.walk(tree):
    if isinstance(node, ast.arg):
      found.setdefault(node.arg)
    elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
      found.setdefault(node.id)
  defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
  return [n for n in found if n not in _RESERVED and n not in defined]


def all_names(source: str) -> set[str]:
  """Every identifier the module mentions (names, attributes, definitions, keywords)."""
  tree = ast.parse(source)
  names: set[str] = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.Name):
      names.add(node.id)
    elif isinstance(node, ast.arg):
      names.add(node.arg)
    elif isinstance(node, ast.Attribute):
      names.add(node.attr)
    elif isinstance(node, ast.keyword) and node.arg:
      names.add(node.arg)
    elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
      names.add(node.name)
  return names


def draw_mapping(sources: Iterable[str], rng: random.Random, pool: tuple[str, ...] = LOCAL_NAMES
                 ) -> dict[str, str]:
  """A renaming of the local names of `sources` (buggy and fixed text of one module) to
  distinct names of `pool` that none of them uses; names left over when the pool runs out
  keep their spelling."""
  sources = list(sources)
  taken = set().union(*(all_names(s) for s in sources))
  locals_: dict[str, None] = {}
  for s in sources:
    for n in local_names(s):
      locals_.setdefault(n)
  free = [p for p in pool if p not in taken]
  rng.shuffle(free)
  return {old: new for old, new in zip(locals_, free)}


def rename(source: str, mapping: dict[str, str]) -> str:
  """`source` with every parameter and variable occurrence in `mapping` renamed."""
  if not mapping:
    return source
  tree = ast.parse(source)
  lines = source.splitlines(keepends=True)
  edits: list[tuple[int, int, int, str]] = []  # (line, col, end_col, new); byte offsets
  for node in ast.walk(tree):
    if isinstance(node, ast.Name) and node.id in mapping:
      edits.append((node.lineno, node.col_offset, node.end_col_offset, mapping[node.id]))
    elif isinstance(node, ast.arg) and node.arg in mapping:
      edits.append((node.lineno, node.col_offset, node.col_offset + len(node.arg.encode()),
                    mapping[node.arg]))
  for lineno, col, end, new in sorted(edits, reverse=True):
    raw = lines[lineno - 1].encode("utf-8")
    lines[lineno - 1] = (raw[:col] + new.encode() + raw[end:]).decode("utf-8")
  out = "".join(lines)
  # The renamed module must mean the same: the tree with the names mapped back is unchanged.
  if ast.dump(_mapped(ast.parse(out), {v: k for k, v in mapping.items()})) != ast.dump(tree):
    raise ValueError("renaming changed the module's structure")  # a bug here, not bad input
  return out


def _mapped(tree: ast.AST, mapping: dict[str, str]) -> ast.AST:
  for node in ast.walk(tree):
    if isinstance(node, ast.Name) and node.id in mapping:
      node.id = mapping[node.id]
    elif isinstance(node, ast.arg) and node.arg in mapping:
      node.arg = mapping[node.arg]
  return tree
