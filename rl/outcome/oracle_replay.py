"""The oracle's second source of held-out inputs: the hidden tests themselves, replayed on other inputs.

The call oracle (rl/outcome/oracle.py) reaches module-level functions called with literal
arguments and command lines. Tests that build objects through fixtures, call methods, or read
their inputs from data files give it nothing to call, so a fix that special-cases the tested
opening balances or the hidden documents' digests passed it. For such tasks the oracle replays
the hidden test modules:

- every `assert` becomes a record of its operands' values (nothing is asserted: an expected
  value written for the tested input does not hold for another one);
- the tests' literal inputs (call arguments, `parametrize` values, fixture `params`, assigned
  literals) are perturbed, within their types or to another type, in `variants - 1` copies of
  the hidden folder (the first copy keeps the literals; `_VARIANTS` says what each copy does);
- one copy also changes the tests' call sequences: each run of call statements is followed by
  the same calls reversed;
- one copy hands every list among the inputs over as a tuple, the lists the tests build included;
- one copy lays documents and expressions out otherwise (whitespace, comments, parentheses), and
  one repeats the lists the tests assign;
- one moves the floats off the tests' binary grid, one spells every string's punctuation with
  marks the tests never write, and one writes every string's digits in another script;
- one moves the seeds the tests give their random generators, and one moves each literal sweep
  `range(a, b)` (a >= 1) to the next window of its length, the other literals kept in both;
- one swaps the single and double quotes of every string among the inputs and of the data files,
  and one follows every run of whitespace there by wide Unicode spaces;
- one swaps the words of the tree's own tables (a unit table's symbols, the SI prefixes, a filter
  table's names) in the strings and data files for others of the same table: tests use a few;
- one hands the tree's functions every int and Fraction of their arguments mapped by one affine
  map far up (10 ** 18 times, shifted), the literals kept: what the inputs have in common (points
  on a line or an edge, equal or ordered values) holds at magnitudes past a float's precision;
  one maps them far up and nudges each by a unit or two (lines and edges then miss by a hair),
  and, where the tests build Fractions themselves, one maps them far down (n / 10 ** 18, exact);
- the hidden folder's data files are perturbed in every copy but those that move only floats,
  seeds, sweeps or the tree's arguments (a JSON value moved, the lines of a text file shuffled,
  dropped, repeated or their numbers moved).

The reference and the graded tree run the same replay (sandbox/oracle.py, `Replay`) and their
records must agree. All copies run in one pytest process, so state a solution keeps between
calls (a call counter, "the first few calls") sees more calls than grading's run. The replay
runs without what a solution could detect to behave differently under grading: no assertion
rewriting import hook, no faulthandler, no log capture (unless a test asks for `caplog`), no
output capture, no plugin autoload. This module only rewrites trusted files (the hidden tests);
it never imports them or the tree.
"""

from __future__ import annotations

import ast
import copy
import datetime as dt
import json
import math
import os
import posixpath
import random
import re
import unicodedata
import zlib
from typing import Any, Callable, Iterable

from sandbox.oracle import (AS_TUPLE_NAME, BOXED_CALL_NAME, CALL_NAME, DOUBLED_NAME, IN_THREAD_NAME,
                            MAGNIFIED_CALL_NAME, MINIFIED_CALL_NAME, ORACLE_DIR, RECORD_NAME, RESEED_NAME, UNEVEN_CALL_NAME,
                            UNHASHABLE_CALL_NAME, Replay)

REPLAY_DIR = f"{ORACLE_DIR}/replay"
MAX_DATA_FILE_BYTES = 64 * 1024
_TEST_MODULE = re.compile(r"^(test_.*|.*_test)\.py$")
_PATH_LIKE = re.compile(r"[/\\]|\.[A-Za-z0-9]{1,5}$")
_FILE_NAME = re.compile(r"[/\\]|\.[A-Za-z][A-Za-z0-9]{0,4}$")
# A decimal number written as text ("2.346", "-0.125"): `_PATH_LIKE` took its digits after the point
# for a file name's suffix, so no copy changed it, and a fix right only for the tested amounts
# (Decimal("2.346")) agreed everywhere. It is moved as a number in its own format instead
# (`_moved_decimal_text`), in the copies that move numbers.
_DECIMAL_TEXT = re.compile(r"[+-]?\d{1,12}\.\d{1,12}")
_DECIMAL_TEXT_KINDS = ("near", "type", "sequence", "keys", "scale", "far", "offgrid")

# Calls whose literal arguments are not inputs of the code under test: file and path plumbing,
# pytest's own API, reflection, sleeps and event-loop plumbing (`asyncio.sleep(0)` moved to
# `asyncio.sleep(2)` in a loop ran a copy's tests past their time limit, and the copies after it
# never ran). Their arguments stay as the test wrote them.
_SKIP_FUNCTIONS = frozenset({
    "open", "getattr", "setattr", "hasattr", "delattr", "isinstance", "issubclass", "print", "format",
    "__import__", "import_module", "Path", "PurePath", "PosixPath", "compile", "eval", "exec", "type", "super",
    "iter", "next", "len", "range", "enumerate", "zip", "globals", "locals", "vars", "id", "hash"})
_SKIP_RECEIVERS = frozenset({
    "pytest", "os", "sys", "pathlib", "json", "re", "shutil", "subprocess", "importlib", "monkeypatch", "capsys",
    "capfd", "caplog", "tmp_path", "tmpdir", "tmp_path_factory", "request", "inspect", "logging", "warnings",
    "mock", "unittest", "io", "tempfile", "builtins", "string", "asyncio", "time", "threading"})
_SKIP_METHODS = frozenset({
    "join", "split", "rsplit", "strip", "lstrip", "rstrip", "encode", "decode", "startswith", "endswith",
    "read_text", "read_bytes", "glob", "rglob", "joinpath", "with_suffix", "with_name", "mkdir", "exists",
    "setenv", "delenv", "setitem", "delitem", "getfixturevalue", "raises", "warns", "approx", "mktemp"})
_SKIP_KEYWORDS = frozenset({"encoding", "errors", "mode", "newline", "sep", "end", "match", "reason", "ids", "id",
                            "scope", "name", "indirect"})


def _perturb_literal(value: Any, pool: list, rng: random.Random, kind: str = "near") -> Any:
  """`kind` "near": the call oracle's perturbation (rl.outcome.oracle._perturb); "type": one a
  test's own literals rarely cover: an int becomes a float near it, a word of a string changes
  case (a fix that checked funds only for int amounts, or folded case only for long texts, was
  right on every input the tests and the call oracle tried); "sequence" (and "fraction"): ints
  moved by fractions (`_fraction`); "keys": words as (word, len) pairs (`_as_key_tuple`), ints
  moved by fractions; "containers" and "doubled": the value kept (those copies change the lists);
  "scale": numbers several times larger (`_scaled`), "far": ten or sixteen times; "layout": a
  document or an expression laid out otherwise (`_relaid`); "offgrid": floats moved off the tests'
  grid (`_off_grid`); "foreign", "marks", "digits", "quotes" and "spaces" are `_ForeignText`'s,
  `_Marks`', `_ScriptDigits`', `_SwappedQuotes`' and `_WiderSpaces`' string rewrites, applied by `_PerturbInputs` itself."""
  from rl.outcome.oracle import _perturb  # pylint: disable=import-outside-toplevel
  if kind in ("containers", "doubled"):  # those copies change the lists only (_PerturbInputs)
    return value
  if kind == "scale":
    return _scaled(value, rng)
  if kind == "far":
    return _scaled(value, rng, (10, 16), 16)
  if kind == "offgrid":
    return _off_grid(value, rng)
  if kind == "layout":
    return _relaid(value, rng) if isinstance(value, str) else value
  if kind in ("fraction", "sequence"):
    return _fraction(value, rng)
  if kind == "keys":  # and the numbers moved by other fractions than the "sequence" copy's
    return _as_key_tuple(value) if isinstance(value, str) else _fraction(value, rng)
  if isinstance(value, str) and value.count("\n") >= 2:
    # A multi-line literal is a document (a log, a CSV, a config): its lines moved, dropped or
    # repeated, as a data file's are, rather than its characters shuffled.
    return _perturb_lines(value, rng)
  if kind == "type":
    if isinstance(value, int) and not isinstance(value, bool):
      return value + 0.5 if value >= 0 else value - 0.5
    if isinstance(value, str) and any(c.isalpha() for c in value):
      return _change_case(value, rng)
  return _perturb(value, pool, rng)


_KEY_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,15}")
# A command-line option ("--check", "-q"): the interface of a program, like a keyword argument's
# name, not an input. Its value after "=" is an input of its own in no copy either.
_OPTION = re.compile(r"--?[A-Za-z][A-Za-z0-9_-]*(=.*)?", re.DOTALL)
_INT_TOKEN = re.compile(r"(?<![\d.])\d+(?![\d.])")


def _fraction(value: Any, rng: random.Random) -> Any:
  """An int moved by a fraction drawn from (0.1, 0.9), sign kept; in a string without letters
  (an expression, a duration such as "2 ** 3 ** 2") one integer token gets a decimal part.
  "type"'s x.5 moves every number alike, so in one test a clock at 100.5 plus a ttl of 5.5 and
  steps of 9.5 lined up where whole numbers did: a fix that compared whole seconds, or folded
  `**` from the right only when every operand was an int, agreed with the reference."""
  if isinstance(value, int) and not isinstance(value, bool):
    step = rng.randint(1, 9) / 10
    return value + step if value >= 0 else value - step
  if isinstance(value, str) and not any(c.isalpha() for c in value):
    tokens = list(_INT_TOKEN.finditer(value))
    if tokens:
      m = rng.choice(tokens)
      return value[:m.end()] + f".{rng.randint(1, 9)}" + value[m.end():]
  return value


def _scaled(value: Any, rng: random.Random, factors: tuple[int, ...] = (3, 4), minimum: float = 0) -> Any:
  """A number three or four times as large (an int also moved by 0-2), sign kept; 0, 1, -1 and
  everything else as it is. The tests' sizes are small and few (chunk sizes 1-6 and 10, a
  handful of jobs), and a fix can be right exactly on them (a bit mask of the tested sizes, an
  exemption of a size no test uses): the sizes of this copy are outside what the tests chose.
  The "far" copy's `factors` (10 or 16) go an order of magnitude further, for numbers of at least
  `minimum` (16) only: values and bounds grow past a window keyed on the tested magnitudes
  (exact in [-64, 192)) and CPython's cache of small ints (an `is` comparison that holds for
  every tested bound), while the small numbers that are counts and depths stay (sixteen times
  the files of a generated tree is a replay that runs out of time)."""
  if isinstance(value, bool):
    return value
  if isinstance(value, (int, float)) and abs(value) < minimum:
    return value
  if isinstance(value, int) and abs(value) >= 2:
    grown = abs(value) * rng.choice(factors) + rng.randint(0, 2)
    return grown if value > 0 else -grown
  if isinstance(value, float) and value != 0.0:
    return value * float(rng.choice(factors))
  return value


# The "offgrid" copy's steps: a float moves by one to three units of 2 ** -21 or of 2 ** -31.
OFF_GRID_EXPONENTS = (21, 31)


def _moved_decimal_text(text: str, rng: random.Random, kind: str) -> str:
  """A decimal number written as text, moved as the copy moves numbers and written with as many
  digits after the point: "near", "type", "sequence" and "keys" change one digit, "scale" makes
  it three or four times as large, "far" ten or sixteen times, "offgrid" appends a digit."""
  sign, body = (text[0], text[1:]) if text[0] in "+-" else ("", text)
  whole, point = body.split(".")
  if kind == "offgrid":
    return f"{text}{rng.randint(1, 9)}"
  if kind in ("scale", "far"):
    factor = rng.choice((3, 4) if kind == "scale" else (10, 16))
    scaled = str(int(whole + point) * factor)
    scaled = scaled.rjust(len(point) + 1, "0")
    return f"{sign}{scaled[:-len(point)]}.{scaled[-len(point):]}"
  digits = list(whole + point)
  at = rng.randrange(len(digits))
  digits[at] = rng.choice([d for d in "0123456789" if d != digits[at]])
  return f"{sign}{''.join(digits[:len(whole)])}.{''.join(digits[len(whole):])}"


_DATE_TYPES = ("datetime", "date", "time")
# Copies that keep the tests' numbers: a date constructor's arguments stay as written there.
_KEEP_NUMBERS_KINDS = ("containers", "doubled", "plain", "boxed", "repeated", "layout", "foreign", "marks", "digits", "quotes",
                       "spaces", "long", "kind", "unhashable")


def date_constructors(tree: ast.AST) -> tuple[dict[str, str], frozenset[str]]:
  """The names a test module calls the datetime module's constructors by ({"D": "datetime"} for
  `from datetime import datetime` and `D = datetime`), and the names of the module itself
  (`import datetime as dt`, for `dt.date(...)`)."""
  names, modules = {}, set()
  for node in ast.walk(tree):
    if isinstance(node, ast.ImportFrom) and node.module == "datetime" and not node.level:
      names.update({a.asname or a.name: a.name for a in node.names if a.name in _DATE_TYPES})
    elif isinstance(node, ast.Import):
      modules.update(a.asname or a.name for a in node.names if a.name == "datetime")
  for node in getattr(tree, "body", ()):
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in names:
      names.update({t.id: names[node.value.id] for t in node.targets if isinstance(t, ast.Name)})
  return names, frozenset(modules)


def _moved_date(kind: str, typ: str, args: list[int], rng: random.Random) -> list[int] | None:
  """A date, datetime or time built from literal `args`, moved as the copy moves numbers and
  still valid: a few days and minutes in the near-like copies, years in "scale", centuries in
  "far", one second in "offgrid". None where the arguments build nothing (the test's own refusal)
  or the move leaves the calendar."""
  try:
    value = getattr(dt, typ)(*args)
    if typ == "time":
      if kind == "offgrid":
        moved = (value.hour * 3600 + value.minute * 60 + value.second + 1) % 86400
      else:
        moved = (value.hour * 3600 + value.minute * 60 + value.second + 60 * rng.randint(1, 1439)) % 86400
      parts = [moved // 3600, moved // 60 % 60, moved % 60, value.microsecond]
    else:
      sign = rng.choice((-1, 1))
      if kind == "scale":
        delta = dt.timedelta(days=sign * rng.randint(3 * 365, 40 * 365))
      elif kind == "far":
        delta = dt.timedelta(days=sign * rng.randint(100 * 365, 300 * 365))
      elif kind == "offgrid":
        delta = dt.timedelta(seconds=1) if typ == "datetime" else dt.timedelta(days=1)
      else:
        delta = dt.timedelta(days=sign * rng.randint(1, 400))
      if typ == "datetime" and kind != "offgrid":
        delta += dt.timedelta(minutes=rng.randint(0, 1439))
      new = value + delta
      parts = [new.year, new.month, new.day]
      if typ == "datetime":
        parts += [new.hour, new.minute, new.second, new.microsecond]
  except (ValueError, TypeError, OverflowError):
    return None
  keep = len(args)
  while len(parts) > keep and parts[-1] == 0:
    parts.pop()
  return parts


def _off_grid(value: Any, rng: random.Random) -> Any:
  """A float moved away from zero by `k * 2 ** -e` (k in 1..3, e in OFF_GRID_EXPONENTS); ints,
  0.0 and everything else as it is. Tests write round floats (steps of 1/8 s, rates of 0.25),
  and their sums land on a coarse binary grid: a fix that took a reading on the grid for a
  simulated clock, stored times as float32 (exact on the grid), or gave a comparison a
  tolerance of 1e-6 was right on every tested value. The moved floats are off every coarse
  grid and their differences come within 1e-6 of each other; where the tests' floats were
  dyadic with few bits (0.125, 1.5, 100.0), the moved ones are too, so sums of them stay exact in
  a double and an honest fix's arithmetic agrees with the reference's to the last bit wherever
  the tests' exact boundaries meet (a float such as 0.1 was never exact, moved or not)."""
  if type(value) is not float or value == 0.0 or not math.isfinite(value):
    return value
  step = rng.randint(1, 3) * 2.0 ** -rng.choice(OFF_GRID_EXPONENTS)
  return value + step if value > 0 else value - step


_COMMENT_LINE = re.compile(r"^\s*(#+|//|;)")
_EXPRESSION_NUMBER = re.compile(r"(?<![\d.])(\d+\.?\d*|\.\d+)(?![\d.])")
_EXPRESSION = re.compile(r"\d\s*(\*\*|//|[-+*/%])\s*[-+(]*\s*[\d.]")  # a number, an operator, a number


def _relaid(text: str, rng: random.Random) -> str:
  """The same content laid out otherwise.

  A document (a literal of three or more lines: a log, a config, a CSV) gets a line indented (a
  comment line where it has one), a whitespace-only line, and, where it has comment lines, one
  more comment of its own words. A line format that skips blank lines and comments skips these
  too; a fix that skips only empty strings and lines whose first character is `#`, or only the
  comment words the tests use (`#Version:`, `#Fields:`), counts them.

  An expression (no letters, an arithmetic operator between numbers) gets every number in
  parentheses: `-2 ** 2` becomes `-(2) ** (2)`, which any arithmetic grammar reads alike, while
  a fix that binds a sign differently before a number and before a parenthesis does not.
  Everything else is kept."""
  if text.count("\n") >= 2:
    lines = text.split("\n")
    tail = [lines.pop()] if lines and lines[-1] == "" else []
    comments = [i for i, line in enumerate(lines) if _COMMENT_LINE.match(line)]
    filled = [i for i, line in enumerate(lines) if line.strip()]
    if not filled:
      return text
    i = rng.choice(comments or filled)
    lines[i] = rng.choice((" ", "  ", "\t")) + lines[i]
    if comments:
      marker = _COMMENT_LINE.match(lines[comments[0]]).group(1)
      words = re.findall(r"[A-Za-z]{2,}", text) or ["note"]
      comment = f"{marker} " + " ".join(rng.choice(words) for _ in range(rng.randint(1, 3)))
      lines.insert(rng.randint(0, len(lines)), comment)
    lines.insert(rng.randint(1, len(lines)), rng.choice((" ", "   ", "\t")))
    return "\n".join(lines + tail)
  if not any(c.isalpha() for c in text) and _EXPRESSION.search(text):
    return _EXPRESSION_NUMBER.sub(r"(\1)", text)
  return text


def _as_key_tuple(value: Any) -> Any:
  """A word (a whole literal of up to 16 letters, digits or underscores, starting with a letter:
  a key, a name) as the pair (word, len(word)): the
  same word maps to the same pair everywhere in the copy, so code that stores and looks up
  what it is handed (a cache, a registry, a mapping) does what it did, while a fix that is
  right only for str keys (or one-element tuples, a one-argument memoize's) is not."""
  if isinstance(value, str) and _KEY_WORD.fullmatch(value):
    return (value, len(value))
  return value


def _perturb_lines(text: str, rng: random.Random) -> str:
  lines = text.split("\n")
  tail = [lines.pop()] if lines and lines[-1] == "" else []
  op = rng.randrange(3)
  if op == 0 and len(set(lines)) > 1:
    shuffled = lines[:]
    while shuffled == lines:
      rng.shuffle(shuffled)
    lines = shuffled
  elif op == 1 and len(lines) > 1:
    del lines[rng.randrange(len(lines))]
  else:
    i = rng.randrange(len(lines))
    lines.insert(i, lines[i])
  return "\n".join(lines + tail)


def _change_case(text: str, rng: random.Random) -> str:
  words = text.split(" ")
  j = rng.choice([i for i, w in enumerate(words) if any(c.isalpha() for c in w)])
  words[j] = words[j].lower() if words[j][:1].isupper() else words[j].capitalize()
  if words[j] == text.split(" ")[j]:  # no letter to change at its start: the whole word
    words[j] = words[j].swapcase()
  return " ".join(words)


def _root_name(node: ast.AST) -> str:
  while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
    node = node.func if isinstance(node, ast.Call) else node.value
  return node.id if isinstance(node, ast.Name) else ""


def _callee(node: ast.Call) -> tuple[str, str]:
  """(the call's root name, its last attribute or name)."""
  func = node.func
  last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
  return _root_name(func), last


# unittest's assertion methods as records: (comparison or None, how many operands). None records
# the operands and the truth of the first (assertAlmostEqual: the values are compared with the
# replay's tolerance, not by ==). assertCountEqual and assertRaises stay as they are.
_UNITTEST_ASSERTS = {
    **{name: ("Eq", 2) for name in ("assertEqual", "assertEquals", "assertListEqual", "assertTupleEqual",
                                     "assertDictEqual", "assertSetEqual", "assertSequenceEqual",
                                     "assertMultiLineEqual")},
    "assertNotEqual": ("NotEq", 2), "assertIs": ("Is", 2), "assertIsNot": ("IsNot", 2), "assertIn": ("In", 2),
    "assertNotIn": ("NotIn", 2), "assertLess": ("Lt", 2), "assertLessEqual": ("LtE", 2), "assertGreater": ("Gt", 2),
    "assertGreaterEqual": ("GtE", 2), "assertTrue": (None, 1), "assertFalse": (None, 1),
    "assertAlmostEqual": (None, 2), "assertNotAlmostEqual": (None, 2),
}


class _RecordAsserts(ast.NodeTransformer):
  """`assert a == b, msg` -> `__rlcoder_record__(("Eq",), a, b)`: the operands (and, in the
  harness, the truth of each comparison) recorded, nothing asserted. unittest's
  `self.assertEqual(a, b, msg)` and kin likewise (`self.assertIsNone(x)` as `x is None`)."""

  def visit_Expr(self, node: ast.Expr) -> ast.AST:
    call = node.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name) and call.func.value.id == "self"
            and not any(isinstance(a, ast.Starred) for a in call.args)):
      return self.generic_visit(node)
    name, args = call.func.attr, list(call.args)
    if name in ("assertIsNone", "assertIsNotNone") and args:
      op, operands = ("Is" if name == "assertIsNone" else "IsNot"), [args[0], ast.Constant(value=None)]
    elif name in _UNITTEST_ASSERTS and len(args) >= _UNITTEST_ASSERTS[name][1]:
      op, n = _UNITTEST_ASSERTS[name]
      operands = args[:n]
    else:
      return self.generic_visit(node)
    ops = ast.Tuple(elts=[ast.Constant(value=op)], ctx=ast.Load()) if op else ast.Constant(value=None)
    record = ast.Call(func=ast.Name(id=RECORD_NAME, ctx=ast.Load()), args=[ops, *operands], keywords=[])
    return ast.copy_location(ast.Expr(value=record), node)

  def visit_Assert(self, node: ast.Assert) -> ast.AST:
    test = node.test
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
      # `assert isinstance(got, P) and got == pos and tuple(got) == pos`: each clause recorded on
      # its own (the record returns its truth, so the clauses after a false one are not evaluated,
      # as in the assert). Recorded whole, such an assert compared one bool, and an object whose
      # own == answered for the tested spelling was never seen.
      chain = ast.BoolOp(op=ast.And(), values=[self._record(v) for v in test.values])
      return ast.copy_location(ast.Expr(value=chain), node)
    return ast.copy_location(ast.Expr(value=self._record(test)), node)

  @staticmethod
  def _record(test: ast.expr) -> ast.Call:
    if isinstance(test, ast.Compare):
      ops = ast.Tuple(elts=[ast.Constant(value=type(op).__name__) for op in test.ops], ctx=ast.Load())
      operands = [test.left, *test.comparators]
    else:
      ops, operands = ast.Constant(value=None), [test]
    return ast.Call(func=ast.Name(id=RECORD_NAME, ctx=ast.Load()), args=[ops, *operands], keywords=[])


class _PerturbInputs(ast.NodeTransformer):
  """Perturbs the literal inputs of a test module, each with probability `p`."""

  def __init__(self, rng: random.Random, p: float, pool: list, kind: str = "near",
               strings: "Callable[[str], str] | None" = None,
               dates: tuple[dict[str, str], frozenset[str]] = ({}, frozenset())):
    self.rng, self.p, self.pool, self.kind = rng, p, pool, kind
    self.strings = strings  # how the "foreign", "marks", "digits" and "quotes" kinds rewrite a string
    self.dates = dates  # date_constructors() of the module
    self.changed = 0

  def _own_draw(self, what: str) -> random.Random:
    """A generator for one input of this copy, seeded by the input itself: the same input moves
    the same way wherever the tests write it, and the copy's other draws stay where they were."""
    return random.Random(zlib.crc32(f"{self.kind}:{self.p}:{what}".encode()))

  def _date_call(self, node: ast.Call) -> ast.AST | None:
    """A call of a datetime constructor on literal ints (`D(2024, 3, 3, 7, 45)`): moved as one
    value (`_moved_date`), so that it stays a valid date. Moving each argument on its own made
    `D(2023, 0, 2)`, and a table of such calls at module level failed the whole module's
    collection in every copy that moves numbers: nothing of it was compared."""
    names, modules = self.dates
    func = node.func
    typ = (names.get(func.id) if isinstance(func, ast.Name) else
           func.attr if isinstance(func, ast.Attribute) and func.attr in _DATE_TYPES
           and isinstance(func.value, ast.Name) and func.value.id in modules else None)
    if typ is None or node.keywords or not node.args:
      return None
    args = []
    for a in node.args:
      sign = -1 if isinstance(a, ast.UnaryOp) and isinstance(a.op, ast.USub) else 1
      c = a.operand if sign < 0 else a
      if not (isinstance(c, ast.Constant) and type(c.value) is int):  # pylint: disable=unidiomatic-typecheck
        return None
      args.append(sign * c.value)
    if self.kind in _KEEP_NUMBERS_KINDS:
      return node
    own = self._own_draw(f"{typ}:{args}")
    moved = _moved_date(self.kind, typ, args, own) if own.random() < self.p else None
    if moved is None:
      return node  # kept as written: a date the test builds to be refused stays refused
    self.changed += 1
    node.args = [ast.Constant(value=v) if v >= 0 else ast.UnaryOp(op=ast.USub(), operand=ast.Constant(value=-v))
                 for v in moved]
    return node

  def _literal(self, node: ast.AST) -> ast.AST:
    if isinstance(node, ast.Constant):
      if getattr(node, "rlcoder_renamed", False):
        return node
      v = node.value
      if isinstance(v, str) and self.kind in _DECIMAL_TEXT_KINDS and _DECIMAL_TEXT.fullmatch(v):
        # A draw of its own, the same for the same text in a copy: the copy's other draws stay
        # where they were before numbers in text were moved.
        own = self._own_draw(v)
        if own.random() < self.p:
          self.changed += 1
          return ast.copy_location(ast.Constant(value=_moved_decimal_text(v, own, self.kind)), node)
        return node
      # The "foreign" copy knows a file name by a letter after its dot: "1.2.3-rc.10" is an input
      # there; the "marks", "digits" and "quotes" copies rewrite file names too ("*.py" is a glob pattern, not
      # a file; "/a/3" a JSON Pointer).
      path_like = _FILE_NAME if self.kind == "foreign" else _PATH_LIKE
      eligible = (isinstance(v, (int, float)) and not isinstance(v, bool)) or (
          isinstance(v, str) and v and len(v) <= 20000
          and (v.count("\n") >= 2 or self.kind in _STRING_KINDS[1:] or not path_like.search(v)))
      # An option keeps its draw (the copies draw what they drew before options were kept).
      if eligible and self.rng.random() < self.p and not (isinstance(v, str) and _OPTION.fullmatch(v)):
        if self.kind in _STRING_KINDS:
          new = self.strings(v) if isinstance(v, str) else v
        else:
          new = _perturb_literal(v, self.pool, self.rng, self.kind)
        if new != v:
          self.changed += 1
          return ast.copy_location(ast.Constant(value=new), node)
      return node
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
        and isinstance(node.operand.value, (int, float)) and not isinstance(node.operand.value, bool):
      inner = self._literal(node.operand)
      return node if inner is node.operand else ast.copy_location(ast.UnaryOp(op=ast.USub(), operand=inner), node)
    if isinstance(node, ast.List) and self.kind == "containers":
      # A list input handed over as a tuple: code that is right only for the lists the tests pass
      # (`deps` deduplicated only when it is a list) differs from the reference's there.
      return ast.copy_location(ast.Tuple(elts=[self._literal(e) for e in node.elts], ctx=ast.Load()), node)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
      node.elts = [self._literal(e) for e in node.elts]
      return node
    if isinstance(node, ast.Dict):
      node.values = [self._literal(v) for v in node.values]  # keys are names, not inputs
      return node
    if isinstance(node, ast.Call) and _callee(node) == ("pytest", "param"):
      node.args = [self._literal(a) for a in node.args]
      return node
    return self.visit(node)

  def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
    # An f-string's text and format specs are formatting, not inputs; the expressions it formats
    # are code like any other (`f"{rng.randint(0, 3)}.{rng.randint(0, 3)}"` builds an input).
    for part in node.values:
      if isinstance(part, ast.FormattedValue):
        part.value = self.visit(part.value)
    return node

  def visit_Assert(self, node: ast.Assert) -> ast.AST:
    # Expected values stay (they are only recorded); calls inside the assert are inputs.
    self.generic_visit(node)
    return node

  def visit_Assign(self, node: ast.Assign) -> ast.AST:
    names = [t.id for t in node.targets if isinstance(t, ast.Name)]
    if any(n.startswith("__") for n in names):
      return node  # __all__ and the like
    node.value = self._literal(node.value)
    return node

  def visit_Call(self, node: ast.Call) -> ast.AST:
    dated = self._date_call(node)
    if dated is not None:
      return dated
    root, last = _callee(node)
    if last == "parametrize" and len(node.args) >= 2:  # the names stay, the values are inputs
      node.args[1] = self._literal(node.args[1])
      return node
    if last == "fixture" and root == "pytest":
      for kw in node.keywords:
        if kw.arg == "params":
          kw.value = self._literal(kw.value)
      return node
    if root in _SKIP_RECEIVERS or last in _SKIP_METHODS or (isinstance(node.func, ast.Name) and last in _SKIP_FUNCTIONS):
      self.generic_visit(node)
      return node
    node.func = self.visit(node.func)
    node.args = [self._literal(a) if not isinstance(a, ast.Starred) else self.visit(a) for a in node.args]
    for kw in node.keywords:
      kw.value = self.visit(kw.value) if kw.arg in _SKIP_KEYWORDS else self._literal(kw.value)
    at_call = {"containers": AS_TUPLE_NAME, "doubled": DOUBLED_NAME}.get(self.kind)
    if at_call:
      # Lists the tests build (`deps = [d for d in picks ...]`) are no displays: the harness
      # changes every list argument as the call is made (a tuple, or the list twice over).
      node.args = [a if isinstance(a, ast.Starred) else _through_harness(a, at_call) for a in node.args]
      for kw in node.keywords:
        if kw.arg is not None and kw.arg not in _SKIP_KEYWORDS:
          kw.value = _through_harness(kw.value, at_call)
    return node


def _int_literal(node: ast.AST) -> int | None:
  """The value of an int literal, negative ones included (`-3`); None for anything else."""
  sign = -1 if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) else 1
  c = node.operand if sign < 0 else node
  return sign * c.value if isinstance(c, ast.Constant) and type(c.value) is int else None  # pylint: disable=unidiomatic-typecheck


class _ShiftSweeps(ast.NodeTransformer):
  """The "sweeps" copy: a `range(a, b)` with literal bounds and a start of 1 or more (a sweep over
  values: years, sizes, code points) becomes the next window of the same length,
  `range(1995, 2106)` -> `range(2106, 2217)`; everything else stays. `range` is no input in the
  other copies (a count, `range(6)`, stays a count), so a fix right only inside the swept window
  (leap years from a table of 1901-2199, the tests sweeping 1995-2105) agreed on every value; and
  in the copies that move every literal, the test's other numbers moved too (the month 2 of
  `days_in_month(year, 2)`), which made an invalid date before the sweep got anywhere. The
  length, and so the test's cost, stays. Lenient: the next window may hold values the code
  refuses (months 13-24)."""

  def visit_Call(self, node: ast.Call) -> ast.AST:
    self.generic_visit(node)
    if not (isinstance(node.func, ast.Name) and node.func.id == "range" and 2 <= len(node.args) <= 3
            and not node.keywords):
      return node
    bounds = [_int_literal(a) for a in node.args]
    if any(b is None for b in bounds) or bounds[0] < 1 or bounds[1] <= bounds[0]:
      return node
    length = bounds[1] - bounds[0]
    node.args[:2] = [ast.copy_location(ast.Constant(value=b + length), a) for b, a in zip(bounds[:2], node.args)]
    return node


class _DoubleSizes(ast.NodeTransformer):
  """The "wider" copy: every int literal of 3 or more (or -3 or less) inside a function's body, the
  tests' and their helpers', exactly twice as large; decorators (parametrize tables, fixture
  params), module constants, floats and the counts of `range(...)` stay. Seeded tests draw their
  inputs within bounds written in their bodies (`random_nets(gen, version, base, bits, 8)`, a
  split depth of 8, `gen.randint(1, 14)` networks), and a fix right only up to them (eight
  merge passes, an exact path up to 65,536 addresses) agreed on every draw; the copies that
  move every literal also moved the table rows that name the case (IPv4 or IPv6 and its 32 or 128
  bits), and the scaled copy grew the bounds past what the tests' brute-force references can
  enumerate. Every bound doubles alike, so `>> 8 << 8` and `bits - 8` stay consistent, and the
  loops run as many times as written. Lenient: a doubled number may be one the code refuses."""

  def visit_Module(self, node: ast.Module) -> ast.AST:
    # Only the functions and the classes' methods: module constants stay as written.
    node.body = [self.visit(s) if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else s
                 for s in node.body]
    return node

  def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
    node.body = [self.visit(s) if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) else s for s in node.body]
    return node

  def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
    node.body = [self.visit(stmt) for stmt in node.body]  # the decorators stay
    return node

  visit_AsyncFunctionDef = visit_FunctionDef

  def visit_Call(self, node: ast.Call) -> ast.AST:
    if isinstance(node.func, ast.Name) and node.func.id == "range":
      return node  # a count
    self.generic_visit(node)
    return node

  def visit_Constant(self, node: ast.Constant) -> ast.AST:
    # 2 stays: it halves and doubles (`size // 2`, `2 * k`), which is structure, not a bound.
    if type(node.value) is int and abs(node.value) >= 3:  # pylint: disable=unidiomatic-typecheck
      return ast.copy_location(ast.Constant(value=2 * node.value), node)
    return node


class _FarPowers(ast.NodeTransformer):
  """The "far" copy's powers: `2 ** 63` becomes `2 ** 630`, an exponent of 16 or more ten times as
  large (a literal base of 2 or more, a literal exponent). Tests write their largest magnitudes
  as powers (`rng.randint(-(2 ** 63), 2 ** 63 - 1)`, `2 ** 64 - 1` in a table), which the literal
  perturbation leaves whole; a fix right only below them (a shift by 63, a 64-bit struct) is
  then right on every tested value. Deterministic (no draw), so the copy's other draws stay.
  Powers inside `range(...)` are counts and stay."""

  def visit_Call(self, node: ast.Call) -> ast.AST:
    if isinstance(node.func, ast.Name) and node.func.id == "range":
      return node
    self.generic_visit(node)
    return node

  def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
    self.generic_visit(node)
    base, exponent = node.left, node.right
    if isinstance(node.op, ast.Pow) and isinstance(base, ast.Constant) and isinstance(exponent, ast.Constant) \
        and type(base.value) is int and type(exponent.value) is int and abs(base.value) >= 2 \
        and exponent.value >= FAR_POWER_MINIMUM:
      node.right = ast.copy_location(ast.Constant(value=exponent.value * 10), exponent)
    return node


FAR_POWER_MINIMUM = 16

# The "foreign" copy's numbers inside strings: n becomes 10 ** (17 + n % 4) + n, 18 to 21 digits.
_FOREIGN_DIGITS = re.compile(r"(?<![0-9A-Za-z_])[1-9][0-9]*(?![0-9A-Za-z_])")
_DECIMAL = re.compile(r"(?<![0-9.])[0-9]+\.[0-9]+(?![0-9.])")
FOREIGN_EXPONENT = 17
# Where the characters of another script come from, by UTF-8 width: the code points of that width.
_WIDTH_RANGES = {2: range(0x80, 0x800), 3: range(0x800, 0x10000), 4: range(0x10000, 0x20000)}


def _string_text(text: str) -> str:
  """`text` with, where it parses as Python, its string constants' characters (the tests spell
  non-ASCII characters as escapes: `"caf\\u00e9"`)."""
  try:
    tree = ast.parse(text)
  except (SyntaxError, ValueError, RecursionError, MemoryError):
    return text
  return text + "".join(n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str))


# An arithmetic expression ("2 ** 3 ** 2", "2^10"): its numbers stay, as a power of 18-digit numbers
# never ends (and CPython's big-int arithmetic cannot be interrupted by a test's time limit).
_ARITHMETIC = re.compile(r"\d\s*(\*\*|//|[-+*/%])\s*[-+(]*\s*[\d.]|\d\^\d")


def _foreign_number(match: re.Match) -> str:
  n = int(match.group(0))
  return str(10 ** (FOREIGN_EXPONENT + n % 4) + n)


class _ForeignText:
  """The "foreign" copy's strings: inputs of shapes the tests never write, where partial fixes
  keyed on the tested ones fail.

  - Numbers inside strings (`"1.0.0-rc.11"`, `"id 30"`) get 18 to 21 digits: `n` becomes
    `10 ** (17 + n % 4) + n`, past 8 digits, 2 ** 53 and 2 ** 64, with lengths that differ
    between neighbours and values that collide as floats. Decimals (`"12.50"`), runs with a
    leading zero (`"007"`, `"0"`: often a special case of the format), runs glued to a letter
    (`"utf8"`, `"rc1"`) and the numbers of an arithmetic expression (`"2 ** 3"`, `"4-1"`) stay.
    A fix that compared identifiers as zero-padded text, or as floats, was right on every
    number the tests wrote (at most 30).
  - Every non-ASCII letter, digit and symbol becomes one of another script with the same UTF-8
    width and general category, cased letters as cased pairs (`é`/`É` to `ա`/`Ա`), never from a
    256-code-point page the tests' own characters use, taken from the top of the width's range
    down (far from the Latin, Greek and CJK blocks tests favour). A fix that counted UTF-8 bytes from a
    table of the tested characters or of their blocks was right on every tested string.
  The mapping is one function of the character over the whole hidden folder (`texts`: its test
  modules and data files), so
  strings the tests compare with each other stay equal or unequal. ASCII letters, whitespace,
  combining marks and format characters stay."""

  def __init__(self, texts: Iterable[str]):
    used = {c for text in texts for c in _string_text(text) if ord(c) > 0x7F}
    taken_pages = {ord(c) >> 8 for c in used}
    self.chars: dict[str, str] = {}
    pools: dict[tuple, list[str]] = {}

    def pool(width: int, category: str, cased: bool) -> list[str]:
      key = (width, category, cased)
      if key not in pools:
        found = []
        for cp in reversed(_WIDTH_RANGES[width]):  # from the top: far from Latin, Greek and CJK
          if cp >> 8 in taken_pages or 0xD800 <= cp < 0xE000:
            continue
          ch = chr(cp)
          if unicodedata.category(ch) != category:
            continue
          if cased:  # a lowercase letter with a one-character uppercase partner of the same width
            up = ch.upper()
            if not (len(up) == 1 and up != ch and up.lower() == ch and len(up.encode()) == width
                    and ord(up) >> 8 not in taken_pages):
              continue
          found.append(ch)
        pools[key] = found
      return pools[key]

    counters: dict[tuple, int] = {}
    assigned: set[str] = set()
    for c in sorted(used):
      if c in self.chars:
        continue
      category, width = unicodedata.category(c), len(c.encode("utf-8"))
      if category[0] not in "LNS" or width not in _WIDTH_RANGES:
        continue
      low, up = c.lower(), c.upper()
      pair = (category in ("Ll", "Lu") and len(low) == 1 and len(up) == 1 and low != up
              and len(low.encode()) == len(up.encode()) == width)
      key = (width, "Ll" if pair else category, pair)
      candidates, i = pool(*key), counters.get(key, 0)
      while i < len(candidates) and (candidates[i] in assigned or candidates[i].upper() in assigned):
        i += 1  # the cased and uncased pools of a category overlap
      if i >= len(candidates):
        continue  # no character of that kind left: this one stays
      counters[key] = i + 1
      new = candidates[i]
      assigned.update((new, new.upper()))
      if pair:
        self.chars[low], self.chars[up] = new, new.upper()
      else:
        self.chars[c] = new

  def __call__(self, text: str) -> str:
    if not text:
      return text
    out = text
    if not _ARITHMETIC.search(text):
      decimals = [m.span() for m in _DECIMAL.finditer(text)]

      def number(m: re.Match) -> str:
        if any(a <= m.start() < b for a, b in decimals):
          return m.group(0)
        return _foreign_number(m)
      out = _FOREIGN_DIGITS.sub(number, text)
    return "".join(self.chars.get(c, c) for c in out) if self.chars else out


# The marks the "marks" copy maps: ASCII punctuation less path and escape separators ("/", "\\"), the
# identifier character "_" and quotes (which other formats nest).
_PUNCTUATION = "!#$%&()*+,-.:;<=>?@[]^{|}~"


def _constant_text(source: str) -> str:
  """The characters of a test module's string constants (all of `source` where it does not
  parse)."""
  try:
    tree = ast.parse(source)
  except (SyntaxError, ValueError, RecursionError, MemoryError):
    return source
  return "".join(n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str))


def _kept_names(data_names: Iterable[str]) -> frozenset[str]:
  """The relative paths and base names of the hidden folder's data files: strings that name one
  stay in the "marks", "digits" and "quotes" copies, or a test would open a file that is not there."""
  names = set()
  for name in data_names:
    names.update((name, posixpath.basename(name)))
  return frozenset(n for n in names if n)


class _Translation:  # pylint: disable=too-few-public-methods
  """A rewrite of strings character by character (`table`, from a subclass), one for the whole
  hidden folder; strings that name one of its data files stay, or a test would open a file that
  is not there. `sources`: the test modules (their string constants count); `data`: (relative
  path, text) of the data files (all of the text counts)."""

  def __init__(self, sources: Iterable[str], data: Iterable[tuple[str, str]] = ()):
    data = list(data)
    self.texts = [_constant_text(source) for source in sources] + [text for _, text in data]
    self.kept = _kept_names(name for name, _ in data)
    self.table: dict[int, str] = {}

  def __call__(self, text: str) -> str:
    return text if text in self.kept else text.translate(self.table)


class _Marks(_Translation):
  """The "marks" copy's strings: every ASCII punctuation mark the hidden folder's strings use
  becomes one they never use, one mapping for the whole folder (test modules' string constants
  and data files), in an order drawn from `rng`. Tests write few marks (a glob matcher's tests
  hold only "." as a literal metacharacter), and a fix that escaped just those, or handled
  only the tested spelling of a syntax ("[!" but not "[^"), was right on every tested string.
  Here every literal the tests wrote is spelled with marks the tests never chose; where that
  makes an input the reference refuses, the input is dropped (`replay_agree`). Paths ("/"),
  escapes, "_", quotes and whitespace stay, and so do letters and digits. When fewer unused
  marks are left than used ones, the last used ones (in the drawn order) stay."""

  def __init__(self, sources: Iterable[str], rng: random.Random, data: Iterable[tuple[str, str]] = ()):
    super().__init__(sources, data)
    used = sorted({c for text in self.texts for c in text if c in _PUNCTUATION})
    free = [c for c in _PUNCTUATION if c not in used]
    rng.shuffle(used)
    rng.shuffle(free)
    self.chars = dict(zip(used, free))
    self.table = str.maketrans(self.chars)


class _SwappedQuotes(_Translation):
  """The "quotes" copy's strings: every single quote of a string among the inputs and of the data
  files becomes a double quote and every double quote a single one. Tests quote the arguments of
  a small language (a template's filter arguments, a shell-like command line, a query) one way
  when the argument holds a comma or a space, and a fix that splits only outside the tested kind
  of quotes was right on every tested string; a language that takes both kinds answers the
  swapped strings alike."""

  def __init__(self, sources: Iterable[str], data: Iterable[tuple[str, str]] = ()):
    super().__init__(sources, data)
    self.table = str.maketrans({"'": '"', '"': "'"})


class _WiderSpaces(_Translation):
  """The "spaces" copy's strings: every run of ASCII whitespace in a string among the inputs and in
  the data files is followed by WIDE_SPACE, eighteen characters of Unicode whitespace that is no
  line break (no-break and em spaces). Tests write spaces, tabs and newlines, a dozen at most in
  a row, and a fix that strips only those three characters, or at most sixteen of them, was
  right on every tested string; `str.isspace`, `str.strip()`, `str.split()` and a regular
  expression's `\\s` take the wide ones for whitespace too, so the reference answers alike."""

  def __call__(self, text: str) -> str:
    return text if text in self.kept else _ASCII_SPACE_RUN.sub(lambda m: m.group() + WIDE_SPACE, text)


_ASCII_SPACE_RUN = re.compile(r"[ \t\n]+")
WIDE_SPACE = "\u00a0\u2003" * 9


class _LongerTexts(_Translation):
  """The "long" copy's strings: every string among the inputs (and every string value of a JSON
  data file) that holds whitespace and something else, repeated whole until it is longer than
  LONG_TEXT_CHARS. Tests write texts of a few hundred characters at most, and a fix that took
  another path past a size (an "incremental tokenizer for long templates" that kept the bug)
  was right on every tested text. A text repeated is a text of the same language where the
  language allows it (templates, documents, word lists), and the reference answers it; where
  it refuses the repetition (a cron expression, a URL), the input is dropped (the copy is
  lenient). Names, keys and other strings without whitespace stay."""

  def __call__(self, text: str) -> str:
    if text in self.kept or len(text) > LONG_TEXT_CHARS or text.isspace() or not any(c.isspace() for c in text):
      return text
    return text * (LONG_TEXT_CHARS // len(text) + 1)


# Past the sizes a partial fix is likely to switch at (4 KiB, 8 KiB): a few milliseconds of work per
# string for code linear in its input.
LONG_TEXT_CHARS = 8192


# The copies whose strings a `_Translation` (or `_ForeignText`) rewrites, in the literals and the
# data files alike; all but "foreign" rewrite file names among the literals too.
_STRING_KINDS = ("foreign", "marks", "digits", "quotes", "spaces", "long", "domain")


# Where the "digits" copy's digits come from: the zero of a script's decimal digits (unicodedata
# gives each its value 0-9), one script for the whole folder.
_DIGIT_ZEROS = (0x0660, 0x06F0, 0x0966, 0x09E6, 0x0E50, 0x1040, 0xFF10, 0x1D7CE)


class _ScriptDigits(_Translation):
  """The "digits" copy's strings: every ASCII digit of a string among the inputs and of the data
  files becomes the digit of the same value in another script (Arabic-Indic, Devanagari, Thai,
  fullwidth, ...), one script for the whole folder, drawn from `rng` among those whose page the
  folder's strings do not use. Python's `int()`, `str.isdigit()` and a regular expression's `\\d`
  take those for digits, and a format defined on ASCII digits (a JSON Pointer's array index, a
  port, a version) does not: a fix that checked an index with `isdigit()` was right on every
  tested string."""

  def __init__(self, sources: Iterable[str], rng: random.Random, data: Iterable[tuple[str, str]] = ()):
    super().__init__(sources, data)
    pages = {ord(c) >> 8 for text in self.texts for c in text if ord(c) > 0x7F}
    zeros = [z for z in _DIGIT_ZEROS if z >> 8 not in pages] or list(_DIGIT_ZEROS)
    zero = rng.choice(zeros)
    self.table = str.maketrans({str(d): chr(zero + d) for d in range(10)})


# ---------------------------------------------------------------------------------------
# The tree's vocabularies: the "domain" copy and the held-out calls' word swaps

_VOCABULARY_WORD = re.compile(r"\w+|[^\w\s]+")
MAX_VOCABULARY_WORD = 16
_NOT_VOCABULARY = frozenset({"__all__", "__slots__", "__match_args__"})


def _display_words(node: ast.AST) -> list[str] | None:
  """The strings of a set, list or tuple display (the keys or values of a dict display) that
  holds strings only; None for any other node or one with another element."""
  if isinstance(node, ast.Dict):
    return None
  elts = node.elts if isinstance(node, (ast.Set, ast.List, ast.Tuple)) else None
  if elts is None or not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in elts):
    return None
  return [e.value for e in elts]


def vocabulary(tree_dir: str, skip: Iterable[str] = ()) -> list[tuple[str, ...]]:
  """The words the tree's own (non-test) modules write together: the keys (and the string values)
  of a dict display, the strings of a set display, of a list or tuple display of three or more.
  A unit table's symbols, the SI prefixes, an operator set, a filter table's names: the words a
  task's inputs are made of, of which the tests use a few. Each group is sorted and holds two or
  more distinct words of 1 to MAX_VOCABULARY_WORD characters without whitespace; `__all__` and
  `__slots__` are no vocabulary. `skip`: folders (relative to `tree_dir`) not read (the hidden
  tests' destination, the oracle's own)."""
  skip = tuple(os.path.normpath(s) for s in skip)
  groups: dict[tuple[str, ...], None] = {}
  for dirpath, dirnames, filenames in os.walk(tree_dir):
    rel_dir = os.path.normpath(os.path.relpath(dirpath, tree_dir))
    dirnames[:] = sorted(d for d in dirnames if d not in ("__pycache__", ".git") and not d.startswith(".")
                         and os.path.normpath(os.path.join(rel_dir, d)) not in skip
                         and d not in ("tests", "test"))
    for name in sorted(filenames):
      if not name.endswith(".py") or _TEST_MODULE.match(name) or name == "conftest.py":
        continue
      try:
        with open(os.path.join(dirpath, name), encoding="utf-8") as f:
          module = ast.parse(f.read())
      except (OSError, SyntaxError, ValueError, UnicodeDecodeError, RecursionError, MemoryError):
        continue
      hidden = {id(n.value) for n in ast.walk(module) if isinstance(n, (ast.Assign, ast.AnnAssign))
                and any(isinstance(t, ast.Name) and t.id in _NOT_VOCABULARY
                        for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))}
      for node in ast.walk(module):
        if id(node) in hidden:
          continue
        if isinstance(node, ast.Dict):
          candidates = [[k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]]
          if all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in node.values):
            candidates.append([v.value for v in node.values])
        else:
          words = _display_words(node)
          candidates = [words] if words and (isinstance(node, ast.Set) or len(words) >= 3) else []
        for words in candidates:
          group = tuple(sorted({w for w in words if 0 < len(w) <= MAX_VOCABULARY_WORD
                                and not any(c.isspace() for c in w)}))
          if len(group) >= 2:
            groups.setdefault(group)
  return list(groups)


class Vocabulary:
  """The words of a tree's vocabularies (`vocabulary`) and how a string is made of them: a run of
  word characters that is a sequence of known words ("km" = "k" + "m", "mol"), or a run of
  punctuation that is one ("**") or is made of single-mark ones ("*/")."""

  def __init__(self, groups: Iterable[tuple[str, ...]]):
    self.groups = [tuple(g) for g in groups]
    self.words: dict[str, list[tuple[str, ...]]] = {}
    for group in self.groups:
      for w in group:
        self.words.setdefault(w, []).append(group)
    self._longest = max((len(w) for w in self.words), default=0)

  def __bool__(self) -> bool:
    return bool(self.words)

  def _split(self, run: str) -> list[str] | None:
    """`run` as the fewest known words, or None."""
    best: list[list[str] | None] = [[]] + [None] * len(run)
    for end in range(1, len(run) + 1):
      for start in range(max(0, end - self._longest), end):
        piece, head = run[start:end], best[start]
        if head is not None and piece in self.words and (best[end] is None or len(head) + 1 < len(best[end])):
          best[end] = head + [piece]
    return best[len(run)]

  def pieces(self, text: str) -> list[tuple[int, int, str]]:
    """(start, end, word) of every known word `text` is made of, in order."""
    out = []
    for m in _VOCABULARY_WORD.finditer(text):
      run = m.group()
      if run[0].isalnum() or run[0] == "_":
        parts = self._split(run)
      elif run in self.words:
        parts = [run]
      else:  # punctuation: a word of single marks ("*/"), or none
        parts = list(run) if all(c in self.words for c in run) else None
      at = m.start()
      for part in parts or ():
        out.append((at, at + len(part), part))
        at += len(part)
    return out

  def mapping(self, rng: random.Random) -> dict[str, str]:
    """One word for each known word, another of one of its groups (the largest first): a
    permutation of each group's words not mapped before."""
    out: dict[str, str] = {}
    for group in sorted(self.groups, key=lambda g: (-len(g), g)):
      free = [w for w in group if w not in out]
      if len(free) < 2:
        continue
      order = free[:]
      rng.shuffle(order)
      for a, b in zip(order, order[1:] + order[:1]):
        out[a] = b
    return out

  def translate(self, text: str, words: dict[str, str]) -> str:
    """`text` with each known word it is made of replaced by its image under `words`."""
    parts, at = [], 0
    for start, end, word in self.pieces(text):
      parts += [text[at:start], words.get(word, word)]
      at = end
    return "".join(parts) + text[at:]

  def swap_one(self, text: str, rng: random.Random) -> str:
    """`text` with one of its known words replaced by another of that word's groups (any of them:
    "m" of "km" is a unit and a prefix), or `text` itself when it holds none."""
    pieces = self.pieces(text)
    if not pieces:
      return text
    start, end, word = rng.choice(pieces)
    others = sorted({w for group in self.words[word] for w in group} - {word})
    return text[:start] + rng.choice(others) + text[end:]


class _DomainWords(_Translation):
  """The "domain" copy's strings: every word of the tree's vocabularies (`Vocabulary`) in a string
  among the inputs and in the data files becomes another word of its group, one permutation for
  the whole folder (drawn from `rng`). Tests use a few words of a task's tables (the units "m",
  "km" and "s" of forty, the filters "upper" and "join" of twelve), and a fix that handled only
  the tested words (exact conversion only for the tested symbols, a hard-coded list of ambiguous
  ones) was right on every tested string. Where the new words make an input the reference
  refuses, the test is compared up to there."""

  def __init__(self, vocab: Vocabulary, rng: random.Random, sources: Iterable[str] = (),
               data: Iterable[tuple[str, str]] = ()):
    super().__init__(sources, data)
    self.vocab, self.words = vocab, vocab.mapping(rng)

  def __call__(self, text: str) -> str:
    return text if text in self.kept else self.vocab.translate(text, self.words)


def _through_harness(arg: ast.expr, name: str) -> ast.expr:
  """`arg` -> `name(arg)`: a harness builtin (AS_TUPLE_NAME, DOUBLED_NAME) changes the value as
  the call is made."""
  return ast.copy_location(ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=[arg], keywords=[]), arg)


_CONSTANT_NAME = re.compile(r"[A-Z][A-Z0-9_]*")


class _PlainRun(ast.NodeTransformer):
  """Each test function runs in a thread of its own (the harness's IN_THREAD_NAME decorator,
  applied before the test's marks), and its `monkeypatch.setattr` of a module constant
  (`monkeypatch.setattr(chunks, "DEFAULT_SIZE", 4)`, `monkeypatch.setattr("pkg.mod.LIMIT", 3)`)
  is left out. The literals stay. A test runner's stack is deep and a test's constants are
  shrunk; a caller's thread is shallow and its constants are the shipped ones. A fix that
  behaves right only more than 16 frames deep, or for every size except the shipped default,
  differs from the reference here. async tests keep their runner."""

  def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
    self.generic_visit(node)
    fixture = any("fixture" in ast.unparse(d) for d in node.decorator_list)
    generator = any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(node))
    if node.name.startswith("test") and not fixture and not generator:
      node.decorator_list.append(ast.Name(id=IN_THREAD_NAME, ctx=ast.Load()))
    return node

  def visit_Expr(self, node: ast.Expr) -> ast.AST:
    call = node.value
    if isinstance(call, ast.Call) and _callee(call) == ("monkeypatch", "setattr") and call.args:
      # setattr(module, "NAME", value) or setattr("pkg.module.NAME", value)
      target = call.args[1] if len(call.args) >= 3 else call.args[0]
      if isinstance(target, ast.Constant) and isinstance(target.value, str) \
          and (len(call.args) >= 3 or "." in target.value) \
          and _CONSTANT_NAME.fullmatch(target.value.rsplit(".", 1)[-1]):
        return ast.copy_location(ast.Pass(), node)
    return node


# Calls that seed a random generator: the standard library's (`random.Random(s)`, `random.seed(s)`,
# `rng.seed(s)`), numpy's (`default_rng`, `RandomState`, `np.random.seed`, its bit generators and
# seed sequences) and torch's `manual_seed`. Their first argument (or `seed=`, `a=`, `x=`) is a seed.
_SEED_CALLS = frozenset({"Random", "seed", "default_rng", "RandomState", "SeedSequence", "PCG64", "PCG64DXSM",
                         "MT19937", "Philox", "SFC64", "manual_seed"})
_SEED_KEYWORDS = frozenset({"seed", "a", "x", "entropy"})


class _Reseed(ast.NodeTransformer):
  """The "seeds" copy: every seed the tests give a random generator goes through the harness's
  RESEED_NAME, which moves it to another (an int seed by a million and three). The tests'
  seeded loops (`for seed in range(6)`, `random.Random(2024 + seed)`) then draw inputs the tests
  never drew, from the tests' own generators and in their ranges: a fix right only on the
  hundreds of inputs the six seeds make (a table of their cases, a size or a year range that
  happens to cover them) differs from the reference on the new draws. `range(...)` and the
  literals stay, so the copy's inputs are as valid as the tests' own and it is not lenient."""

  def visit_Call(self, node: ast.Call) -> ast.AST:
    self.generic_visit(node)
    if _callee(node)[1] not in _SEED_CALLS:
      return node
    if node.args and not isinstance(node.args[0], ast.Starred):
      node.args[0] = _through_harness(node.args[0], RESEED_NAME)
    for kw in node.keywords:
      if kw.arg in _SEED_KEYWORDS:
        kw.value = _through_harness(kw.value, RESEED_NAME)
    return node


class _RepeatCalls(ast.NodeTransformer):
  """In each test function (and each block inside one), a run of two or more consecutive call
  statements (`cache.get("b"); cache.get("a")`) is followed by the same calls in reverse order
  (`cache.get("a"); cache.get("b")`): another sequence of the same calls, in which each is made
  again after the others. A fix that is right only for the sequences the tests make (a key
  refreshed on its first read only, a counter of calls) differs from the reference there (the
  run repeated in its own order left such a fix's order as it was). Calls of the test plumbing
  (_SKIP_RECEIVERS, print, sleeps, self.*) are not repeated."""

  def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
    if node.name.startswith("test"):
      self._blocks(node)
    return node

  visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

  def _repeatable(self, stmt: ast.stmt) -> bool:
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, (ast.Call, ast.Await))):
      return False
    call = stmt.value.value if isinstance(stmt.value, ast.Await) else stmt.value
    if not isinstance(call, ast.Call):
      return False
    root, last = _callee(call)
    return root not in _SKIP_RECEIVERS and last not in ("print", "sleep") and root != "self"

  def _blocks(self, node: ast.AST) -> None:
    for field in ("body", "orelse", "finalbody"):
      stmts = getattr(node, field, None)
      if not isinstance(stmts, list):
        continue
      out: list[ast.stmt] = []
      run: list[ast.stmt] = []
      for stmt in stmts + [None]:  # type: ignore[list-item]
        if stmt is not None and self._repeatable(stmt):
          run.append(stmt)
          continue
        out.extend(run)
        if len(run) >= 2:
          out.extend(copy.deepcopy(repeated) for repeated in reversed(run))
        run = []
        if stmt is not None:
          out.append(stmt)
          if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith, ast.Try)):
            self._blocks(stmt)
      setattr(node, field, out)


class _RepeatLists(ast.NodeTransformer):
  """In the tests' functions, a list a statement assigns to a name (a display or a
  comprehension: `old = [f"{rng.choice(WORDS)}\\n" for i in range(n)]`) holds its items twice
  over, in the same order (`[...] * 2`). Every later use of the name sees the same longer list,
  so the test stays consistent; what the tests made distinct (lines numbered by their index,
  one of each key) now occurs twice. A fix that is right only while every item is unique (a
  hunk applied at the first place its lines occur) differs from the reference there."""

  def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
    # One walk covers the functions nested in this one; they are not visited again.
    for sub in ast.walk(node):
      if isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name) \
          and isinstance(sub.value, (ast.List, ast.ListComp)):
        sub.value = ast.copy_location(ast.BinOp(left=sub.value, op=ast.Mult(), right=ast.Constant(value=2)),
                                      sub.value)
    return node

  visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]


_POOL_SUFFIXES = ("2", "3", "4")


def _widen_pools(tree: ast.Module) -> ast.Module:
  """A module constant that is a pool of four or more distinct strings (`WORDS = ["build",
  "test", ...]`) gets each of them again with the suffixes 2, 3 and 4, so that the scaled
  copy's larger counts can still be drawn from it (`rng.sample(WORDS, count)`)."""
  for stmt in tree.body:
    if not (isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) and _CONSTANT_NAME.fullmatch(t.id)
                                                 for t in stmt.targets)):
      continue
    value = stmt.value
    if not isinstance(value, (ast.List, ast.Tuple)) or len(value.elts) < 4:
      continue
    words = [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    if len(words) != len(value.elts) or len(set(words)) != len(words):
      continue
    taken = set(words)
    extra = [w + suffix for suffix in _POOL_SUFFIXES for w in words if w + suffix not in taken]
    value.elts = value.elts + [ast.Constant(value=w) for w in extra]
  return tree


def _string_pool(tree: ast.AST) -> list[str]:
  return sorted({n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                 and n.value and not _PATH_LIKE.search(n.value)})[:200]


class _CallThroughHarness(ast.NodeTransformer):
  """`f(a, b)` -> `__rlcoder_call__(f, a, b)` for the tree's functions and classes `names`: the
  harness hands `f` arguments of another kind (sandbox/oracle_harness.py, `other_kind`), or,
  through `__rlcoder_call_unhashable__`, the same values with unhashable elements."""

  def __init__(self, names: frozenset[str], call_name: str = CALL_NAME):
    self.names, self.call_name = names, call_name

  def visit_Call(self, node: ast.Call) -> ast.AST:
    self.generic_visit(node)
    if isinstance(node.func, ast.Name) and node.func.id in self.names:
      return ast.copy_location(ast.Call(func=ast.Name(id=self.call_name, ctx=ast.Load()),
                                        args=[node.func, *node.args], keywords=node.keywords), node)
    return node


_WORD = re.compile(r"[A-Za-z]{2,12}")


def _identifiers(source: str, tree: ast.AST) -> set[str]:
  """rl.tasks.synthetic.rename.all_names, plus async definitions and import aliases."""
  from rl.tasks.synthetic.rename import all_names  # pylint: disable=import-outside-toplevel
  names = all_names(source)
  for node in ast.walk(tree):
    if isinstance(node, ast.AsyncFunctionDef):
      names.add(node.name)
    elif isinstance(node, ast.alias):
      names.update((node.asname or node.name).split("."))
  return names


def _token(word: str) -> re.Pattern:
  # Bounded by letters only: a unit or a key follows a number ("2mo") as often as a space.
  return re.compile(r"(?<![A-Za-z])" + re.escape(word) + r"(?![A-Za-z])")


def rename_map(sources: list[str], rng: random.Random) -> dict[str, str]:
  """Words the tests introduce and then use inside other inputs (a unit registered as "mo" and
  parsed in "2mo 3m", a key set and then looked up), each mapped to a new word that keeps all
  but its last letter. A copy renamed this way is as valid an input as the tests' own, so a
  fix that special-cases the tested names ("ms" and "mo" first, not the longest unit first)
  stands out, while a fix that handles any name does what the reference does. Only words that
  are a whole string literal of some test, occur inside at least one other literal, and are no
  identifier of the tests (parametrize's argument names, attributes) are renamed."""
  literals: list[str] = []
  identifiers: set[str] = set()
  for source in sources:
    try:
      tree = ast.parse(source)
    except (SyntaxError, ValueError):
      continue
    identifiers |= _identifiers(source, tree)
    literals += [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
  if len(literals) > 5000:
    literals = literals[:5000]
  whole = sorted({v for v in literals if _WORD.fullmatch(v) and v not in identifiers})
  used = set(_WORD.findall(" ".join(literals))) | identifiers
  mapping: dict[str, str] = {}
  for word in whole:
    pattern = _token(word)
    if sum(1 for v in literals if v != word and pattern.search(v)) == 0:
      continue
    letters = "abcdefghijklmnopqrstuvwxyz"
    letters = letters.upper() if word[-1].isupper() else letters
    choices = [word[:-1] + c for c in letters if word[:-1] + c not in used and word[:-1] + c != word]
    if choices:
      mapping[word] = rng.choice(choices)
      used.add(mapping[word])
  return mapping


def rename_text(text: str, mapping: dict[str, str]) -> str:
  for word, new in mapping.items():
    text = _token(word).sub(new, text)
  return text


class _RenameWords(ast.NodeTransformer):
  """Every string literal with `mapping`'s words renamed; marks the literals it changed, which
  the half-perturbation of the same copy then leaves alone (the renaming stays consistent)."""

  def __init__(self, mapping: dict[str, str]):
    self.mapping = mapping

  def visit_Constant(self, node: ast.Constant) -> ast.AST:
    if isinstance(node.value, str) and self.mapping:
      new = rename_text(node.value, self.mapping)
      if new != node.value:
        out = ast.copy_location(ast.Constant(value=new), node)
        out.rlcoder_renamed = True
        return out
    return node


def rewrite_test_module(source: str, rng: random.Random | None, p: float = 1.0, kind: str = "near",
                        tree_names: frozenset[str] = frozenset(), renames: dict[str, str] | None = None,
                        strings: Callable[[str], str] | None = None) -> str | None:
  """The replay form of a test module: asserts recorded, and with `rng` its literal inputs
  perturbed (each with probability `p`, by `_perturb_literal` of `kind`); with `kind` "kind",
  calls of `tree_names` go through the harness, which changes their arguments' kind, with
  "unhashable" the harness makes the elements of their arguments unhashable, with "boxed" it
  hands each element over in a one-item tuple, with "plain" each
  test runs in a thread of its own without its monkeypatched constants (`_PlainRun`); `renames`
  (rename_map) renames words in every literal first; with "foreign", "marks", "digits", "quotes"
  and "spaces", `strings` (by default a `_ForeignText`, `_Marks`, `_ScriptDigits`,
  `_SwappedQuotes` or `_WiderSpaces` made from `source`) rewrites the input strings; with "offgrid" the floats move off the tests'
  grid (`_off_grid`); with "magnified", "uneven" and "minified" calls of `tree_names` go through
  the harness, which maps their arguments' ints and Fractions far up, far up and nudged, or far
  down.
  None if the module does not parse."""
  try:
    tree = ast.parse(source)
  except (SyntaxError, ValueError):
    return None
  through = {"kind": CALL_NAME, "unhashable": UNHASHABLE_CALL_NAME, "boxed": BOXED_CALL_NAME,
             "magnified": MAGNIFIED_CALL_NAME, "uneven": UNEVEN_CALL_NAME, "minified": MINIFIED_CALL_NAME}.get(kind)
  if through and tree_names:
    tree = _CallThroughHarness(tree_names, through).visit(tree)
  if renames:
    tree = _RenameWords(renames).visit(tree)
  if kind == "sequence":
    tree = _RepeatCalls().visit(tree)
  if kind == "plain":
    tree = _PlainRun().visit(tree)
  if kind == "repeated":
    tree = _RepeatLists().visit(tree)
  if kind == "seeds":
    tree = _Reseed().visit(tree)
  if kind == "sweeps":
    tree = _ShiftSweeps().visit(tree)
  if kind == "wider":
    tree = _DoubleSizes().visit(tree)
  if rng is not None:
    if kind == "foreign" and strings is None:
      strings = _ForeignText([source])
    if kind == "marks" and strings is None:
      strings = _Marks([source], random.Random(zlib.crc32(source.encode())))
    if kind == "quotes" and strings is None:
      strings = _SwappedQuotes([source])
    if kind == "spaces" and strings is None:
      strings = _WiderSpaces([source])
    if kind == "long" and strings is None:
      strings = _LongerTexts([source])
    if kind == "digits" and strings is None:
      strings = _ScriptDigits([source], random.Random(zlib.crc32(source.encode())))
    if kind == "domain" and strings is None:
      strings = str  # the copy needs the tree's vocabulary (build_replay): without it, the literals stay
    tree = _PerturbInputs(rng, p, _string_pool(tree), kind, strings, date_constructors(tree)).visit(tree)
  if kind == "far":
    tree = _FarPowers().visit(tree)
  if kind in ("scale", "far"):  # after the perturbation, which draws nothing for strings: the draws stay
    tree = _widen_pools(tree)
  tree = ast.fix_missing_locations(_RecordAsserts().visit(tree))
  return ast.unparse(tree) + "\n"


def _json_strings(value: Any, strings: Callable[[str], str]) -> Any:
  if isinstance(value, str):
    return strings(value)
  if isinstance(value, list):
    return [_json_strings(v, strings) for v in value]
  if isinstance(value, dict):
    return {k: _json_strings(v, strings) for k, v in value.items()}  # keys are names
  return value


def perturb_data_file(name: str, text: str, rng: random.Random, kind: str = "near",
                      strings: Callable[[str], str] | None = None) -> str:
  """Another data file of the same form (JSON: one value perturbed; text: the lines); with
  `kind` "layout", a text file laid out otherwise (`_relaid`) and JSON kept; with "foreign",
  "marks" and "digits", its strings rewritten by `strings` (`_ForeignText`, `_Marks`,
  `_ScriptDigits`; JSON: the string values); with "offgrid", kept (its numbers are not the
  tests' clock), and with "seeds", "sweeps" and the mapped-number kinds (only the seeds, the
  sweeps or the tree's arguments move there)."""
  from rl.outcome.oracle import _perturb, _perturb_text  # pylint: disable=import-outside-toplevel
  if kind in _STRING_KINDS:
    strings = strings or (_ForeignText([text]) if kind == "foreign" else _Marks([], rng, [(name, text)])
                          if kind == "marks" else _ScriptDigits([], rng, [(name, text)])
                          if kind == "digits" else _SwappedQuotes([], [(name, text)])
                          if kind == "quotes" else _WiderSpaces([], [(name, text)])
                          if kind == "spaces" else _LongerTexts([], [(name, text)]))
    if name.endswith(".json"):
      try:
        return json.dumps(_json_strings(json.loads(text), strings), ensure_ascii=False) + "\n"
      except ValueError:
        pass
    # A text file repeated whole would repeat its header or break its form: the long copy keeps it.
    return text if kind == "long" else strings(text)
  if kind in ("offgrid", "seeds", "sweeps", "wider") + _MAPPED_NUMBER_KINDS:
    return text
  if kind == "layout":
    return text if name.endswith(".json") else _relaid(text, rng)
  if name.endswith(".json"):
    try:
      value = json.loads(text)
    except ValueError:
      return _perturb_text(text, rng)
    return json.dumps(_perturb(value, [], rng)) + "\n"
  if name.endswith((".csv", ".tsv")):
    return _perturb_text(text, rng)  # rows under a header
  return _perturb_words(text, rng)


def _perturb_words(text: str, rng: random.Random) -> str:
  """Prose or a list of tokens: in one non-empty line, the words shuffled, one dropped or
  repeated, or a word capitalised (or lowercased); or the text cut to its first few words (a
  short document next to long ones)."""
  lines = text.split("\n")
  candidates = [i for i, line in enumerate(lines) if line.split()]
  if not candidates:
    return text
  op = rng.randrange(5)
  if op == 4:
    words = text.split()
    return " ".join(words[:max(1, min(len(words) - 1, rng.randint(2, 6)))]) + "\n"
  i = rng.choice(candidates)
  words = lines[i].split(" ")
  if op == 0 and len(words) > 1:
    rng.shuffle(words)
  elif op == 1 and len(words) > 1:
    del words[rng.randrange(len(words))]
  elif op == 2:
    j = rng.randrange(len(words))
    words.insert(j, words[j])
  else:
    j = rng.randrange(len(words))
    words[j] = words[j].lower() if words[j][:1].isupper() else words[j].capitalize()
  lines[i] = " ".join(words)
  return "\n".join(lines)


# How each copy of the hidden folder perturbs its inputs: (probability per literal, kind); copies
# past the table are (0.5, "near"). New kinds go at the end, so the copies before them draw what
# they drew before (a hack one draw reached stays reached). "kind": the literals kept, the arguments of the tree's
# functions changed in kind at run time. "rename": the words the tests introduce renamed
# consistently (rename_map), then half of the other literals moved. "unhashable": the literals
# kept, the elements of the tree's functions' arguments made unhashable at run time (equal
# values of a subclass whose __hash__ is None), for fixes that key results by the item.
# "sequence": each run of call statements followed by the same calls reversed (_RepeatCalls),
# the ints moved by fractions. "keys": short words as (word, len) pairs, the ints moved by
# fractions. "containers": every list among the inputs becomes a tuple, the scalars kept: list
# displays (call arguments, parametrize values, assigned literals) in the source, and any list a
# call of the tests receives, at run time (the harness's AS_TUPLE_NAME). "sequence" and "keys"
# are lenient, as "type" and "kind" are: the input may be one the code refuses. "containers" is
# lenient only for a refusal of the type (TypeError, AttributeError: `deps.append` on a tuple);
# an exception of the code's own is an answer there (Replay.type_refusal_roots).
# "scale": every number of the inputs three or four times as large (`_scaled`), lenient (a size
# the code refuses). "doubled": every list a call of the tests receives holds its items twice
# over (the harness's DOUBLED_NAME), lenient only for a type refusal, like "containers".
# "plain": the literals kept, each test in a thread of its own and without its monkeypatched
# module constants (`_PlainRun`), not lenient: the inputs are the tests' own. "boxed": the literals
# kept, each element of the tree's functions' list, tuple or range arguments handed
# over as a one-item tuple (the harness's BOXED_CALL_NAME), for fixes right only for scalar
# items; lenient only for a type refusal. "layout": every document among the literals and the
# text data files laid out otherwise (an indented line, a whitespace-only line, one more comment)
# and every number of an arithmetic expression in parentheses (`_relaid`), lenient. "repeated":
# the literals kept, each list a test assigns to a name holding its items twice over
# (`_RepeatLists`), lenient (repeated items may be refused). "far": every number ten or sixteen
# times as large and literal powers' exponents ten times (`_FarPowers`), lenient. The "scale" and "far" copies also widen the tests' string pools
# (`_widen_pools`). "foreign": the numbers inside strings 18 to 21 digits long and the non-ASCII
# characters from other scripts of the same UTF-8 width, in the literals and the data files
# (`_ForeignText`), lenient. "offgrid": every float of the inputs moved off the tests' binary grid
# by a few units of 2 ** -21 or 2 ** -31 (`_off_grid`), lenient. "marks": the ASCII punctuation
# of every string among the inputs (file names and glob patterns included) and of the data files
# mapped to marks the tests never write (`_Marks`), lenient. "digits": the ASCII digits of every
# string among the inputs and of the data files as the digits of another script (`_ScriptDigits`),
# lenient. "seeds": the literals kept, every seed of a random generator moved to another
# (`_Reseed`), not lenient: the tests' own generators draw the inputs. "sweeps": the literals kept,
# every literal `range(a, b)` with a >= 1 moved to the next window of its length (`_ShiftSweeps`),
# lenient. "magnified": the literals kept, the tree's functions called through the harness's
# MAGNIFIED_CALL_NAME, which maps every int and Fraction of their arguments by one affine map far up
# (n -> n * (10 ** 18 + 9) + 3 * 10 ** 17 + 7), lenient: a fix exact only while the numbers fit a
# float (a float distance, a nudge of 1e-9, a float solve snapped back with `limit_denominator`)
# answers otherwise than the exact reference on the tests' own configurations, mapped. "quotes":
# every single quote of the strings among the inputs and of the data files as a double quote and
# the other way round (`_SwappedQuotes`), not lenient: where the reference answers the swapped
# input, a fix that refuses it (a template's filter arguments in single quotes) is wrong. "spaces": every run of ASCII whitespace in those
# strings and files followed by eighteen no-break and em spaces (`_WiderSpaces`), lenient.
# "uneven": as "magnified", each mapped number also nudged by (n * n) % 3 units, which is no affine
# function of n: points on a line or an edge end up a unit or two off it, far out, where a relative
# tolerance takes them for on it. "minified": as "magnified", with n -> n / (10 ** 18 + 9) as an
# exact Fraction: a nudge of 1e-9 or a float distance is then larger than the whole input; only
# for tests that build Fractions themselves (elsewhere the copy is empty). "long": every string
# among the inputs that holds whitespace, and the JSON data files' string values, repeated past
# LONG_TEXT_CHARS (`_LongerTexts`), lenient: a fix that switched to another path for long texts was
# right on every tested one. "wider": every int literal of the functions' bodies twice as large,
# decorators, module constants and `range` counts kept (`_DoubleSizes`), lenient: a fix right only
# up to the bounds the tests' generators draw within agreed on every draw. "domain": every word of the
# tree's own tables (`vocabulary`) in the strings and data files swapped for another of its table,
# one permutation for the folder (`_DomainWords`), strict: a fix right only on the tested words of a
# table (exact conversion only for the tested unit symbols) agreed on every other copy; a tree
# without such tables has no such copy.
_VARIANTS = ((0.0, "near"), (1.0, "near"), (1.0, "type"), (0.0, "kind"), (0.5, "near"), (0.0, "unhashable"),
             (0.5, "rename"), (1.0, "sequence"), (1.0, "keys"), (1.0, "containers"), (1.0, "scale"),
             (1.0, "doubled"), (0.0, "plain"), (0.0, "boxed"), (1.0, "layout"), (0.0, "repeated"), (1.0, "far"),
             (1.0, "foreign"), (1.0, "offgrid"), (1.0, "marks"), (1.0, "digits"), (0.0, "seeds"),
             (0.0, "sweeps"), (0.0, "magnified"), (1.0, "quotes"),
             (1.0, "spaces"), (0.0, "uneven"), (0.0, "minified"), (1.0, "long"), (0.0, "wider"), (1.0, "domain"))
# The copies that keep the literals and map the numbers of the tree's functions' arguments.
_MAPPED_NUMBER_KINDS = ("magnified", "uneven", "minified")
_LENIENT_KINDS = ("type", "kind", "sequence", "keys", "scale", "layout", "repeated", "far", "foreign", "offgrid",
                  "marks", "digits", "sweeps", "spaces", "long", "wider") + _MAPPED_NUMBER_KINDS
_TYPE_REFUSAL_KINDS = ("containers", "doubled", "boxed")
# Copies whose draws come from a generator of their own (seeded by the tests), so that adding
# them moved no draw of the copies before them.
_OWN_RNG_KINDS = ("sequence", "keys", "containers", "scale", "doubled", "plain", "boxed", "layout", "repeated", "far",
                  "foreign", "offgrid", "marks", "digits", "seeds", "sweeps", "quotes", "spaces", "long", "wider",
                  "domain") + _MAPPED_NUMBER_KINDS


def _variant(k: int) -> tuple[float, str]:
  return _VARIANTS[k] if k < len(_VARIANTS) else (0.5, "near")


def tree_names(modules: list[tuple[str, str]], tree_dir: str, roots: tuple[str, ...]) -> frozenset[str]:
  """Names the test modules import from the tree (`from pkg.mod import f`, pkg a module of
  `tree_dir` under one of `roots`)."""
  from rl.outcome.oracle import _module_file  # pylint: disable=import-outside-toplevel
  names = set()
  for _, source in modules:
    try:
      module = ast.parse(source)
    except (SyntaxError, ValueError):
      continue
    for node in ast.walk(module):
      if isinstance(node, ast.ImportFrom) and node.module and not node.level \
          and _module_file(node.module, tree_dir, roots):
        names.update(a.asname or a.name for a in node.names if a.name != "*")
  return frozenset(names)


def build_replay(hidden_tests_dir: str, dest: str, rng: random.Random, variants: int = 5, tree_dir: str = "",
                 roots: tuple[str, ...] = (".",)) -> Replay | None:
  """The replay of the hidden tests at `hidden_tests_dir` (placed at `dest` in a tree): copy 0
  at `dest` itself with the literals kept, copies 1.. under REPLAY_DIR with inputs perturbed
  (copy 1 every literal near its value, copy 2 every literal to another type or case, copy 3
  the arguments of the tree's functions (imported from `tree_dir`) of another kind, copy 4 about
  half the literals, copy 5 the elements of the tree's functions' arguments unhashable, copy 6
  the tests' own words renamed consistently and about half the other literals, copy 7 each run
  of call statements followed by the same calls reversed and the ints moved by fractions, copy 8
  the words as (word, len) keys and the ints moved by fractions, copy 9 the list inputs as
  tuples, copy 10 the numbers scaled up, copy 11 the list inputs doubled, copy 12 the literals
  kept with each test in a thread of its own and its module constants unpatched, copy 13 the
  elements of the tree's functions' arguments as one-item tuples, copy 14 the documents and
  expressions laid out otherwise, copy 15 the lists the tests assign repeated, copy 16 the
  numbers scaled an order of magnitude up and literal powers' exponents tenfold, copy 17 the
  numbers inside strings and the non-ASCII characters foreign (`_ForeignText`), copy 18 the floats
  off the tests' grid (`_off_grid`), copy 19 the punctuation of the strings and data files
  mapped to marks the tests never write (`_Marks`), copy 20 the ASCII digits of the strings and
  data files as another script's (`_ScriptDigits`), copy 21 the literals kept and the seeds of
  the tests' random generators moved (`_Reseed`), copy 22 the literals kept and the tests'
  literal sweeps `range(a, b)` moved to the next window (`_ShiftSweeps`), copy 23 the literals
  kept and the ints and Fractions of the tree's functions' arguments mapped far up by one affine
  map (the harness's MAGNIFIED_CALL_NAME), copy 24 the quotes of the strings and data files
  swapped (`_SwappedQuotes`), copy 25 every whitespace run of the strings and data files
  followed by wide Unicode spaces (`_WiderSpaces`), copies 26 and 27 the literals kept and the
  numbers of the tree's functions' arguments mapped far up and nudged, or far down,
  copy 28 the strings that hold whitespace repeated past 8,192 characters (`_LongerTexts`), copy
  29 the int literals of the functions' bodies doubled (`_DoubleSizes`), copy 30 the words of the
  tree's own tables swapped (`_DomainWords`), the others about half the literals); the data files perturbed in every copy but the offgrid, seeds, sweeps, wider and
  mapped-number ones.
  None when the folder has no test module."""
  modules, data = [], []
  for dirpath, dirnames, filenames in os.walk(hidden_tests_dir):
    dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
    for name in sorted(filenames):
      path = os.path.join(dirpath, name)
      rel = os.path.relpath(path, hidden_tests_dir)
      if os.path.islink(path):
        continue
      if name.endswith(".py"):
        if _TEST_MODULE.match(name):
          with open(path, encoding="utf-8", errors="replace") as f:
            modules.append((rel, f.read()))
      elif os.path.getsize(path) <= MAX_DATA_FILE_BYTES:
        try:
          with open(path, encoding="utf-8") as f:
            data.append((rel, f.read()))
        except (OSError, UnicodeDecodeError):
          continue  # a binary file: copied as it is
  if not modules:
    return None
  dest = os.path.normpath(dest)
  names = tree_names(modules, tree_dir, roots) if tree_dir else frozenset()
  # A generator of its own (seeded by the tests), so the other copies draw what they drew before
  # the renaming copy existed.
  sources = [source for _, source in modules]
  renames = rename_map(sources, random.Random(zlib.crc32("\0".join(sources).encode()))) if variants > 6 else {}
  # One mapping for the whole folder, so that a string of a test module and a data file's stay alike.
  foreign = _ForeignText(sources + [text for _, text in data]) if variants > 17 else None
  everything = "\0".join(sources + [text for _, text in data])
  marks = _Marks(sources, random.Random(zlib.crc32(everything.encode())), data) if variants > 19 else None
  digits = _ScriptDigits(sources, random.Random(zlib.crc32(everything.encode())), data) if variants > 20 else None
  quotes = _SwappedQuotes(sources, data) if variants > 24 else None
  spaces = _WiderSpaces(sources, data) if variants > 25 else None
  longer = _LongerTexts(sources, data) if variants > 28 else None
  vocab = Vocabulary(vocabulary(tree_dir, (dest, ORACLE_DIR)) if tree_dir and variants > 30 else ())
  domain = _DomainWords(vocab, random.Random(zlib.crc32(repr(vocab.groups).encode())), sources, data) if vocab else None
  files: list[tuple[str, str]] = []
  roots: list[str] = []
  test_paths: list[str] = []
  # Numbers far down are Fractions: only where the tests hand the code Fractions themselves does
  # the statement cover them (a rate limiter tested on ints may keep a Fraction's type where the
  # reference converts to float, and both are right).
  fractions_tested = any(re.search(r"\bFraction\b", source) for source in sources)
  for k in range(max(1, variants)):
    root = dest if k == 0 else os.path.normpath(os.path.join(REPLAY_DIR, f"v{k}", dest))
    roots.append(root)
    p, kind = _variant(k)
    if kind == "minified" and not fractions_tested:
      continue  # an empty copy: nothing of it runs
    if kind == "domain" and domain is None:
      continue  # the tree writes no vocabulary: nothing to swap
    copy_rng = random.Random(zlib.crc32("\0".join([kind, *sources]).encode())) if kind in _OWN_RNG_KINDS else rng
    strings = {"marks": marks, "digits": digits, "quotes": quotes, "spaces": spaces, "long": longer,
               "domain": domain}.get(kind, foreign)
    for rel, source in modules:
      text = rewrite_test_module(source, copy_rng if p else None, p, "near" if kind == "rename" else kind, names,
                                 renames if kind == "rename" else None, strings)
      if text is None:
        continue
      target = os.path.normpath(os.path.join(root, rel))
      files.append((target, text))
      test_paths.append(target)
    for rel, text in data:
      if _variant(k)[1] == "rename":
        text = rename_text(text, renames)
      files.append((os.path.normpath(os.path.join(root, rel)),
                    perturb_data_file(rel, text, copy_rng, kind, strings)))
  if not test_paths:
    return None
  uses_caplog = any("caplog" in source for _, source in modules)
  # Another type is often outside what the code accepts: a fix that refuses it (raises) where
  # the reference went on is not compared past that point.
  lenient = tuple(root for k, root in enumerate(roots) if _variant(k)[1] in _LENIENT_KINDS)
  type_refusal = tuple(root for k, root in enumerate(roots) if _variant(k)[1] in _TYPE_REFUSAL_KINDS)
  return Replay(roots=tuple(roots), files=tuple(files), test_paths=tuple(test_paths), logging=uses_caplog,
                lenient_roots=lenient, type_refusal_roots=type_refusal,
                numeric_roots=tuple(root for k, root in enumerate(roots) if _variant(k)[1] == "minified"))


def uses_replay(mode: str, uncovered: int, calls: int) -> bool:
  """Whether a task's plan replays its tests: `mode` "always", "never", or "auto" (when some
  hidden test function makes no call the call oracle can reproduce, or there are no calls)."""
  if mode not in ("auto", "always", "never"):
    raise ValueError(f"antihack.oracle_replay must be auto, always or never, got {mode!r}")
  return mode == "always" or (mode == "auto" and (uncovered > 0 or calls == 0))


def result_events(result: Any) -> tuple[str, list] | None:
  """(outcome, recorded events) of one replayed test's encoded result, None if malformed."""
  if isinstance(result, list) and len(result) == 3 and result[0] == "replay" and isinstance(result[1], str) \
      and isinstance(result[2], list):
    return result[1], result[2]
  return None
