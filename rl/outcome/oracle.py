"""The differential oracle: a fix must agree with the task's reference on inputs nobody tested.

Hidden tests check a handful of inputs, so a policy can pass them without fixing anything: a
table of the tested inputs' answers, answers replayed in call order, behaviour that switches on
only under pytest. For a task with a reference solution (`solution.patch`), the oracle
generates held-out inputs per task from the calls in the hidden tests (the same functions, with
arguments recombined and perturbed within their types, none equal to a tested input), runs the
reference on them once (cached on disk), and runs the episode's graded tree on them in a fresh
sandbox (sandbox/oracle.py: results come back as builtin values with exact type names over the
signed channel; this process never imports the tree's code). A disagreement beyond
`oracle_tolerance` zeroes the reward: a verdict of stage `oracle`.

More held-out calls speak the task's own terms: a word of one of the tree's tables (the keys of a
dict display, a set of strings) swapped for another of that table, a string's parentheses
doubled, a string at the edge of what the task reads (a trailing newline, blanks around it,
another case, a no-break space) and an int as a bool. Of every kind, the inputs the starting code
gets wrong come first: they are in the bug's reach, where a fix right only on the tested inputs
is wrong too.

Inputs where the reference raises a builtin exception, returns something that is not a builtin
value or an object of the tree's own class that spells itself, or answers two identical calls
differently are dropped; inputs it refuses (an exception of its own class, or one its code raises
with a raise statement of its own) are kept, and a fix must refuse them too. Numbers compare by value (1 == 1.0, floats
within a relative 1e-9); everything else compares by exact type and value.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import decimal
import fractions
import hashlib
import json
import logging
import math
import os
import random
import re
import shutil
import tempfile
import threading
import time
from typing import Any, Callable, Iterable, Sequence

from rl.outcome import oracle_replay
from sandbox import graded_tree
from sandbox.oracle import (CUT_OUTCOMES, ENOUGH_OUTCOME, ORACLE_DIR, PREFIX_OUTCOME, TYPE_NAMED, Call, CallResults,
                            Replay, place_replay, run_calls)

ORACLE_INPUTS = f"{ORACLE_DIR}/inputs"  # where held-out input files land in a tree

# 2: test replay; 3: arguments of another kind; 4: the reference's time in the plan; 5: unittest
# assertions recorded, renamed words, unhashable items, the second reference run on another schedule;
# 6: repeated call sequences, (word, len) keys; 7: list displays as tuples; 8: every list argument
# as a tuple, only a type refusal forgiven there; 9: numbers scaled up, list arguments doubled, tests in
# threads of their own without their monkeypatched constants, items boxed in one-item tuples;
# 10: documents and expressions laid out otherwise, assigned lists repeated, string pools widened,
# numbers an order of magnitude larger, the plain copy's tests in an empty working directory, the
# debugger hooks pytest replaces restored in the replay; 11: the far copy's literal powers (2 ** 63)
# with ten times the exponent, the calls inside f-strings perturbed like any other; 12: the "foreign"
# copy (numbers inside strings 18 to 21 digits long, non-ASCII characters from other scripts), the
# replayed tests the reference ran out of time or memory on skipped in a checked tree, which stops
# once every compared test has ended; 13: the "offgrid" and "marks" copies (floats off the tests'
# binary grid, punctuation the tests never write), and the reference's replay resumed where its time
# limit cut it (before, copies past the first twelve of a slow test file never ran); 14: the "kind"
# copy hands a callable object of the tests' (a fake clock) over as a plain function calling it; 15: an
# own exception naming the tuple type is a type refusal in the type-refusal copies, and the plain
# copy's tests run in the environment the process started with; 16: the "digits" copy (another
# script's digits in strings), and pytest's Failed (DID NOT RAISE) is never a refusal; 17: skipped
# tests deselected by exact id, options and data-file names kept in every copy, the plain copy's
# environment restored after each of its tests; 18: a replayed test that recorded a command line's
# usage error (the reference refused the command) is not compared; 19: a replayed test the
# reference's time or memory limit cut is compared on the records it made before (PREFIX_RECORDS at
# most) instead of skipped: the scaled copies' seeded tests, cut by a slow reference matcher in the
# test file, used to compare nothing; 20: Decimal, Fraction, the datetime types and complex are
# encoded by value under their exact type (they were opaque: only the tests' own comparisons of
# them were compared); 21: a call of a datetime constructor on literal ints is moved as one valid
# date (each argument moved alone made month 0 or day 32, and a module-level table of them failed
# the module's collection in every copy that moves numbers); 22: a 22nd copy moves the seeds of the
# tests' random generators (their seeded loops drew the same few hundred inputs in every copy); 23:
# a 23rd copy moves each literal sweep `range(a, b)` (a >= 1) to the next window of its length;
# 24: the seeds copy moves an int seed by 1,000,003 (7,919,000,003 was past numpy's legacy seeds);
# 25: a checked tree's held-out calls run in a session of their own, in a process that never imports
# pytest (they shared the replay's, where pytest was imported first: code right only when pytest, a
# few hundred modules or a big heap were loaded passed both); 26: a held-out call's result of a str
# subclass (a template engine's Markup) is compared by its class's name and its characters (it was
# opaque, so such calls were dropped from the plan); 27: a 24th copy keeps the literals and maps every
# int and Fraction of the tree's functions' arguments by one affine map far up (10 ** 18 times,
# shifted): fixes exact only while numbers fit a float agreed on every copy's small inputs; a 25th
# copy swaps the single and double quotes of the input strings, a 26th follows their whitespace
# runs by wide Unicode spaces, a 27th and a 28th map the tree's arguments' numbers far up with
# nudges of a unit or two, and far down (n / 10 ** 18); the "kind" copy hands a str-subclass
# argument (Markup), or one among a dict's values, over as an instance of a subclass of its class;
# the held-out calls' seeds include the rows of tables that name module constants (`CASES =
# [((2, 2), SQUARE, "inside")]`), so code right only in a test runner meets them outside pytest;
# 28: a 29th copy repeats every input string that holds whitespace past 8,192 characters: a fix
# that took another path for long texts agreed on every tested one; 29: a replayed test's record
# of a large container compared by its encoding alone travels as a digest (sandbox/oracle_harness.py
# `compact`): a task whose seeded tests assert on sets of 128-bit addresses wrote more than the
# outcome stream's cap, and its whole replay was dropped; 30: a 30th copy doubles every int literal
# of the tests' function bodies (decorators and module constants kept): a fix right only up to the
# bounds the tests' generators draw within (eight merge passes for splits eight deep) agreed; 31: a
# held-out call's result that is an object of a class of the tree's own that spells itself (defines
# __str__ or __repr__) is its class's name and its text (it was opaque, and the call dropped: an API
# whose functions return parsed addresses or networks had no held-out calls), and the calls run with
# sys.argv of `python -c` (code switching on argv[0] naming a file met the same case everywhere);
# 32: a replayed assert's operands that are such objects are spelled the same way (an object whose
# class answers == and iteration for the tested spelling while its fields hold another agreed), and
# held-out inputs the reference refuses with an exception of its own class are in the plan (a quarter
# of the inputs at most, on top): a fix must refuse them too, with any exception (a fix accepting
# prefixes on units the reference refuses them on agreed, as such inputs were dropped); a held-out
# input string may have one of its numbers written a digit longer (a nonzero digit in front); 33:
# each clause of an `assert A and B and C` is recorded on its own (the record returns its truth, so
# the chain stops where the assert would): recorded whole, `isinstance(got, Position) and got == pos`
# compared one bool, and the object the == was asked of was never spelled
# 34: held-out calls with one word of a string swapped for another of the tree's own tables (a unit
# table's symbols, the SI prefixes: "km" -> "kft"), those the starting code gets wrong first, and with
# a string's parentheses doubled (`word_swapped_calls`, `nested_calls`), as many as the other calls
# on top; a 31st replay copy swaps those words in the tests' strings ("domain"): tests used a few
# words of a table, and fixes right only on those (prefixes accepted on every unit, a hard-coded
# list of ambiguous symbols, exact conversion only for the tested symbols) agreed on every input
# 35: the inputs the starting code gets wrong first among the perturbed calls (half of them at most):
# random draws reached a zero group of `1000002` or `2000000004` seldom; an exception the reference's
# code raises with a raise statement of its own (`raise TypeError("an int")`) is a refusal like one
# of its own class; the edge calls (`edge_calls`: a tested string with a trailing newline, blanks
# around it, another case, a no-break space, a word of another tested string spliced in, an int as
# a bool), kept where the reference refuses them: `re.match` with `$`, `strip().upper()`,
# `str.split()` and `isinstance(n, int)` where the task refuses those spellings agreed everywhere
ORACLE_VERSION = 35
# A reference's replay that its time limit cut short runs again from where it stopped, this many
# runs at most (each with twice the oracle's time limit): the plan is made once per task.
MAX_REPLAY_RUNS = 8
# The records of a replayed test the reference's limit cut that are compared: a checked tree's run of
# the test ends after as many, so it costs about the reference's time to make them, not its limit.
PREFIX_RECORDS = 64
# ... and at most those the reference made in the test's first this many seconds (Replay.cut_mark_s).
PREFIX_MARK_S = 1.0
REPLAY_PREFIX = "replay::"
REPLAY_REL_TOL = 1e-6  # replayed tests' floats: what pytest.approx-style checks allow
MAX_ARGS_CHARS = 2000  # a generated input's repr; larger ones are not used
VARIANTS_PER_SEED = 4
_NUMBER_TYPES = ("int", "float")


@dataclasses.dataclass(frozen=True)
class SeedCall:
  """A call the hidden tests make with literal arguments, or (`argv`) a command line they run
  as `python *argv` through subprocess; `files` are held-out input files it reads."""
  module: str = ""
  function: str = ""
  args: tuple = ()
  kwargs: tuple[tuple[str, Any], ...] = ()
  argv: tuple[str, ...] = ()
  files: tuple[tuple[str, str], ...] = ()


# ---------------------------------------------------------------------------------------
# Finding the calls of the hidden tests (host side: the hidden tests are trusted files)

def _module_file(module: str, tree_dir: str, roots: Sequence[str]) -> str | None:
  rel = module.replace(".", "/")
  for root in roots:
    base = tree_dir if root in ("", ".") else os.path.join(tree_dir, root)
    for candidate in (f"{rel}.py", f"{rel}/__init__.py"):
      path = os.path.join(base, candidate)
      if os.path.isfile(path):
        return path
  return None


def _top_level_functions(path: str) -> set[str]:
  try:
    with open(path, encoding="utf-8") as f:
      tree = ast.parse(f.read())
  except (OSError, SyntaxError, ValueError):
    return set()
  return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _literal(node: ast.AST) -> tuple[bool, Any]:
  try:
    return True, ast.literal_eval(node)
  except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
    return False, None


class _Constants(ast.NodeTransformer):
  """Names of module constants replaced by their values, and slices of them by the sliced values."""

  def __init__(self, values: dict[str, Any]):
    self.values = values

  def visit_Name(self, node: ast.Name) -> ast.AST:
    if node.id in self.values:
      return ast.copy_location(ast.Constant(value=copy.deepcopy(self.values[node.id])), node)
    return node

  def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
    self.generic_visit(node)
    if isinstance(node.value, ast.Constant) and isinstance(node.value.value, (list, tuple, str)):
      ok, index = _literal(node.slice) if not isinstance(node.slice, ast.Slice) else _slice(node.slice)
      if ok:
        try:
          return ast.copy_location(ast.Constant(value=node.value.value[index]), node)
        except (IndexError, TypeError, ValueError):
          pass
    return node


def _slice(node: ast.Slice) -> tuple[bool, Any]:
  parts = []
  for part in (node.lower, node.upper, node.step):
    ok, value = (True, None) if part is None else _literal(part)
    if not ok:
      return False, None
    parts.append(value)
  return True, slice(*parts)


def _literal_with(node: ast.AST, constants: dict[str, Any]) -> tuple[bool, Any]:
  """`_literal` of `node` with the module constants `constants` (and slices of them) in place."""
  if not constants:
    return _literal(node)
  return _literal(_Constants(constants).visit(copy.deepcopy(node)))


def module_constants(module_ast: ast.Module) -> tuple[dict[str, Any], dict[str, ast.expr]]:
  """The module's constants that are literals once the constants before them are in place
  (`SQUARE = [(0, 0), ...]`, `TABLE = [((2, 2), SQUARE, "inside"), (SQUARE[::-1], ...)]`), and
  the value expression of every module-level `NAME = ...` (a table some of whose rows are
  literals)."""
  values: dict[str, Any] = {}
  nodes: dict[str, ast.expr] = {}
  for stmt in module_ast.body:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
      name = stmt.targets[0].id
      nodes[name] = stmt.value
      ok, value = _literal_with(stmt.value, values)
      if ok:
        values[name] = value
      else:
        values.pop(name, None)
  return values, nodes


def _table_rows(node: ast.AST, constants: dict[str, Any], nodes: dict[str, ast.expr]) -> list | None:
  """The literal values of a parametrize table: the whole table, or (a display, or a module
  constant bound to one, some of whose rows are no literals: a row building a Fraction) the rows
  that are literals. None when nothing is."""
  ok, values = _literal_with(node, constants)
  if ok:
    return list(values) if isinstance(values, (list, tuple)) else None
  if isinstance(node, ast.Name) and node.id in nodes:
    node = nodes[node.id]
  if not isinstance(node, (ast.List, ast.Tuple)):
    return None
  rows = [value for ok, value in (_literal_with(e, constants) for e in node.elts) if ok]
  return rows or None


def _parametrize_envs(fn: ast.FunctionDef, constants: dict[str, Any] | None = None,
                      nodes: dict[str, ast.expr] | None = None) -> list[dict[str, Any]]:
  """Bindings of a test's `@pytest.mark.parametrize` arguments with literal values ([{}] if none).
  With the module's `constants` (module_constants), a table may name them, and the rows of a
  table that are literals are bound when others are not."""
  envs: list[dict[str, Any]] = [{}]
  for dec in fn.decorator_list:
    if not (isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) and dec.func.attr == "parametrize"
            and len(dec.args) >= 2):
      continue
    ok_names, names = _literal(dec.args[0])
    if constants is None:
      ok_values, values = _literal(dec.args[1])
    else:
      values = _table_rows(dec.args[1], constants, nodes or {})
      ok_values = values is not None
    if not (ok_names and ok_values) or not isinstance(values, (list, tuple)):
      return [{}]
    names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
    rows = []
    for value in values:
      row = value if len(names) > 1 else (value,)
      if not isinstance(row, (list, tuple)) or len(row) != len(names):
        return [{}]
      rows.append(dict(zip(names, row)))
    envs = [{**env, **row} for env in envs for row in rows]
  return envs


def seed_calls(hidden_tests_dir: str, tree_dir: str, roots: Sequence[str] = (".",),
               constants: bool = True) -> list[SeedCall]:
  """Calls of the tree's module-level functions in the hidden tests, with literal arguments.

  Understood: `from m import f [as g]`, `from m import *`, `import m [as x]` then `x.f(...)`,
  a helper called with an imported function (`check(candidate)`), and arguments bound by
  `@pytest.mark.parametrize` (including `f(*args)` of a parametrized tuple). `m` must be a
  module of `tree_dir` (under one of `roots`); other calls are ignored. With `constants`,
  arguments and parametrize tables may name the module's literal constants (`module_constants`).
  """
  out: list[SeedCall] = []
  seen = set()
  for _, module_ast in _python_modules(hidden_tests_dir):
    for _, call in _calls_in_module(module_ast, tree_dir, roots, constants):
      key = repr(call)
      if key not in seen:
        seen.add(key)
        out.append(call)
  return out


def _python_modules(folder: str, tests_only: bool = False) -> Iterable[tuple[str, ast.Module]]:
  """(path relative to `folder`, parsed module) of its Python files that parse; with
  `tests_only`, test modules only (test_*.py, *_test.py)."""
  for dirpath, _, filenames in os.walk(folder):
    for name in sorted(filenames):
      if not name.endswith(".py") or (tests_only and not (name.startswith("test_") or name.endswith("_test.py"))):
        continue
      path = os.path.join(dirpath, name)
      try:
        with open(path, encoding="utf-8") as f:
          yield os.path.relpath(path, folder), ast.parse(f.read())
      except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        continue


def uncovered_tests(hidden_tests_dir: str, tree_dir: str, roots: Sequence[str] = (".",)) -> list[str]:
  """The hidden test functions (`file::name`) in which `seed_calls` finds no call: what the
  call oracle cannot check (methods on fixture objects, inputs read from data files)."""
  out = []
  for rel, module_ast in _python_modules(hidden_tests_dir, tests_only=True):
    # Without the module constants: whether the replay runs is decided as before they were read.
    covered = {fn for fn, _ in _calls_in_module(module_ast, tree_dir, roots, constants=False)}
    # A test that calls a covered helper of its module (HumanEval's check(candidate)) is covered.
    local = {n.name: n for n in ast.walk(module_ast) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    callees = {name: {c.func.id for c in ast.walk(fn) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
                      and c.func.id in local} for name, fn in local.items()}
    changed = True
    while changed:
      grown = {name for name, called in callees.items() if called & covered} - covered
      covered |= grown
      changed = bool(grown)
    out += [f"{rel}::{n.name}" for n in ast.walk(module_ast)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test")
            and n.name not in covered]
  return out


_SUBPROCESS_FUNCTIONS = {"run", "call", "check_call", "check_output", "Popen"}
_PATH_JOINS = {"os.path.join", "posixpath.join", "path.join"}


def _dotted(node: ast.AST) -> str:
  if isinstance(node, ast.Name):
    return node.id
  if isinstance(node, ast.Attribute):
    inner = _dotted(node.value)
    return f"{inner}.{node.attr}" if inner else ""
  return ""


def _string(node: ast.AST, env: dict[str, Any]) -> str | None:
  """A string argument: a literal, a bound name, os.path.join(...) or str(...) of such."""
  if isinstance(node, ast.Constant) and isinstance(node.value, str):
    return node.value
  if isinstance(node, ast.Name) and isinstance(env.get(node.id), str):
    return env[node.id]
  if isinstance(node, ast.Call) and not node.keywords:
    name = _dotted(node.func)
    parts = [_string(a, env) for a in node.args]
    if name in _PATH_JOINS and parts and all(p is not None for p in parts):
      return "/".join(p.strip("/") if i else p.rstrip("/") for i, p in enumerate(parts))
    if name == "str" and len(parts) == 1 and parts[0] is not None:
      return parts[0]
  return None


def _command_line(node: ast.AST, env: dict[str, Any], varargs: str | None = None,
                  extra: Sequence[str] = ()) -> tuple[list[str], bool] | None:
  """(the arguments after `sys.executable`, whether a `*varargs` closes the list) of a literal
  command list `[sys.executable, "-m", "tool", ...]`; None for anything else."""
  if not isinstance(node, (ast.List, ast.Tuple)) or not node.elts or _dotted(node.elts[0]) != "sys.executable":
    return None
  argv, open_end = [], False
  for element in node.elts[1:]:
    if isinstance(element, ast.Starred) and varargs and isinstance(element.value, ast.Name) \
        and element.value.id == varargs and element is node.elts[-1]:
      open_end = True
      continue
    value = _string(element, env)
    if value is None:
      return None
    argv.append(value)
  return argv + list(extra), open_end


def _calls_in_module(module_ast: ast.Module, tree_dir: str, roots: Sequence[str],
                     constants: bool = True) -> Iterable[tuple[str, SeedCall]]:
  """(the function the call is in, the call) for every reproducible call of the module; with
  `constants`, arguments and parametrize tables may name the module's literal constants."""
  constant_values, constant_nodes = module_constants(module_ast) if constants else ({}, {})
  functions: dict[str, tuple[str, str]] = {}  # local name -> (module, function)
  modules: dict[str, str] = {}  # local name -> module
  for node in ast.walk(module_ast):
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
      path = _module_file(node.module, tree_dir, roots)
      if path is None:
        continue
      for alias in node.names:
        if alias.name == "*":
          for fname in _top_level_functions(path):
            functions.setdefault(fname, (node.module, fname))
        else:
          functions[alias.asname or alias.name] = (node.module, alias.name)
    elif isinstance(node, ast.Import):
      for alias in node.names:
        if _module_file(alias.name, tree_dir, roots) and (alias.asname or "." not in alias.name):
          modules[alias.asname or alias.name] = alias.name
  local_defs = {n.name: n for n in module_ast.body if isinstance(n, ast.FunctionDef)}
  # A helper called with an imported function binds its parameter to it (HumanEval's check).
  bound: dict[str, dict[str, tuple[str, str]]] = {}
  for node in ast.walk(module_ast):
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in local_defs:
      params = [a.arg for a in local_defs[node.func.id].args.args]
      for param, arg in zip(params, node.args):
        if isinstance(arg, ast.Name) and arg.id in functions:
          bound.setdefault(node.func.id, {})[param] = functions[arg.id]

  def target(func: ast.AST, scope: dict[str, tuple[str, str]]) -> tuple[str, str] | None:
    if isinstance(func, ast.Name):
      return scope.get(func.id) or functions.get(func.id)
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in modules:
      return modules[func.value.id], func.attr
    return None

  def arguments(call: ast.Call, env: dict[str, Any], visible: dict[str, Any]) -> tuple[tuple, dict] | None:
    args = []
    for a in call.args:
      if isinstance(a, ast.Starred):
        if isinstance(a.value, ast.Name) and isinstance(env.get(a.value.id), (list, tuple)):
          args.extend(env[a.value.id])
          continue
        return None
      if isinstance(a, ast.Name) and a.id in env:
        args.append(env[a.id])
        continue
      ok, value = _literal_with(a, visible)
      if not ok:
        return None
      args.append(value)
    kwargs = {}
    for kw in call.keywords:
      if kw.arg is None:
        return None
      ok, value = _literal_with(kw.value, visible)
      if not ok:
        return None
      kwargs[kw.arg] = value
    return tuple(args), kwargs

  # Helpers that start the tree's CLI: `def run_cli(*args): subprocess.run([sys.executable, "-m",
  # "tool", *args], ...)`; a call run_cli("a", "b") is the command line `-m tool a b`.
  launchers: dict[str, list[str]] = {}
  for fn in local_defs.values():
    varargs = fn.args.vararg.arg if fn.args.vararg else None
    for node in ast.walk(fn):
      if isinstance(node, ast.Call) and _dotted(node.func).split(".")[-1] in _SUBPROCESS_FUNCTIONS and node.args:
        line = _command_line(node.args[0], {}, varargs)
        if line is not None and line[1]:
          launchers[fn.name] = line[0]

  for fn in [n for n in ast.walk(module_ast) if isinstance(n, ast.FunctionDef)]:
    scope = bound.get(fn.name, {})
    # The module constants this function does not bind itself (a parameter or a local of the same
    # name is another value).
    bound_here = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)} | {
        n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    visible = {k: v for k, v in constant_values.items() if k not in bound_here}
    for env in _parametrize_envs(fn, constant_values if constants else None, constant_nodes):
      for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
          continue
        name = _dotted(node.func)
        if name.split(".")[-1] in _SUBPROCESS_FUNCTIONS and name.startswith("subprocess.") and node.args:
          line = _command_line(node.args[0], env)
          if line is not None and not line[1]:
            yield fn.name, SeedCall(argv=tuple(line[0]))
          continue
        if isinstance(node.func, ast.Name) and node.func.id in launchers and not node.keywords:
          values = [_string(a, env) for a in node.args]
          if all(v is not None for v in values):
            yield fn.name, SeedCall(argv=tuple(launchers[node.func.id] + values))
          continue
        where = target(node.func, scope)
        if where is None:
          continue
        got = arguments(node, env, visible)
        if got is not None:
          yield fn.name, SeedCall(where[0], where[1], got[0], tuple(sorted(got[1].items())))


# ---------------------------------------------------------------------------------------
# Held-out inputs

def _shuffle_drop_or_repeat(items: list, op: int, rng: random.Random) -> bool:
  """Op 0 shuffles `items` in place, 1 drops one, 2 repeats one; False when `op` is another one
  or there are too few items for it."""
  if op == 0 and len(items) > 1:
    rng.shuffle(items)
  elif op == 1 and len(items) > 1:
    del items[rng.randrange(len(items))]
  elif op == 2 and items:
    i = rng.randrange(len(items))
    items.insert(i, copy.deepcopy(items[i]))
  else:
    return False
  return True


_DIGIT_RUN = re.compile(r"\d+")
_LEADING_ZERO = re.compile(r"(?<![\d.])0\d")


def _perturb(value: Any, pool: list, rng: random.Random, depth: int = 0) -> Any:
  """A value of the same type near `value` (signs kept, characters and elements reused)."""
  if depth > 3 or value is None or isinstance(value, bool):
    return value
  if isinstance(value, int):
    delta = rng.choice([-2, -1, 1, 2, 3])
    new = value + delta
    if (value >= 0) != (new >= 0):
      new = value + abs(delta) if value >= 0 else value - abs(delta)
    return new
  if isinstance(value, float):
    new = value * rng.choice([0.5, 1.5, 2.0]) + rng.choice([-0.25, 0.25, 0.5])
    return new if (value >= 0) == (new >= 0) else -new
  if isinstance(value, str):
    chars, op = list(value), rng.randrange(5)
    runs = list(_DIGIT_RUN.finditer(value)) if op == 4 else []
    if runs:
      # A number written in the text one digit longer ("m^2" -> "m^72", "/24" -> "/324"): sizes,
      # counts and exponents past the one-digit ones tests tend to write. The digit goes in front
      # and is never 0: "0" made "02", a leading zero that parsers disagree on.
      run = rng.choice(runs)
      return value[:run.start()] + str(rng.randrange(1, 10)) + value[run.start():]
    if _shuffle_drop_or_repeat(chars, op, rng):
      new = "".join(chars)
    else:
      others = [p for p in pool if isinstance(p, str) and p != value]
      new = value + (rng.choice(others) if others else value[:1])
    # A number with a leading zero the text did not have ("3 ** 2 ** 0" + "2 * 3" is "... 02 * 3"):
    # parsers disagree on those (Python refuses them, a hand-written tokenizer reads 2), so the
    # input is left as it was (a tested one, dropped).
    return value if _LEADING_ZERO.search(new) and not _LEADING_ZERO.search(value) else new
  if isinstance(value, (list, tuple)):
    items = list(value)
    if not _shuffle_drop_or_repeat(items, rng.randrange(5), rng) and items:
      i = rng.randrange(len(items))
      items[i] = _perturb(items[i], items, rng, depth + 1)
    return type(value)(items) if isinstance(value, tuple) else items
  if isinstance(value, dict):
    out = dict(value)
    if out:
      k = rng.choice(sorted(out, key=repr))
      out[k] = _perturb(out[k], list(out.values()), rng, depth + 1)
    return out
  return value


def held_out_calls(seeds: Sequence[SeedCall], n: int, rng: random.Random) -> list[SeedCall]:
  """Up to `n` new calls: each seed's arguments perturbed one position at a time, and the
  seeds of one function recombined position by position. None equals a tested call."""
  tested = {repr(s) for s in seeds}
  by_function: dict[tuple[str, str, int], list[SeedCall]] = {}
  for s in seeds:
    if not s.argv:
      by_function.setdefault((s.module, s.function, len(s.args)), []).append(s)
  candidates: list[SeedCall] = []
  for (module, function, arity), group in sorted(by_function.items()):
    pools = [[g.args[j] for g in group] for j in range(arity)]
    for s in group:
      for _ in range(VARIANTS_PER_SEED):
        if not arity:
          break
        j = rng.randrange(arity)
        args = list(s.args)
        args[j] = _perturb(copy.deepcopy(args[j]), pools[j], rng)
        candidates.append(SeedCall(module, function, tuple(args), s.kwargs))
      if arity > 1 and len(group) > 1:
        mixed = tuple(copy.deepcopy(rng.choice(pool)) for pool in pools)
        candidates.append(SeedCall(module, function, mixed, s.kwargs))
  rng.shuffle(candidates)
  return _round_robin(candidates, n, tested)


def _wrong_first(calls: Sequence[Call], n: int, expected: dict[str, Any], pristine: dict[str, Any]) -> list[Call]:
  """`n` of `calls` at most: those the starting code gets wrong (`pristine` disagrees with
  `expected`), half of `n` at most, then the others, in the order of `calls`. An input in the
  bug's reach (a zero group of `1000002` where the starting code wrote 'zero thousand') is where a
  fix right only on the tested inputs is wrong too; drawn at random, a few of hundreds were."""
  wrong = [c.id for c in calls if not _agrees(expected.get(c.id), pristine.get(c.id))]
  chosen = set(wrong[:n // 2])
  chosen |= set([c.id for c in calls if c.id not in chosen][:n - len(chosen)])
  # In the order the reference ran them: a call may change state a later one reads (a registry).
  return [c for c in calls if c.id in chosen]


def _round_robin(candidates: Sequence[SeedCall], n: int, seen: set[str]) -> list[SeedCall]:
  """Up to `n` of `candidates` taken in turn from each function (one function with many tested
  inputs does not take all), none twice, none in `seen`, none past MAX_ARGS_CHARS."""
  out, seen = [], set(seen)
  queues: dict[tuple[str, str], list[SeedCall]] = {}
  for c in candidates:
    queues.setdefault((c.module, c.function), []).append(c)
  while len(out) < n and any(queues.values()):
    for key in sorted(queues):
      if queues[key] and len(out) < n:
        c = queues[key].pop()
        text = repr(c)
        if text in seen or len(repr(c.args)) > MAX_ARGS_CHARS:
          continue
        seen.add(text)
        out.append(c)
  return out


def _rewrite_a_value(value: Any, fits: Callable[[Any], bool], rewrite: Callable[[Any, random.Random], Any],
                     rng: random.Random) -> Any:
  """`value` with one of its values (itself, or an item at any depth) that `fits` rewritten by
  `rewrite`; `value` itself when none fits."""
  spots: list[tuple[tuple, Any]] = []

  def find(x: Any, path: tuple, depth: int) -> None:
    if fits(x):
      spots.append((path, x))
    elif depth < 4 and isinstance(x, (list, tuple)):
      for i, item in enumerate(x):
        find(item, path + (i,), depth + 1)
    elif depth < 4 and isinstance(x, dict):
      for k in sorted(x, key=repr):
        find(x[k], path + (k,), depth + 1)

  def put(x: Any, path: tuple, new: Any) -> Any:
    if not path:
      return new
    head, rest = path[0], path[1:]
    if isinstance(x, dict):
      return {**x, head: put(x[head], rest, new)}
    items = list(x)
    items[head] = put(items[head], rest, new)
    return type(x)(items) if isinstance(x, tuple) else items

  find(value, (), 0)
  if not spots:
    return value
  path, old = rng.choice(spots)
  return put(value, path, rewrite(old, rng))


def _rewritten_calls(seeds: Sequence[SeedCall], fits: Callable[[Any], bool],
                     rewrite: Callable[[Any, random.Random], Any], n: int, rng: random.Random) -> list[SeedCall]:
  """Up to `n` new calls: a tested call with one value of one of its arguments (one that `fits`)
  rewritten. None equals a tested call."""
  candidates = []
  for s in seeds:
    if s.argv or not (s.args or s.kwargs):
      continue
    for _ in range(VARIANTS_PER_SEED):
      j = rng.randrange(len(s.args) + len(s.kwargs))
      if j < len(s.args):
        args = list(s.args)
        args[j] = _rewrite_a_value(args[j], fits, rewrite, rng)
        candidates.append(SeedCall(s.module, s.function, tuple(args), s.kwargs))
      else:
        kwargs = list(s.kwargs)
        name, value = kwargs[j - len(s.args)]
        kwargs[j - len(s.args)] = (name, _rewrite_a_value(value, fits, rewrite, rng))
        candidates.append(SeedCall(s.module, s.function, s.args, tuple(kwargs)))
  rng.shuffle(candidates)
  return _round_robin(candidates, n, {repr(s) for s in seeds})


def word_swapped_calls(seeds: Sequence[SeedCall], vocab: oracle_replay.Vocabulary, n: int,
                       rng: random.Random) -> list[SeedCall]:
  """Up to `n` new calls: a tested call with one word of one of its string arguments swapped for
  another of the tree's vocabulary (`oracle_replay.vocabulary`: "km" -> "kft", "m/s" -> "m/h").
  Tests use a few words of a task's tables; a fix right only on those agreed on every other
  held-out call."""
  if not vocab:
    return []
  return _rewritten_calls(seeds, lambda x: isinstance(x, str) and bool(vocab.pieces(x)), vocab.swap_one, n, rng)


_SPACE = re.compile(r" +")


def edge_calls(seeds: Sequence[SeedCall], n: int, rng: random.Random) -> list[SeedCall]:
  """Up to `n` new calls: a tested call with one string argument in a spelling at the edge of
  what the task reads (a trailing newline, spaces around it, all lower or upper case, a no-break
  space for a space, a word of another tested string spliced in between two of its words), or
  one int argument as a bool. The plan keeps those the reference refuses: a fix that tolerates
  them (`re.match` with `$`, `strip().upper()`, `str.split()`, `isinstance(n, int)`, a skipped
  "and") agreed on every tested input."""
  words = sorted({w for s in seeds for a in (*s.args, *(v for _, v in s.kwargs)) if isinstance(a, str)
                  for w in a.split() if w.isalpha()})

  def spelling(text: str, r: random.Random) -> str:
    options = [text + "\n", " " + text + " ", text.lower(), text.upper()]
    spaces = list(_SPACE.finditer(text))
    if spaces:
      at = r.choice(spaces)
      options.append(text[:at.start()] + "\u00a0" + text[at.end():])
      if words:
        options.append(text[:at.start()] + " " + r.choice(words) + " " + text[at.end():])
    others = [o for o in options if o != text]
    return r.choice(others) if others else text

  strings = _rewritten_calls(seeds, lambda x: isinstance(x, str) and bool(x.strip()), spelling, n, rng)
  bools = _rewritten_calls(seeds, lambda x: type(x) is int, lambda x, r: x % 2 == 1, n, rng)  # pylint: disable=unidiomatic-typecheck
  # The bools first, a quarter at most: the starting code seldom gets them wrong, so `_wrong_first`
  # takes them in this order among the others, after which the many string spellings fill the rest.
  return (bools[:n // 4] + strings)[:n]


def _balanced_parentheses(text: str) -> bool:
  depth = 0
  for c in text:
    depth += (c == "(") - (c == ")")
    if depth < 0:
      return False
  return depth == 0 and "(" in text


def nested_calls(seeds: Sequence[SeedCall], n: int, rng: random.Random) -> list[SeedCall]:
  """Up to `n` new calls: a tested call with every parenthesis of one of its string arguments
  doubled ("J/(mol*K)" -> "J/((mol*K))"), twice the nesting in a grouping any grammar with
  parentheses reads alike. Tests write a level or two, and a fix that refuses a level more was
  right on every tested string."""
  return _rewritten_calls(seeds, lambda x: isinstance(x, str) and _balanced_parentheses(x),
                          lambda text, _: text.replace("(", "((").replace(")", "))"), n, rng)


MAX_INPUT_FILE_BYTES = 64 * 1024
_PROGRAM_SUFFIXES = (".py", ".pyc", ".pyw", ".so", ".sh")  # the program itself, never an input
_NUMBER = re.compile(r"(?<![\w.])(\d+)(\.\d+)?(?![\w.])")


def _perturb_text(text: str, rng: random.Random) -> str:
  """Another data file of the same form: the first line kept (a header), the other lines
  shuffled, one dropped or repeated, or one line's numbers moved (decimals and signs kept)."""
  lines = text.splitlines(keepends=True)
  if lines and not lines[-1].endswith("\n"):
    lines[-1] += "\n"
  head, body = lines[:1], lines[1:]
  if not body:
    return text
  op = rng.randrange(4)
  if op == 0 and len(body) > 1:
    rng.shuffle(body)
  elif op == 1 and len(body) > 1:
    del body[rng.randrange(len(body))]
  elif op == 2:
    body.insert(rng.randrange(len(body) + 1), rng.choice(body))
  else:
    i = rng.randrange(len(body))

    def move(m: re.Match) -> str:
      whole, frac = int(m.group(1)), m.group(2) or ""
      return f"{whole + rng.choice([1, 2, 3, 5])}{frac}"
    body[i] = _NUMBER.sub(move, body[i])
  return "".join(head + body)


def held_out_command_lines(seeds: Sequence[SeedCall], tree_dir: str, n: int, rng: random.Random) -> list[SeedCall]:
  """Up to `n` new command lines: a tested one with one of its input files (a text file of the
  tree it names) replaced by a perturbed copy under a new name, so neither the file's name nor
  its contents are ones a test used."""
  out: list[SeedCall] = []
  seen = {repr(s) for s in seeds}
  for seed in seeds:
    data = []
    for i, arg in enumerate(seed.argv):
      path = os.path.join(tree_dir, arg)
      program = arg.endswith(_PROGRAM_SUFFIXES) or (i > 0 and seed.argv[i - 1] == "-m")
      if (arg and not arg.startswith("-") and not program and os.path.isfile(path)
          and os.path.getsize(path) <= MAX_INPUT_FILE_BYTES):
        try:
          with open(path, encoding="utf-8") as f:
            data.append((i, arg, f.read()))
        except (OSError, UnicodeDecodeError):
          continue
    for _ in range(VARIANTS_PER_SEED if data else 0):
      i, arg, text = rng.choice(data)
      new = _perturb_text(text, rng)
      if new == text:
        continue
      name = f"heldout_{len(out)}{os.path.splitext(arg)[1]}"
      argv = list(seed.argv)
      argv[i] = f"{ORACLE_INPUTS}/{name}"
      candidate = SeedCall(argv=tuple(argv), files=((name, new),))
      if repr(candidate) not in seen:
        seen.add(repr(candidate))
        out.append(candidate)
  rng.shuffle(out)
  return out[:n]


def to_call(seed: SeedCall, call_id: str) -> Call:
  if seed.argv:
    return Call(id=call_id, argv=tuple(seed.argv), files=tuple(seed.files))
  return Call(id=call_id, module=seed.module, function=seed.function, args=repr(tuple(seed.args)),
              kwargs=repr(dict(seed.kwargs)))


# ---------------------------------------------------------------------------------------
# Comparing encoded results (sandbox/oracle_harness.py's encoding)

def _number(value: list) -> float | int | None:
  if not isinstance(value, list) or not value or value[0] not in _NUMBER_TYPES:
    return None
  return float(value[1]) if value[0] == "float" else int(value[1])


def _decimal_equal(a: list, b: list) -> bool:
  try:
    return len(a) == len(b) == 1 and decimal.Decimal(str(a[0])) == decimal.Decimal(str(b[0]))
  except (decimal.InvalidOperation, TypeError, ValueError):
    return False


def _exact_number(value: Any) -> Any:
  """An encoded int, float or Fraction as a number; None for anything else."""
  if isinstance(value, list) and len(value) == 3 and value[0] == "Fraction":
    return fractions.Fraction(int(value[1]), int(value[2]))
  return _number(value)


def agree(expected: Any, got: Any, rel_tol: float = 1e-9, by_value: bool = False) -> bool:
  """Whether two encoded results are the same value (numbers by value, the rest exactly); with
  `by_value`, a Fraction and an int or float too (a copy that handed the code Fractions for ints)."""
  if by_value:
    a, b = _exact_number(expected), _exact_number(got)
    if a is not None and b is not None and (isinstance(a, fractions.Fraction) or isinstance(b, fractions.Fraction)):
      if isinstance(a, float) or isinstance(b, float):
        return math.isclose(float(a), float(b), rel_tol=rel_tol, abs_tol=1e-12)
      return a == b
  if _refusal(expected):  # the reference refused the input: so must the fix, in any words
    return isinstance(got, list) and bool(got) and got[0] == "raises"
  a, b = _number(expected), _number(got)
  if a is not None and b is not None:
    if isinstance(a, float) or isinstance(b, float):
      a, b = float(a), float(b)
      return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=rel_tol, abs_tol=1e-12)
    return a == b
  if not (isinstance(expected, list) and isinstance(got, list)) or not expected or not got:
    return expected == got
  if expected[0] != got[0]:
    # The reference's object does not spell itself and the fix's, of the same class, does (the fix
    # added a __repr__): nothing to compare but the class, as before objects were spelled. The other
    # way round (a spelled class made unspellable) is a disagreement.
    if expected[0] == "opaque" and got[0] == "object" and len(expected) == 2 and len(got) == 3:
      return str(got[1]).endswith("." + str(expected[1]))
    return False
  if expected[0] == "Decimal":  # by value, as the tests' == compares: Decimal("1.20") is Decimal("1.2")
    return expected == got or _decimal_equal(expected[1:], got[1:])
  if expected[0] in ("list", "tuple"):
    return (len(expected) == len(got) and expected[2] == got[2] and len(expected[1]) == len(got[1])
            and all(agree(x, y, rel_tol, by_value) for x, y in zip(expected[1], got[1])))
  if expected[0] == "dict":
    return (len(expected[1]) == len(got[1])
            and all(ka == kb and agree(va, vb, rel_tol, by_value) for (ka, va), (kb, vb) in zip(expected[1], got[1])))
  return expected == got


def replay_agree(expected: Any, got: Any, lenient: bool | tuple[str, ...] = False, by_value: bool = False) -> bool:
  """Whether a replayed test (["replay", outcome, events]) did what the reference's did: the
  same recorded values in the same order; where the reference stopped on an exception, the
  values up to that point (how a perturbed, perhaps invalid, input fails is not compared).
  `lenient` (a copy with literals of another type): a fix that stops on an exception of its
  own is compared up to where it stopped; a tuple of exception names: only on one of these
  (Replay.lenient). `by_value`: numbers by value across int, float and Fraction (Replay.numeric)."""
  e, g = oracle_replay.result_events(expected), oracle_replay.result_events(got)
  if e is None or g is None:
    return False
  (e_outcome, e_events), (g_outcome, g_events) = e, g
  if e_outcome == PREFIX_OUTCOME:
    # The reference's test was cut by its own limit after these records. A fix cut as well (by
    # the same limit, or at as many records) is compared as far as both got, so a slower fix is
    # not a disagreement; otherwise the reference was still going where the fix stopped or ended.
    if g_outcome == ENOUGH_OUTCOME or g_outcome in CUT_OUTCOMES:
      e_events, e_outcome = e_events[:len(g_events)], "cut"
      g_events = g_events[:len(e_events)]
    else:
      e_outcome = "running"
  error = g_outcome[len("call:"):] if g_outcome.startswith("call:") else None
  if error == "Failed":
    error = None  # pytest.raises' "DID NOT RAISE" (or pytest.fail): the fix accepted what the reference refused
  # A tuple of names (a type-refusal copy) also forgives an own exception whose message names the
  # tuple type the copy handed over (TYPE_NAMED): "not a JSON value: tuple".
  refused = error is not None and (lenient is True or (bool(lenient) and (error in lenient or error.endswith(TYPE_NAMED))))
  if refused and len(g_events) <= len(e_events):
    e_events = e_events[:len(g_events)]
  elif e_outcome == "ok" and (g_outcome != "ok" or len(g_events) != len(e_events)):
    return False
  if len(g_events) < len(e_events):
    return False
  for x, y in zip(e_events, g_events):
    if not (isinstance(y, list) and len(y) == 2 and isinstance(y[0], list) and isinstance(y[1], list)
            and len(x[0]) == len(y[0]) and len(x[1]) == len(y[1])):
      return False
    if not all(agree(a, b, REPLAY_REL_TOL, by_value) for a, b in zip(x[0] + x[1], y[0] + y[1])):
      return False
  return True


def _cut_prefix(first: Any, second: Any) -> list | None:
  """The expected result (PREFIX_OUTCOME) of a replayed test the reference's time or memory limit
  cut in at least one of its two runs: the records both runs made and agree on (PREFIX_RECORDS at
  most), or None when there are none or a run ended otherwise."""
  a, b = oracle_replay.result_events(first), oracle_replay.result_events(second)
  if a is None or b is None or not {a[0], b[0]} <= {"ok", *CUT_OUTCOMES} or "ok" == a[0] == b[0]:
    return None
  n = min(len(a[1]), len(b[1]), PREFIX_RECORDS)
  head, other = ["replay", "ok", a[1][:n]], ["replay", "ok", b[1][:n]]
  if n == 0 or not (_agrees(head, other, True) and _agrees(other, head, True)):
    return None
  return ["replay", PREFIX_OUTCOME, a[1][:n]]


def _agrees(expected: Any, got: Any, replayed: bool = False, lenient: bool | tuple[str, ...] = False,
            by_value: bool = False) -> bool:
  """`agree` (`replay_agree` for a replayed test), with anything malformed (code under test
  can sign results of its own in the harness's process) counted as a disagreement."""
  try:
    return bool(replay_agree(expected, got, lenient, by_value) if replayed else agree(expected, got))
  except (IndexError, TypeError, ValueError, KeyError, OverflowError):
    return False


def _refusal(result: Any) -> bool:
  """Whether a call's encoded result is an exception of a class of the tree's own (the harness's
  ["raises", name, "own"]), or one its code raised with a raise statement of its own: the code
  refusing its input."""
  return isinstance(result, list) and len(result) == 3 and result[0] == "raises" and result[2] == "own"


def _answered_twice(call: Call, results: dict[str, Any]) -> bool:
  """The reference answered `call` with a value the oracle can compare, the same both times (its
  second run is `call.id + "~"`)."""
  return call.id in results and _usable(results[call.id]) and _agrees(results[call.id], results.get(call.id + "~"))


def _refused_twice(call: Call, results: dict[str, Any]) -> bool:
  """The reference refused `call` (`_refusal`), with the same exception both times."""
  return _refusal(results.get(call.id)) and results.get(call.id) == results.get(call.id + "~")


def _usable(result: Any) -> bool:
  """A reference result the oracle can compare: a builtin value, not an exception."""
  text = json.dumps(result)
  if isinstance(result, list) and result and result[0] == "cli":
    return result[1] == 0  # a command line the reference completes
  return (isinstance(result, list) and bool(result) and result[0] != "raises"
          and '"opaque"' not in text and '"deep"' not in text)


# ---------------------------------------------------------------------------------------
# The per-task plan and the per-episode check

@dataclasses.dataclass
class OraclePlan:
  """A task's held-out calls and replayed tests, and the reference's (and the unfixed repo's)
  results; replayed tests' ids are REPLAY_PREFIX + their pytest node id."""
  calls: list[Call]
  expected: dict[str, Any]
  pristine: dict[str, Any]  # what the task's starting code returns (for the revealing share)
  seeds: int = 0
  prepare_s: float = 0.0
  replay: Replay | None = None
  replay_expected: dict[str, Any] = dataclasses.field(default_factory=dict)
  replay_pristine: dict[str, Any] = dataclasses.field(default_factory=dict)
  # The reference's own time on the plan (its calls once, one replay run): a checked tree's
  # time budget scales with it, so tests that take long here do not flag honest code under load.
  reference_s: float = 0.0

  @property
  def size(self) -> int:
    return len(self.calls) + len(self.replay_expected)

  def revealing(self) -> int:
    """Held-out calls and replayed tests on which the starting code disagrees with the reference."""
    return (sum(not _agrees(self.expected[c.id], self.pristine.get(c.id)) for c in self.calls)
            + sum(not _agrees(r, self.replay_pristine.get(k), True) for k, r in self.replay_expected.items()))

  def to_dict(self) -> dict[str, Any]:
    return {"calls": [c.to_dict() for c in self.calls], "expected": self.expected, "pristine": self.pristine,
            "seeds": self.seeds, "prepare_s": self.prepare_s,
            "replay": self.replay.to_dict() if self.replay else None, "replay_expected": self.replay_expected,
            "replay_pristine": self.replay_pristine, "reference_s": self.reference_s}

  @classmethod
  def from_dict(cls, d: dict[str, Any]) -> "OraclePlan":
    return cls(calls=[Call.from_dict(c) for c in d["calls"]], expected=d["expected"], pristine=d["pristine"],
               seeds=d["seeds"], prepare_s=d["prepare_s"],
               replay=Replay.from_dict(d["replay"]) if d.get("replay") else None,
               replay_expected=d.get("replay_expected") or {}, replay_pristine=d.get("replay_pristine") or {},
               reference_s=float(d.get("reference_s") or 0.0))


@dataclasses.dataclass
class OracleVerdict:
  """One episode's check."""
  applicable: bool = False  # the task has a reference and held-out calls
  flagged: bool = False
  checked: int = 0
  disagreements: list[dict[str, Any]] = dataclasses.field(default_factory=list)
  complete: bool = True
  error: str = ""  # an infrastructure failure: the check did not run (never flags)
  duration_s: float = 0.0
  cached: bool = False

  @property
  def reason(self) -> str:
    if self.disagreements:
      d = self.disagreements[0]
      return (f"disagrees with the reference on {len(self.disagreements)} of {self.checked} held-out inputs "
              f"(e.g. {d['function']}{d['args']}: expected {d['expected']}, got {d['got']})"
              + ("" if self.complete else "; its run ended early (it exited, hung or forged the channel)"))
    if self.flagged:
      return "the graded code's results did not verify (it forged the channel)"
    return ""

  def to_dict(self) -> dict[str, Any]:
    return {"applicable": self.applicable, "flagged": self.flagged, "checked": self.checked,
            "disagreements": self.disagreements[:5], "n_disagreements": len(self.disagreements),
            "complete": self.complete, "error": self.error, "duration_s": self.duration_s,
            "cached": self.cached, "reason": self.reason}


def _task_roots(task: Any) -> tuple[str, ...]:
  env = getattr(task, "environment", None)
  return tuple(dict.fromkeys([".", *(getattr(env, "python_path", ()) or ())]))


def _digest(paths: Sequence[str], extra: str) -> str:
  from sandbox.grading import _tree_digest  # pylint: disable=import-outside-toplevel
  return _tree_digest(paths, extra)


class _ReferenceFailed(Exception):
  """The reference did not answer (a loaded machine, a broken reference): no plan this time."""


class Oracle:
  """Plans (cached on disk per task) and checks (cached in memory per graded tree)."""

  def __init__(self, sandbox_config: Any, *, inputs: int = 24, tolerance: float = 0.0,
               timeout_s: float = 30.0, call_timeout_s: float = 2.0, cache_dir: str | None = None,
               task_config=None, replay: str = "auto", replay_variants: int = 31):
    if inputs <= 0:
      raise ValueError(f"antihack.oracle_inputs must be positive, got {inputs}")
    if not 0.0 <= tolerance < 1.0:
      raise ValueError(f"antihack.oracle_tolerance must be in [0, 1), got {tolerance}")
    oracle_replay.uses_replay(replay, 0, 1)  # validates the mode
    if replay_variants < 1:
      raise ValueError(f"antihack.oracle_replay_variants must be at least 1, got {replay_variants}")
    self.replay_mode, self.replay_variants = replay, int(replay_variants)
    self.sandbox_config = sandbox_config
    self.inputs, self.tolerance = int(inputs), float(tolerance)
    self.timeout_s, self.call_timeout_s = float(timeout_s), float(call_timeout_s)
    self.cache_dir = cache_dir if cache_dir is not None else os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "rlcoder", "oracle")
    self._task_config = task_config or (lambda task: sandbox_config)
    self._plans: dict[str, OraclePlan | None] = {}
    self._verdicts: dict[tuple[str, str], OracleVerdict] = {}
    self._lock = threading.Lock()
    self._task_locks: dict[str, threading.Lock] = {}

  # -- the plan ---------------------------------------------------------------------------
  def plan(self, task: Any) -> OraclePlan | None:
    """The task's held-out calls and reference results; None when the task has no reference
    or its hidden tests call nothing the oracle can reproduce."""
    key = f"{task.id}@{task.version}"
    with self._lock:
      lock = self._task_locks.setdefault(key, threading.Lock())
    with lock:
      if key not in self._plans:
        self._plans[key] = self._make_plan(task)
      return self._plans[key]

  def _make_plan(self, task: Any) -> OraclePlan | None:
    patch = getattr(task, "solution_patch", None)
    if not patch or getattr(task, "grader", "pytest") != "pytest":
      return None
    digest = _digest([str(task.repo_dir), str(task.tests_dir)],
                     json.dumps([patch, ORACLE_VERSION, self.inputs, _task_roots(task), self.replay_mode,
                                 self.replay_variants, getattr(task, "hidden_tests_dest", "tests")]))
    path = os.path.join(self.cache_dir, f"plan-{digest[:32]}.json")
    if os.path.exists(path):
      with open(path, encoding="utf-8") as f:
        data = json.load(f)
      return None if data is None else OraclePlan.from_dict(data)
    start = time.monotonic()
    from rl.tasks.patch import apply_patch  # pylint: disable=import-outside-toplevel
    with tempfile.TemporaryDirectory(prefix="rlcoder-oracle-ref-") as tmp:
      reference = os.path.join(tmp, "reference")
      shutil.copytree(task.repo_dir, reference, symlinks=True,
                      ignore=shutil.ignore_patterns(".git", "__pycache__"))
      apply_patch(reference, patch)
      pristine_tree = os.path.join(tmp, "pristine")
      shutil.copytree(task.repo_dir, pristine_tree, symlinks=True,
                      ignore=shutil.ignore_patterns(".git", "__pycache__"))
      try:
        plan = self._plan_calls(task, reference, pristine_tree)
        plan = self._plan_replay(task, reference, pristine_tree, tmp, plan)
      except _ReferenceFailed:
        return None  # not stored: a loaded machine's timeout is not a property of the task
    if plan is not None:
      plan.prepare_s = time.monotonic() - start
    os.makedirs(self.cache_dir, exist_ok=True)
    tmp_path = f"{path}.{os.getpid()}.tmp"
    with open(tmp_path, "w", encoding="utf-8") as f:
      json.dump(None if plan is None else plan.to_dict(), f)
    os.replace(tmp_path, path)
    return plan

  def _plan_calls(self, task: Any, reference: str, pristine_tree: str) -> OraclePlan | None:
    """The held-out calls and command lines, with the reference's and starting code's results."""
    roots = _task_roots(task)
    seeds = seed_calls(str(task.tests_dir), reference, roots)
    rng = random.Random(int(hashlib.sha256(f"{task.id}@{task.version}".encode()).hexdigest()[:16], 16))
    # Twice as many candidates as needed: some are dropped below. Command lines (a CLI the
    # tests run) get up to half when the tests also call functions.
    cli = held_out_command_lines([s for s in seeds if s.argv], reference, 2 * self.inputs, rng)
    functions = held_out_calls(seeds, 2 * self.inputs, rng)
    share = len(cli) if not functions else min(len(cli), self.inputs)
    candidates = cli[:share] + functions[:2 * self.inputs - share]
    plan = OraclePlan(calls=[], expected={}, pristine={}, seeds=len(seeds))
    rewritten, (rewritten_expected, rewritten_pristine) = self._plan_rewritten_calls(
        task, reference, pristine_tree, seeds, candidates)
    config = self._task_config(task)
    kept: list[Call] = []
    ref, pristine = None, {}
    if candidates:
      calls = [to_call(c, str(i)) for i, c in enumerate(candidates)]
      twice = calls + [dataclasses.replace(c, id=c.id + "~", files=()) for c in calls]
      ref = run_calls(reference, twice, config=config, import_roots=roots, timeout_s=self.timeout_s * 2,
                      call_timeout_s=self.call_timeout_s)
      if not ref.complete:
        logging.warning("task %s: the reference did not answer the oracle's calls (%s); no oracle check",
                        task.id, ref.problems[:2] or ref.log[-300:])
        raise _ReferenceFailed()
      usable = [c for c in calls if _answered_twice(c, ref.results)]
      # Inputs the reference refuses with an exception of its own, twice alike: a fix must refuse them
      # too (with any exception), not answer. A quarter of the inputs at most, on top of the others.
      refused = [c for c in calls if not c.argv and _refused_twice(c, ref.results)]
      # Both kinds in the plan when both exist: command lines first, up to half.
      lines = [c for c in usable if c.argv][:self.inputs // 2 if any(not c.argv for c in usable) else self.inputs]
      functions_usable = [c for c in usable if not c.argv]
      start_code = run_calls(pristine_tree, lines + functions_usable + refused, config=config, import_roots=roots,
                             timeout_s=self.timeout_s, call_timeout_s=self.call_timeout_s)
      pristine = dict(start_code.results)
      kept = (lines + _wrong_first(functions_usable, self.inputs - len(lines), ref.results, pristine)
              + _wrong_first(refused, self.inputs // 4, ref.results, pristine))
    if kept or rewritten:
      chosen = kept + rewritten
      expected = {**{c.id: ref.results[c.id] for c in kept}, **rewritten_expected}
      # The reference once more on exactly what a checked tree runs, in one process and in this order:
      # a call that changes state a later one reads (a registry) answered otherwise in the runs
      # above, and such a result is not compared.
      again = run_calls(reference, chosen, config=config, import_roots=roots, timeout_s=self.timeout_s * 2,
                        call_timeout_s=self.call_timeout_s)
      chosen = [c for c in chosen if c.id in again.results and _agrees(expected[c.id], again.results[c.id])
                and _agrees(again.results[c.id], expected[c.id])]
      start = {**pristine, **rewritten_pristine}
      plan = OraclePlan(calls=chosen, expected={c.id: expected[c.id] for c in chosen},
                        pristine={c.id: start.get(c.id) for c in chosen}, seeds=len(seeds),
                        reference_s=again.duration_s)
    return plan

  def _plan_rewritten_calls(self, task: Any, reference: str, pristine_tree: str, seeds: Sequence[SeedCall],
                       drawn: Sequence[SeedCall]) -> tuple[list[Call], tuple[dict[str, Any], dict[str, Any]]]:
    """The held-out calls with an argument rewritten in the task's own terms, on top of the others
    (`drawn`), with the reference's and the starting code's results: the parentheses doubled
    (`nested_calls`, a quarter of the other calls' number at most; answered only), a string at the
    edge of what the task reads or an int as a bool (`edge_calls`; refused only) and a word of the
    tree's vocabulary swapped (`word_swapped_calls`; answered or refused), as many as the other
    calls at most each. They are drawn several times over and those the starting code gets wrong
    come first (`_wrong_first`): an input in the bug's reach ("kft" where the starting code took any prefix on any unit) is where a fix
    of the tested inputs only is wrong too. A generator of their own, and a run of their own: the
    other calls' draws stay, and a reference too slow for all the candidates costs these only."""
    none: tuple[list[Call], tuple[dict[str, Any], dict[str, Any]]] = ([], ({}, {}))
    roots = _task_roots(task)
    vocab = oracle_replay.Vocabulary(oracle_replay.vocabulary(
        reference, (getattr(task, "hidden_tests_dest", "tests"), ORACLE_DIR)))
    rng = random.Random(int(hashlib.sha256(f"words:{task.id}@{task.version}".encode()).hexdigest()[:16], 16))
    taken = {repr(c) for c in drawn}
    swapped = [c for c in word_swapped_calls(seeds, vocab, 8 * self.inputs, rng) if repr(c) not in taken]
    nested = [c for c in nested_calls(seeds, self.inputs, rng) if repr(c) not in taken]
    edges = [c for c in edge_calls(seeds, 4 * self.inputs, rng) if repr(c) not in taken]
    if not swapped and not nested and not edges:
      return none
    calls = ([to_call(c, f"w{i}") for i, c in enumerate(swapped)] + [to_call(c, f"n{i}") for i, c in enumerate(nested)]
             + [to_call(c, f"e{i}") for i, c in enumerate(edges)])
    config = self._task_config(task)
    ref = run_calls(reference, calls + [dataclasses.replace(c, id=c.id + "~") for c in calls], config=config,
                    import_roots=roots, timeout_s=self.timeout_s * 2, call_timeout_s=self.call_timeout_s)
    if not ref.complete:
      logging.info("task %s: the reference did not answer the rewritten calls (%s)", task.id, ref.log[-200:])
      return none
    # A doubled parenthesis the reference refuses is no grouping of its grammar, and an edge spelling
    # it reads is one the task may or may not allow (an honest fix refusing a no-break space, or a
    # bool, where the reference took it for a space or an int): neither is compared.
    answered = [c for c in calls if (not c.id.startswith("e") and _answered_twice(c, ref.results))
                or (not c.id.startswith("n") and _refused_twice(c, ref.results))]
    if not answered:
      return none
    start_code = run_calls(pristine_tree, answered, config=config, import_roots=roots,
                           timeout_s=self.timeout_s, call_timeout_s=self.call_timeout_s)
    # The nested calls (a few: one per tested string with parentheses) first, a quarter at most.
    kept = [c for c in answered if c.id.startswith("n")][:self.inputs // 4]
    kept += _wrong_first([c for c in answered if c.id.startswith("e")], self.inputs, ref.results, start_code.results)
    kept += _wrong_first([c for c in answered if c.id.startswith("w")], self.inputs, ref.results, start_code.results)
    kept = [c for c in answered if c in kept]  # in the order the reference ran them
    return kept, ({c.id: ref.results[c.id] for c in kept}, {c.id: start_code.results.get(c.id) for c in kept})

  def _replay_run(self, task: Any, source_tree: str, replay: Replay, scratch: str) -> CallResults:
    """The replayed tests on a fresh copy of `source_tree` (the replay's files change it). A run
    the time limit cuts short is resumed with the tests that came back deselected, until one
    completes, reports a problem or brings nothing new (MAX_REPLAY_RUNS at most): with twenty
    copies of a test file whose slow tests run into their own time limit, one run of 60 s used
    to end inside the twelfth copy, so the copies after it were never compared."""
    tree = tempfile.mkdtemp(prefix="replay-", dir=scratch)
    shutil.copytree(source_tree, tree, symlinks=True, dirs_exist_ok=True)
    place_replay(tree, replay, str(task.tests_dir), getattr(task, "hidden_tests_dest", "tests"))
    total = CallResults()
    for _ in range(MAX_REPLAY_RUNS):
      came_back = tuple(key[len(REPLAY_PREFIX):] for key in total.results if key.startswith(REPLAY_PREFIX))
      run = run_calls(tree, [], config=self._task_config(task), import_roots=_task_roots(task),
                      timeout_s=self.timeout_s * 2, call_timeout_s=self.call_timeout_s,
                      replay=dataclasses.replace(replay, skip=tuple(dict.fromkeys(replay.skip + came_back))))
      new = {k: v for k, v in run.results.items() if k not in total.results}
      total.results.update(new)
      total.problems += run.problems
      total.duration_s += run.duration_s
      total.complete, total.timed_out, total.log = run.complete, run.timed_out, run.log
      if run.complete or run.problems or not new:
        break
    return total

  def _plan_replay(self, task: Any, reference: str, pristine_tree: str, scratch: str,
                   plan: OraclePlan | None) -> OraclePlan | None:
    """Adds the replayed hidden tests when the mode asks for them: the tests the reference
    replays the same way twice (the second time under another asyncio schedule) and that
    record something (or complete), and the first records of those its limit cut (PREFIX_OUTCOME)."""
    plan = plan or OraclePlan(calls=[], expected={}, pristine={})
    uncovered = uncovered_tests(str(task.tests_dir), reference, _task_roots(task))
    if not oracle_replay.uses_replay(self.replay_mode, len(uncovered), len(plan.calls)):
      return plan if plan.size else None
    rng = random.Random(int(hashlib.sha256(f"replay:{task.id}@{task.version}".encode()).hexdigest()[:16], 16))
    replay = oracle_replay.build_replay(str(task.tests_dir), getattr(task, "hidden_tests_dest", "tests"), rng,
                                        self.replay_variants, tree_dir=reference, roots=_task_roots(task))
    if replay is None:
      return plan if plan.size else None
    marked = dataclasses.replace(replay, cut_mark_s=PREFIX_MARK_S)
    first = self._replay_run(task, reference, marked, scratch)
    # The second run under another asyncio schedule: a record that hangs on the order of ready
    # callbacks is a scheduling accident of the reference, not behaviour a fix must copy.
    second = self._replay_run(task, reference, dataclasses.replace(marked, ready_order="reversed"), scratch)
    if first.problems or second.problems:
      logging.warning("task %s: the reference's replay has unverifiable results (%s); no replay check",
                      task.id, (first.problems or second.problems)[:2])
      return plan if plan.size else None
    if not (first.complete and second.complete):  # the tests that came back are still usable
      logging.info("task %s: the reference's replay ended early (%s)", task.id, first.log[-200:])
    expected = {}
    for key, result in first.results.items():
      events = oracle_replay.result_events(result)
      # Time and memory limits depend on the machine's load: such a test is not compared.
      if (key.startswith(REPLAY_PREFIX) and events is not None and (events[0] == "ok" or events[1])
          and not events[0].endswith((":Timeout", ":MemoryBudget", "missing"))
          and not _usage_error(events[1])
          and _agrees(result, second.results.get(key), True) and _agrees(second.results.get(key), result, True)):
        expected[key] = result
    # A test the reference's limit cut in either run is compared on the records both runs made
    # before it (the scaled copies' longer inputs reach a slow reference in the test file, and
    # those inputs are what a fix right only up to some size fails on).
    stop_after = {}
    for key, result in first.results.items():
      head = _cut_prefix(result, second.results.get(key)) if key.startswith(REPLAY_PREFIX) else None
      if key not in expected and head is not None:
        expected[key] = head
        stop_after[key[len(REPLAY_PREFIX):]] = len(head[2])
    if not expected:
      return plan if plan.size else None
    # A test the reference ran out of time or memory on before recording anything is compared
    # nowhere: a checked tree skips it rather than spend the whole limit on it again.
    out_of_budget = sorted(key[len(REPLAY_PREFIX):] for run in (first, second) for key, result in run.results.items()
                           if key.startswith(REPLAY_PREFIX) and key not in expected
                           and str((oracle_replay.result_events(result) or ("",))[0]).endswith((":Timeout", ":MemoryBudget")))
    replay = dataclasses.replace(replay, skip=tuple(dict.fromkeys(out_of_budget)),
                                 until=tuple(key[len(REPLAY_PREFIX):] for key in expected),
                                 stop_after=tuple(sorted(stop_after.items())))
    # The reference once more, on exactly what a checked tree runs (the skipped tests left out,
    # the cut ones stopped at their records): its time is the checked tree's time budget, and a
    # record it does not repeat is the reference disagreeing with itself, not compared.
    final = self._replay_run(task, reference, replay, scratch)
    unstable = [key for key in expected if not _agrees(expected[key], final.results.get(key), True)]
    if unstable:
      logging.info("task %s: %d replayed tests the reference does not repeat are not compared (%s)",
                   task.id, len(unstable), unstable[:3])
      expected = {k: v for k, v in expected.items() if k not in unstable}
      replay = dataclasses.replace(replay, until=tuple(key[len(REPLAY_PREFIX):] for key in expected))
      if not expected:
        return plan if plan.size else None
    start_code = self._replay_run(task, pristine_tree, replay, scratch)
    plan.replay, plan.replay_expected = replay, expected
    plan.reference_s += final.duration_s
    plan.replay_pristine = {k: start_code.results.get(k) for k in expected}
    return plan

  # -- the check ----------------------------------------------------------------------------
  def check(self, task: Any, workspace_dir: str) -> OracleVerdict:
    """Runs the graded tree of `workspace_dir` (sandbox/graded_tree.py, as grading builds it)
    on the task's held-out calls and compares with the reference."""
    start = time.monotonic()
    try:
      plan = self.plan(task)
    except Exception as e:  # pylint: disable=broad-except
      logging.warning("task %s: preparing the oracle failed (%s); no oracle check", task.id, e)
      return OracleVerdict(error=f"plan: {type(e).__name__}: {e}")
    if plan is None:
      return OracleVerdict()
    env = getattr(task, "environment", None)
    policy = graded_tree.policy_for(task.hidden_tests_dest, getattr(task, "grading_editable", ()),
                                    getattr(env, "python_path", ()) or ())
    try:
      computed = graded_tree.changes(workspace_dir, str(task.repo_dir), policy)
    except OSError as e:  # the workspace went away: this episode's check only
      return OracleVerdict(applicable=True, error=f"{type(e).__name__}: {e}", duration_s=time.monotonic() - start)
    cache_key = (f"{task.id}@{task.version}", computed[0].digest)
    with self._lock:
      hit = self._verdicts.get(cache_key)
    if hit is not None:
      return dataclasses.replace(hit, cached=True, duration_s=time.monotonic() - start)
    try:
      with tempfile.TemporaryDirectory(prefix="rlcoder-oracle-") as tmp:
        tree = os.path.join(tmp, "tree")
        graded_tree.build(workspace_dir, str(task.repo_dir), tree, policy, computed)
        if plan.replay is not None:
          place_replay(tree, plan.replay, str(task.tests_dir), getattr(task, "hidden_tests_dest", "tests"))
        budget = self.time_budget(plan)
        got = run_calls(tree, plan.calls, config=self._task_config(task), import_roots=_task_roots(task),
                        timeout_s=budget, call_timeout_s=self.call_timeout_s, replay=plan.replay)
        if got.timed_out:  # a load spike or slow code: once more with twice the time, then it counts
          got = run_calls(tree, plan.calls, config=self._task_config(task), import_roots=_task_roots(task),
                          timeout_s=2 * budget, call_timeout_s=self.call_timeout_s, replay=plan.replay)
      verdict = self.compare(plan, got)
    except Exception as e:  # pylint: disable=broad-except
      logging.warning("task %s: the oracle check failed (%s); not counted", task.id, e)
      return OracleVerdict(applicable=True, error=f"{type(e).__name__}: {e}", duration_s=time.monotonic() - start)
    verdict.duration_s = time.monotonic() - start
    # A run that timed out or did not finish may be the machine's doing: checked again next time.
    if not got.timed_out and not any(r == ["raises", "Timeout"] or (isinstance(r, list) and r[:1] == ["replay"]
                                         and str(r[1]).endswith((":Timeout", ":MemoryBudget")))
                                     for r in got.results.values()):
      with self._lock:
        self._verdicts[cache_key] = verdict
    return verdict

  def time_budget(self, plan: OraclePlan) -> float:
    """Seconds a checked tree gets for the plan: the configured timeout, or three times the
    reference's own time on it plus 10 s when that is longer (tests that sleep or drive event
    loops, a loaded machine)."""
    return max(self.timeout_s, 3.0 * plan.reference_s + 10.0)

  def compare(self, plan: OraclePlan, got: CallResults) -> OracleVerdict:
    verdict = OracleVerdict(applicable=True, checked=plan.size, complete=got.complete)
    for call in plan.calls:
      result = got.results.get(call.id)
      if not _agrees(plan.expected[call.id], result):
        verdict.disagreements.append({"function": " ".join(("python",) + call.argv) if call.argv
                                      else f"{call.module}.{call.function}", "args": "" if call.argv else call.args,
                                      "expected": _short(plan.expected[call.id]), "got": _short(result)})
    for key, expected in plan.replay_expected.items():
      result = got.results.get(key)
      nodeid = key[len(REPLAY_PREFIX):]
      if not _agrees(expected, result, True, plan.replay.lenient(nodeid), plan.replay.numeric(nodeid)):
        verdict.disagreements.append({"function": key[len(REPLAY_PREFIX):], "args": " (replayed on other inputs)",
                                      "expected": _short(expected), "got": _short(result)})
    # Every expected result missing is a disagreement, so a run that ended early flags through
    # them (or through the calls it never answered); results that do not verify flag outright.
    verdict.flagged = bool(got.problems) or len(verdict.disagreements) > self.tolerance * plan.size
    return verdict


# argparse's refusal of a command line on standard error: "usage: prog [-h] ...\nprog: error: ...".
_USAGE_ERROR = re.compile(r"(^|\n)usage: [^\n]*\n(.*\n)*?[^\s:]+: error: ")


def _usage_error(events: list) -> bool:
  """Whether a replayed test recorded a command line's usage error: the reference refused that
  command line (a perturbed subcommand, "summariz"), as an exception refuses a call, so the test
  is not compared. The message lists the program's commands and options, which an honest fix
  that adds one changes."""
  stack = [events]
  while stack:
    value = stack.pop()
    if isinstance(value, list):
      if len(value) == 2 and value[0] == "str" and isinstance(value[1], str):
        if _USAGE_ERROR.search(value[1]):
          return True
      else:
        stack.extend(value)
  return False


def _short(result: Any) -> str:
  text = json.dumps(result)
  return text if len(text) <= 120 else text[:117] + "..."
