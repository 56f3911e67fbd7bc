"""Mutation operators that plant single-line bugs in correct functions, and a fast pre-filter.

Every mutant changes exactly one line, so its fix is one short exact-string edit. Operators:
comparison and arithmetic swaps, off-by-one in ranges and indices, wrong return, dropped
condition, swapped arguments, wrong initial value. The pre-filter runs a function's test
cases on each mutant in worker processes (with time limits) to find the ones the tests kill;
the final verdict on a task still comes from running its real tests.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import io
import multiprocessing
import re
import signal
import tokenize
from typing import Any, Sequence

OPERATORS = ("comparison_swap", "arithmetic_swap", "off_by_one", "wrong_return", "dropped_condition",
             "swapped_arguments", "wrong_initial_value")

_CMP_SWAP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
_ARITH_SWAP = {"+": "-", "-": "+", "*": "+", "//": "/", "%": "//", "+=": "-=", "-=": "+=", "*=": "+="}
_INIT_SWAP = {"0": "1", "1": "0", "-1": "0", '""': '" "', "''": "' '", "[]": "[0]", "True": "False",
              "False": "True", "None": "0", "0.0": "1.0", "{}": "{0: 0}"}
_INIT_RE = re.compile(r"^(\s*)([A-Za-z_][\w.]*) = (.+?)\s*$")
_RETURN_RE = re.compile(r"^(\s*)return (.+?)\s*$")
_COND_RE = re.compile(r"^(\s*)(if|elif|while) (.+):\s*$")
_CALL2_RE = re.compile(r"(\b[A-Za-z_][\w.]*)\((\s*[\w.'\"-]+), (\s*[\w.'\"-]+)\)")
_SUB_RE = re.compile(r"\b([A-Za-z_]\w*(?:\[[^\]]+\])?) - ([A-Za-z_]\w*(?:\[[^\]]+\])?)")
_LEN_IN_RANGE_RE = re.compile(r"range\((.*?)len\((\w+)\)(\s*[-+]\s*\d+)?")


@dataclasses.dataclass(frozen=True)
class Mutation:
  operator: str
  line: int  # 0-based index of the changed line in the function's code
  old_line: str
  new_line: str

  def apply(self, code: str) -> str:
    lines = code.splitlines(keepends=True)
    assert lines[self.line].rstrip("\n") == self.old_line
    lines[self.line] = self.new_line + "\n"
    return "".join(lines)


def _binary_context(prev: tokenize.TokenInfo | None) -> bool:
  return prev is not None and (prev.type in (tokenize.NAME, tokenize.NUMBER, tokenize.STRING)
                               or prev.string in (")", "]")) and prev.string not in (
                                   "return", "in", "and", "or", "not", "if", "else", "=")


def _token_mutations(code: str) -> list[tuple[str, int, int, int, str]]:
  """(operator, line, col_start, col_end, replacement) candidates from the token stream."""
  out = []
  tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
  lines = code.splitlines()
  prev = None
  for tok in tokens:
    row, col = tok.start
    line = lines[row - 1] if row - 1 < len(lines) else ""
    if tok.type == tokenize.OP:
      if tok.string in _CMP_SWAP:
        out.append(("comparison_swap", row - 1, col, tok.end[1], _CMP_SWAP[tok.string]))
      elif tok.string in _ARITH_SWAP and (tok.string.endswith("=") or _binary_context(prev)):
        out.append(("arithmetic_swap", row - 1, col, tok.end[1], _ARITH_SWAP[tok.string]))
    elif tok.type == tokenize.NUMBER and tok.string.isdigit() and ("range(" in line or "[" in line):
      stripped = line.strip()
      if not _INIT_RE.match(line) or "[" in stripped.split("=", 1)[1]:
        n = int(tok.string)
        out.append(("off_by_one", row - 1, col, tok.end[1], str(n + 1)))
        if n > 0:
          out.append(("off_by_one", row - 1, col, tok.end[1], str(n - 1)))
    if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT):
      prev = tok
  return out


def _line_mutations(code: str) -> list[tuple[str, int, str]]:
  """(operator, line, new line) candidates from line-level patterns."""
  out = []
  lines = code.splitlines()
  params = re.findall(r"def \w+\(([^)]*)\)", code)
  first_param = None
  if params:
    names = [p.split("=")[0].strip() for p in params[0].split(",") if p.strip() and p.strip() != "self"]
    first_param = names[0] if names else None
  for i, line in enumerate(lines):
    m = _RETURN_RE.match(line)
    if m:
      indent, expr = m.groups()
      alternatives = {"True": "False", "False": "True", "0": "1", "1": "0", "-1": "0", "None": "0"}
      if expr in alternatives:
        out.append(("wrong_return", i, f"{indent}return {alternatives[expr]}"))
      elif expr.startswith("not "):
        out.append(("wrong_return", i, f"{indent}return {expr[4:]}"))
      elif re.fullmatch(r"[A-Za-z_]\w*", expr):
        other = first_param if first_param and first_param != expr else "None"
        out.append(("wrong_return", i, f"{indent}return {other}"))
    m = _COND_RE.match(line)
    if m:
      indent, kw, cond = m.groups()
      for op in (" and ", " or "):
        if cond.count(op) == 1 and "(" not in cond.split(op)[0][-1:]:
          left, right = cond.split(op)
          out.append(("dropped_condition", i, f"{indent}{kw} {left}:"))
          out.append(("dropped_condition", i, f"{indent}{kw} {right}:"))
      if cond.startswith("not ") and " and " not in cond and " or " not in cond:
        out.append(("dropped_condition", i, f"{indent}{kw} {cond[4:]}:"))
      if " not in " in cond:
        out.append(("dropped_condition", i, f"{indent}{kw} {cond.replace(' not in ', ' in ', 1)}:"))
    m = _INIT_RE.match(line)
    if m:
      indent, name, value = m.groups()
      if value in _INIT_SWAP:
        out.append(("wrong_initial_value", i, f"{indent}{name} = {_INIT_SWAP[value]}"))
    for m in _CALL2_RE.finditer(line):
      fn, a, b = m.groups()
      if fn in ("range", "print", "isinstance"):  # range(b, a) is an off-by-one family of its own
        continue
      new = line[:m.start()] + f"{fn}({b.strip()}, {a.strip()})" + line[m.end():]
      out.append(("swapped_arguments", i, new))
    for m in _SUB_RE.finditer(line):
      a, b = m.groups()
      if a in ("len",) or line.lstrip().startswith("def "):
        continue
      new = line[:m.start()] + f"{b} - {a}" + line[m.end():]
      out.append(("swapped_arguments", i, new))
    m = _LEN_IN_RANGE_RE.search(line)
    if m and not m.group(3):
      new = line[:m.start()] + f"range({m.group(1)}len({m.group(2)}) - 1" + line[m.end():]
      out.append(("off_by_one", i, new))
  return out


def enumerate_mutations(code: str) -> list[Mutation]:
  """All distinct single-line mutants of `code` that still compile, in a stable order."""
  lines = code.splitlines()
  candidates: list[tuple[str, int, str]] = []
  for op, row, c0, c1, rep in _token_mutations(code):
    line = lines[row]
    candidates.append((op, row, line[:c0] + rep + line[c1:]))
  candidates.extend(_line_mutations(code))
  seen, out = set(), []
  for op, row, new_line in candidates:
    old_line = lines[row]
    if new_line == old_line or (row, new_line) in seen or lines[row].lstrip().startswith(("def ", "class ")):
      continue
    seen.add((row, new_line))
    mutation = Mutation(op, row, old_line, new_line)
    try:
      compile(mutation.apply(code), "<mutant>", "exec")
    except SyntaxError:
      continue
    out.append(mutation)
  return out


# --- pre-filter ----------------------------------------------------------------------------


class _CaseTimeout(Exception):
  pass


def _on_alarm(signum, frame):  # pragma: no cover - runs in worker processes
  raise _CaseTimeout()


def _worker_init() -> None:  # pragma: no cover - runs in worker processes
  import resource  # pylint: disable=import-outside-toplevel
  try:
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
  except (ValueError, OSError):
    pass
  signal.signal(signal.SIGALRM, _on_alarm)


TIMED_OUT = -1  # marker in failing_cases' result: some case hit the time limit


def failing_cases(code: str, cases: Sequence[tuple[str, Any]], time_limit_s: float = 0.5) -> list[int] | None:
  """Indices of the cases that fail on `code` (None when the module itself fails).

  A case that exceeds the time limit adds TIMED_OUT to the list: such mutants (infinite
  loops) would make every grading run wait for the full timeout, so callers drop them.
  """
  previous = signal.signal(signal.SIGALRM, _on_alarm)  # main thread only, like any alarm use
  try:
    return _failing_cases(code, cases, time_limit_s)
  finally:
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


def _failing_cases(code: str, cases: Sequence[tuple[str, Any]], time_limit_s: float) -> list[int] | None:
  namespace: dict[str, Any] = {}
  try:
    signal.setitimer(signal.ITIMER_REAL, time_limit_s)
    exec(compile(code, "<mutant>", "exec"), namespace)  # pylint: disable=exec-used
  except BaseException:  # pylint: disable=broad-except
    return None
  finally:
    signal.setitimer(signal.ITIMER_REAL, 0)
  failed = []
  for idx, (expr, expected) in enumerate(cases):
    try:
      signal.setitimer(signal.ITIMER_REAL, time_limit_s)
      ok = eval(expr, dict(namespace)) == expected  # pylint: disable=eval-used
    except _CaseTimeout:
      failed.append(TIMED_OUT)
      ok = False
    except BaseException:  # pylint: disable=broad-except
      ok = False
    finally:
      signal.setitimer(signal.ITIMER_REAL, 0)
    if not ok:
      failed.append(idx)
  return failed


def _run_batch(batch: list[tuple[str, tuple]]) -> list[list[int] | None]:  # pragma: no cover - worker
  return [failing_cases(code, cases) for code, cases in batch]


def prefilter(jobs: Sequence[tuple[str, Sequence[tuple[str, Any]]]], workers: int = 2,
              chunk: int = 32) -> list[list[int] | None]:
  """failing_cases for many (code, cases) jobs in spawned worker processes."""
  jobs = [(code, tuple(cases)) for code, cases in jobs]
  batches = [jobs[i:i + chunk] for i in range(0, len(jobs), chunk)]
  ctx = multiprocessing.get_context("spawn")  # the caller may hold threads (e.g. JAX): no fork
  with concurrent.futures.ProcessPoolExecutor(max(1, workers), mp_context=ctx, initializer=_worker_init) as pool:
    results = list(pool.map(_run_batch, batches))
  return [r for batch in results for r in batch]
