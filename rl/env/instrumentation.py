"""Environment instrumentation: progress prints inserted into an agent's program before it runs.

A frozen instrumenter (`ast`: rule-based, no model; `llm`: a frozen model through the
judge's OpenAI-compatible backend) adds a marker print after each stage of an ML
program (imported packages, loaded data, defined model, trained model, made
predictions, wrote submission). The result is verified: strip the markers, and the
AST must equal the original's; otherwise the original runs unchanged. Markers carry
a per-run nonce, so a program cannot forge them by printing marker-like lines.

    instrumenter = make_instrumenter(config.instrumentation)    # or INSTRUMENTERS.get("ast")(cfg)
    result = instrumenter.instrument(source)                     # result.source is what runs
    report = parse_markers(output, nonce=result.nonce)           # report.count -> +0.1 each
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import logging
import re
import secrets
from typing import Any, Callable, Iterable, Sequence

from rl import config_fields, parsing, registry

logger = logging.getLogger("rl.env.instrumentation")

STAGES = ("imported_packages", "loaded_data", "defined_model", "trained_model", "made_predictions",
          "wrote_submission")
_STAGE_INDEX = {s: i for i, s in enumerate(STAGES)}
MARKER_TAG = "progress"
_NONCE_RE = re.compile(r"^[0-9a-f]{6,32}$")
_MARKER_LINE_RE = re.compile(
    r"\[" + MARKER_TAG + r":(?P<nonce>[0-9a-f]{6,32})\] (?P<stage>[a-z_]+)(?: (?P<time>[0-9]+(?:\.[0-9]*)?))?")


# --------------------------------------------------------------------------------------------------
# Markers
# --------------------------------------------------------------------------------------------------


def new_nonce() -> str:
  return secrets.token_hex(4)


def marker_text(stage: str, nonce: str) -> str:
  return f"[{MARKER_TAG}:{nonce}] {stage}"


def marker_statement(stage: str, nonce: str) -> str:
  """The exact line inserted after a stage (one expression statement, no new names).

  `__import__("time")` keeps the marker self-contained: no import is added, and the
  program's own names (it may shadow or never import `time`) are untouched.
  """
  if stage not in _STAGE_INDEX:
    raise ValueError(f"unknown stage {stage!r}; known stages: {', '.join(STAGES)}")
  return f'print("{marker_text(stage, nonce)}", __import__("time").time(), flush=True)'


@dataclasses.dataclass
class StageReport:
  """Stages found in a program's output (markers of one nonce), with their timestamps."""

  stages: list[str]  # distinct stages in order of first appearance
  first_seen: dict[str, float]  # stage -> unix time of its first marker
  stage_seconds: dict[str, float]  # stage -> seconds since the previous stage (or the start)
  forged: int = 0  # marker-like lines with another nonce (a program imitating the markers)

  @property
  def count(self) -> int:
    return len(self.stages)

  def metrics(self, prefix: str = "instrumentation/") -> dict[str, float]:
    out = {f"{prefix}stages": float(self.count)}
    for stage, seconds in self.stage_seconds.items():
      out[f"{prefix}{stage}_s"] = float(seconds)
    return out

  def to_dict(self) -> dict[str, Any]:
    return {**dataclasses.asdict(self), "count": self.count}


def parse_markers(output: str, nonce: str | None, *, start_time: float | None = None) -> StageReport:
  """Reads stage markers from a program's output.

  Only markers with `nonce` count (None: any nonce, for tools reading old logs). Per-stage
  seconds are measured from the previous stage's marker, the first from `start_time`
  (the run's start) when given.
  """
  if not isinstance(output, str):
    raise TypeError(f"output must be a str, got {type(output).__name__}")
  stages: list[str] = []
  first_seen: dict[str, float] = {}
  forged = 0
  for m in _MARKER_LINE_RE.finditer(output):
    if nonce is not None and m.group("nonce") != nonce:
      forged += 1
      continue
    stage = m.group("stage")
    if stage not in _STAGE_INDEX or stage in first_seen:
      continue
    stages.append(stage)
    first_seen[stage] = float(m.group("time")) if m.group("time") else float("nan")
  stage_seconds: dict[str, float] = {}
  previous = start_time
  for stage in sorted(stages, key=lambda s: first_seen[s]):
    t = first_seen[stage]
    if previous is not None and t == t:  # NaN-safe: a marker without time gets no duration
      stage_seconds[stage] = max(0.0, t - previous)
    if t == t:
      previous = t
  return StageReport(stages, first_seen, stage_seconds, forged)


def strip_marker_lines(output: str, nonce: str) -> str:
  """The output without marker lines (what the original program would have printed)."""
  tag = f"[{MARKER_TAG}:{nonce}] "
  return "".join(line for line in output.splitlines(keepends=True) if not line.startswith(tag))


# --------------------------------------------------------------------------------------------------
# Verification: strip the inserted prints, the AST must equal the original's
# --------------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _canonical_marker_dumps(nonce: str) -> frozenset[str]:
  return frozenset(ast.dump(parsing.parse(marker_statement(s, nonce)).body[0]) for s in STAGES)


def _is_marker_stmt(node: ast.AST, nonce: str) -> bool:
  """True only for the exact marker statement of a known stage: a print that carries anything
  else (an extra argument with a side effect, another keyword) is program code, not a marker."""
  if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
    return False
  call = node.value
  if not (isinstance(call.func, ast.Name) and call.func.id == "print" and call.args):
    return False
  first = call.args[0]
  if not (isinstance(first, ast.Constant) and isinstance(first.value, str)
          and first.value.startswith(f"[{MARKER_TAG}:{nonce}] ")):
    return False
  return ast.dump(node) in _canonical_marker_dumps(nonce)


_BLOCK_FIELDS = ("body", "orelse", "finalbody")


class _MarkerStripper(ast.NodeTransformer):
  def __init__(self, nonce: str):
    self.nonce = nonce
    self.removed = 0

  def generic_visit(self, node: ast.AST) -> ast.AST:
    for field in _BLOCK_FIELDS:
      block = getattr(node, field, None)
      if isinstance(block, list):
        kept = [s for s in block if not _is_marker_stmt(s, self.nonce)]
        self.removed += len(block) - len(kept)
        setattr(node, field, kept)
    return super().generic_visit(node)


def strip_markers(tree: ast.AST, nonce: str) -> tuple[ast.AST, int]:
  """Removes marker statements of `nonce` from every block; returns (tree, number removed)."""
  stripper = _MarkerStripper(nonce)
  return stripper.visit(tree), stripper.removed


def verify_equivalent(original: str, instrumented: str, nonce: str) -> tuple[bool, str]:
  """(True, "") when `instrumented` is `original` plus marker prints only; else (False, why)."""
  try:
    original_tree = parsing.parse(original)
  except SyntaxError as e:
    return False, f"the original program does not parse: {e.msg} (line {e.lineno})"
  try:
    new_tree = parsing.parse(instrumented)
  except SyntaxError as e:
    return False, f"the instrumented program does not parse: {e.msg} (line {e.lineno})"
  stripped, removed = strip_markers(new_tree, nonce)
  if ast.dump(stripped, include_attributes=False) != ast.dump(original_tree, include_attributes=False):
    return False, "the instrumented program differs from the original beyond the inserted prints"
  if removed == 0 and instrumented != original:
    return False, "no marker was inserted but the text changed"
  return True, ""


# --------------------------------------------------------------------------------------------------
# Instrumenters
# --------------------------------------------------------------------------------------------------


@dataclasses.dataclass
class InstrumentationResult:
  """What runs (`source`) and how it came about. `source` is the original on any failure."""

  source: str
  original: str
  nonce: str
  backend: str
  verified: bool  # markers inserted and verified equivalent
  inserted: list[tuple[int, str]] = dataclasses.field(default_factory=list)  # (line after, stage)
  fallback_reason: str = ""

  @property
  def stages(self) -> list[str]:
    return sorted({s for _, s in self.inserted}, key=_STAGE_INDEX.__getitem__)

  def parse(self, output: str, *, start_time: float | None = None) -> StageReport:
    return parse_markers(output, self.nonce, start_time=start_time)

  def to_dict(self) -> dict[str, Any]:
    return {"backend": self.backend, "verified": self.verified, "nonce": self.nonce,
            "stages_inserted": self.stages, "inserted": [list(x) for x in self.inserted],
            "fallback_reason": self.fallback_reason}


class Instrumenter:
  """Base class: `instrument(source)` never raises for bad programs, it falls back."""

  name = "base"

  def instrument(self, source: str, *, nonce: str | None = None) -> InstrumentationResult:
    if not isinstance(source, str):
      raise TypeError(f"source must be a str, got {type(source).__name__}")
    nonce = nonce or new_nonce()
    if not _NONCE_RE.match(nonce):
      raise ValueError(f"nonce must be 6-32 lowercase hex characters, got {nonce!r}")
    try:
      candidate, inserted = self._instrument(source, nonce)
    except SyntaxError as e:
      return InstrumentationResult(source, source, nonce, self.name, False,
                                   fallback_reason=f"the program does not parse: {e.msg} (line {e.lineno})")
    except Exception as e:  # a failing instrumenter must never stop the program from running
      logger.warning("instrumenter %s failed: %s: %s", self.name, type(e).__name__, e)
      return InstrumentationResult(source, source, nonce, self.name, False,
                                   fallback_reason=f"instrumenter error: {type(e).__name__}: {e}")
    if candidate == source:
      return InstrumentationResult(source, source, nonce, self.name, False, [],
                                   fallback_reason="" if self.name == "none" else "no stage found")
    ok, why = verify_equivalent(source, candidate, nonce)
    if not ok:
      return InstrumentationResult(source, source, nonce, self.name, False, fallback_reason=why)
    if not inserted:
      inserted = _find_inserted(candidate, nonce)
    return InstrumentationResult(candidate, source, nonce, self.name, True, inserted)

  def _instrument(self, source: str, nonce: str) -> tuple[str, list[tuple[int, str]]]:
    raise NotImplementedError


def _find_inserted(source: str, nonce: str) -> list[tuple[int, str]]:
  """(line, stage) of each marker statement in `source` (for backends that rewrite text)."""
  out = []
  for node in ast.walk(parsing.parse(source)):
    if _is_marker_stmt(node, nonce):
      stage = node.value.args[0].value.split("] ", 1)[1].split()[0]
      if stage in _STAGE_INDEX:
        out.append((node.lineno, stage))
  return sorted(out)


class NoInstrumenter(Instrumenter):
  """Instrumentation off: the program runs as written."""

  name = "none"

  def _instrument(self, source, nonce):
    return source, []


# --- the ast backend ------------------------------------------------------------------------------

_LOAD_CALLS = frozenset(("read_csv", "read_table", "read_parquet", "read_json", "read_excel", "read_feather",
                         "read_pickle", "read_fwf", "loadtxt", "genfromtxt", "fromfile", "load_dataset",
                         "load_svmlight_file", "load_iris", "load_digits", "load_breast_cancer", "load_wine",
                         "load_diabetes", "reader", "DictReader", "load_data", "read_data", "readlines"))
_MODEL_RE = re.compile(
    r"(Classifier|Regressor|Regression|SVC|SVR|NB|Forest|Boosting|Booster|Net|Network|Model|Ridge|Lasso|"
    r"ElasticNet|Perceptron|KNN|KMeans|Pipeline|Sequential|CatBoost\w*|LGBM\w*|XGB\w*)$|"
    r"^(make_pipeline|Pipeline)$|^(build|make|create|get|define|init|new)_?(model|classifier|regressor|estimator)$",
    re.I)
_TRAIN_METHODS = frozenset(("fit", "train", "partial_fit", "fit_generator"))
_TRAIN_FUNCS_RE = re.compile(r"^(train|fit)(_model|_classifier|_regressor|_estimator)?$", re.I)
_PREPROCESSOR_RE = re.compile(r"vector|scal|encod|imput|token|transform|pca|svd|select|normaliz|binariz|poly",
                              re.I)
_PREDICT_RE = re.compile(r"^(predict\w*|decision_function|make_predictions|inference)$", re.I)
_WRITE_CALLS = frozenset(("to_csv", "savetxt", "writerow", "writerows", "to_parquet", "write_submission",
                          "save_submission"))
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_NO_ANCHOR = (ast.Return, ast.Raise, ast.Break, ast.Continue, ast.Pass, ast.Global, ast.Nonlocal)


def _dotted(node: ast.AST) -> str:
  if isinstance(node, ast.Name):
    return node.id
  if isinstance(node, ast.Attribute):
    inner = _dotted(node.value)
    return f"{inner}.{node.attr}" if inner else node.attr
  if isinstance(node, ast.Call):
    return _dotted(node.func)
  if isinstance(node, ast.Subscript):
    return _dotted(node.value)
  return ""


def _walk_same_scope(node: ast.AST) -> Iterable[ast.AST]:
  """ast.walk that does not enter nested functions, classes or lambdas."""
  stack = [node]
  while stack:
    n = stack.pop()
    yield n
    for child in ast.iter_child_nodes(n):
      if not isinstance(child, _NESTED_SCOPES):
        stack.append(child)


def _call_stages(call: ast.Call, functions: dict[str, set[str]]) -> set[str]:
  stages = set()
  func = call.func
  name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
  receiver = _dotted(func.value) if isinstance(func, ast.Attribute) else ""
  if not name:
    return stages
  if isinstance(func, ast.Name) and name in functions:
    stages |= functions[name]  # a call to one of the program's own functions does what its body does
  if name in _LOAD_CALLS or (name == "load" and receiver in ("np", "numpy", "json", "pickle", "joblib", "torch")):
    stages.add("loaded_data")
  if name == "open" and isinstance(func, ast.Name) and _opens_for_reading(call):
    stages.add("loaded_data")
  if _MODEL_RE.search(name):
    stages.add("defined_model")
  if name in _TRAIN_METHODS and isinstance(func, ast.Attribute) and not _PREPROCESSOR_RE.search(receiver):
    stages.add("trained_model")
  if isinstance(func, ast.Name) and _TRAIN_FUNCS_RE.match(name):
    stages.add("trained_model")
  if _PREDICT_RE.match(name):
    stages.add("made_predictions")
  if name in _WRITE_CALLS or (name in ("write", "writelines") and isinstance(func, ast.Attribute)
                              and receiver not in ("sys.stdout", "sys.stderr")):
    stages.add("wrote_submission")
  return stages


def _opens_for_reading(call: ast.Call) -> bool:
  """open(...) without a write mode: the program loads data by hand."""
  mode_nodes = call.args[1:2] + [k.value for k in call.keywords if k.arg == "mode"]
  for m in mode_nodes:
    if not (isinstance(m, ast.Constant) and isinstance(m.value, str)) or any(c in m.value for c in "wax+"):
      return False  # a write mode, or a mode only known at run time
  return True


_PREDICTION_NAME_RE = re.compile(
    r"^(y_?)?(pred|preds|predictions?|predicted|hat|outputs?|probs|probas?|probabilities|scores|test_preds?|"
    r"test_scores)$", re.I)


def _statement_stages(stmt: ast.stmt, functions: dict[str, set[str]]) -> set[str]:
  """Stages a statement performs (nested functions and classes excluded: they run when called)."""
  if isinstance(stmt, (ast.Import, ast.ImportFrom)):
    if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
      return set()
    return {"imported_packages"}
  if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
    return set()
  stages: set[str] = set()
  if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    if any(isinstance(t, ast.Name) and _PREDICTION_NAME_RE.match(t.id) for t in targets):
      stages.add("made_predictions")  # `preds = net(x)`: predictions by name, not by method
  for node in _walk_same_scope(stmt):
    if isinstance(node, ast.Call):
      stages |= _call_stages(node, functions)
  if isinstance(stmt, _LOOPS) and _is_training_loop(stmt):
    stages.add("trained_model")
  return stages


_PARAM_NAME_RE = re.compile(r"^(model|weights?|w\d*|b|bias|theta|coef\w*|params?|net)$", re.I)


def _is_training_loop(loop: ast.stmt) -> bool:
  """A hand-written optimisation loop: parameter updates (`w -= ...`) or an optimizer step."""
  for node in _walk_same_scope(loop):
    if isinstance(node, ast.AugAssign):
      root = node.target
      while isinstance(root, (ast.Subscript, ast.Attribute)):
        root = root.value
      if isinstance(root, ast.Name) and _PARAM_NAME_RE.match(root.id):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
      if node.func.attr == "backward" or (node.func.attr == "step" and "optim" in _dotted(node.func.value).lower()):
        return True
  return False


def _function_stages(tree: ast.AST) -> dict[str, set[str]]:
  """Stages each of the program's functions performs (calls to other own functions included).

  Only plain-name calls are resolved (`load(...)`, not `obj.load(...)`), iterated to a fixed
  point; imports are not propagated (calling a function is not importing packages).
  """
  bodies: dict[str, list[ast.stmt]] = {}
  for node in ast.walk(tree):
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
      bodies.setdefault(node.name, []).extend(node.body)
  stages: dict[str, set[str]] = {name: set() for name in bodies}
  for _ in range(len(bodies) + 1):
    changed = False
    for name, body in bodies.items():
      found = set().union(*(_statement_stages(st, stages) for st in body)) if body else set()
      found.discard("imported_packages")
      if not found <= stages[name]:
        stages[name] |= found
        changed = True
    if not changed:
      break
  return stages


_COMPOUND = (ast.If, ast.Try, getattr(ast, "TryStar", ast.Try))
_WITH = (ast.With, ast.AsyncWith)


class ASTInstrumenter(Instrumenter):
  """Rule-based: a marker after the last statement of each block that performs a stage.

  Loops are instrumented after the whole loop (one marker, not one per iteration); a
  `with` block gets a marker after it for what its header or body did that no own-line
  statement inside could carry; statements sharing a line with others are never anchors,
  so every inserted line is its own statement at the anchor's indentation. Text is
  inserted, not re-generated, so comments and formatting survive.
  """

  name = "ast"

  def _instrument(self, source, nonce):
    tree = parsing.parse(source)
    lines = re.split(r"(?<=\n)|(?<=\r)(?!\n)", source)
    if lines and lines[-1] == "":
      lines.pop()
    insertions: dict[int, tuple[str, list[str]]] = {}  # 0-based line index after which to insert
    self._block(tree.body, lines, insertions, _function_stages(tree))
    if not insertions:
      return source, []
    out = list(lines)
    inserted = []
    offset = 0
    for index in sorted(insertions):
      indent, stages = insertions[index]
      ordered = sorted(set(stages), key=_STAGE_INDEX.__getitem__)
      anchor = out[index + offset]
      newline = "\r\n" if anchor.endswith("\r\n") else "\r" if anchor.endswith("\r") else "\n"
      if not anchor.endswith(("\n", "\r")):
        out[index + offset] = anchor + newline
      new_lines = [f"{indent}{marker_statement(s, nonce)}{newline}" for s in ordered]
      out[index + offset + 1:index + offset + 1] = new_lines
      for k, s in enumerate(ordered):
        inserted.append((index + offset + 2 + k, s))
      offset += len(new_lines)
    return "".join(out), inserted

  def _block(self, block: Sequence[ast.stmt], lines: list[str], insertions: dict,
             functions: dict[str, set[str]]) -> set[str]:
    """Plans the markers of one block (recursively); returns the stages it placed."""
    last_anchor: dict[str, ast.stmt] = {}
    placed: set[str] = set()
    for stmt in block:
      if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        self._block(stmt.body, lines, insertions, functions)
        continue
      if isinstance(stmt, _LOOPS):
        stages = _statement_stages(stmt, functions)  # lifted: one marker after the loop
      elif isinstance(stmt, _WITH):
        # The body always runs, so what it did and could not mark itself is marked after the block.
        inner = self._block(stmt.body, lines, insertions, functions)
        placed |= inner
        stages = _statement_stages(stmt, functions) - inner
      elif isinstance(stmt, _COMPOUND):
        # Branches may not run: each marks only its own statements.
        for field in ("body", "orelse", "finalbody"):
          placed |= self._block(getattr(stmt, field, None) or [], lines, insertions, functions)
        for handler in getattr(stmt, "handlers", []):
          placed |= self._block(handler.body, lines, insertions, functions)
        continue
      elif isinstance(stmt, getattr(ast, "Match", ())):
        for case in stmt.cases:
          placed |= self._block(case.body, lines, insertions, functions)
        continue
      elif isinstance(stmt, _NO_ANCHOR):
        continue
      else:
        stages = _statement_stages(stmt, functions)
      for stage in stages:
        last_anchor[stage] = stmt
    for stage, stmt in last_anchor.items():
      indent = self._own_line_indent(stmt, lines)
      if indent is None:
        continue
      index = stmt.end_lineno - 1
      insertions.setdefault(index, (indent, []))[1].append(stage)
      placed.add(stage)
    return placed

  @staticmethod
  def _own_line_indent(stmt: ast.stmt, lines: list[str]) -> str | None:
    """The anchor's indentation if it starts and ends its own lines, else None (skip it)."""
    first = lines[stmt.lineno - 1].encode("utf-8")
    prefix = first[:stmt.col_offset].decode("utf-8", errors="replace")
    if prefix.strip():
      return None  # e.g. `if x: model.fit(X)` or the second statement of `a; b`
    last = lines[stmt.end_lineno - 1].encode("utf-8")
    rest = last[stmt.end_col_offset:].decode("utf-8", errors="replace").strip()
    if rest and not rest.startswith("#"):
      return None  # another statement follows on the same line (`a; b`)
    return prefix


# --- the llm backend ------------------------------------------------------------------------------

LLM_SYSTEM_PROMPT = """\
You instrument Python machine-learning programs with progress prints. You never change what a \
program does."""

LLM_USER_PROMPT = """\
Insert progress prints into the program below so that its output shows how far it got.

Rules:
1. Insert a print right AFTER an operation is actually performed, never before it and never for an \
operation the program does not perform.
2. Use exactly these statements, each on its own line at the indentation of the operation it follows:
{statements}
3. Insert each marker at most once per block, after the last statement of that block performing the stage; \
after a loop, not inside it.
4. Change nothing else: no edits, reordering, reformatting, renaming, new imports, or removed comments.
5. Output the whole program in a single ```python code block and nothing else.

Program:
```python
{program}
```"""

_CODE_BLOCK_RE = re.compile(r"```(?:python|py)?[ \t]*\r?\n(.*?)```", re.S)


def extract_program(reply: str) -> str:
  """The largest fenced code block of a model reply, or the reply itself without fences."""
  if not isinstance(reply, str):
    raise TypeError(f"model reply must be a str, got {type(reply).__name__}")
  blocks = _CODE_BLOCK_RE.findall(reply)
  if blocks:
    return max(blocks, key=len)
  return reply


def llm_messages(source: str, nonce: str) -> list[dict[str, str]]:
  statements = "\n".join(f"   - after {s.replace('_', ' ')}: {marker_statement(s, nonce)}" for s in STAGES)
  return [{"role": "system", "content": LLM_SYSTEM_PROMPT},
          {"role": "user", "content": LLM_USER_PROMPT.format(statements=statements, program=source)}]


class LLMInstrumenter(Instrumenter):
  """A frozen model rewrites the program with markers; the verifier decides whether it runs.

  `complete(messages) -> str` is any chat-completion function; by default the judge's
  OpenAI-compatible backend (rl.antihack.judge.OpenAIJudge) with the instrumentation config's
  base URL and model. A model that edits the program is caught by the AST check and
  the original runs instead, so a weak model costs markers, never correctness.
  """

  name = "llm"

  def __init__(self, complete: Callable[[list[dict[str, str]]], str], *, max_source_chars: int = 20000):
    if not callable(complete):
      raise TypeError("complete must be a callable taking chat messages and returning the reply text")
    self.complete = complete
    self.max_source_chars = int(max_source_chars)

  def _instrument(self, source, nonce):
    parsing.parse(source)  # an unparseable program is not worth a model call
    if len(source) > self.max_source_chars:
      raise ValueError(f"program has {len(source)} characters, more than max_source_chars={self.max_source_chars}")
    reply = self.complete(llm_messages(source, nonce))
    candidate = extract_program(reply)
    # Models often drop or add the final newline; that is not a change of the program.
    if source.endswith("\n") and not candidate.endswith("\n"):
      candidate += "\n"
    elif not source.endswith("\n"):
      candidate = candidate.rstrip("\n")
    return candidate, []


def openai_complete_fn(base_url: str, model: str, *, api_key: str = "", timeout_s: float = 60.0,
                       max_retries: int = 2, max_tokens: int = 4096) -> Callable[[list[dict[str, str]]], str]:
  """A chat-completion function over the judge's OpenAI-compatible HTTP client (temperature 0)."""
  from rl.antihack.judge import OpenAIJudge  # pylint: disable=import-outside-toplevel

  client = OpenAIJudge(base_url, model, api_key=api_key, timeout_s=timeout_s, max_retries=max_retries)

  def complete(messages: list[dict[str, str]]) -> str:
    reply = client._post({"model": model, "messages": messages, "temperature": 0.0,  # pylint: disable=protected-access
                          "max_tokens": max_tokens})
    try:
      return reply["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
      raise ValueError(f"unexpected chat-completions response: {str(reply)[:200]}") from None

  return complete


# --------------------------------------------------------------------------------------------------
# Registry and construction from the config
# --------------------------------------------------------------------------------------------------

def _cfg(config: Any, key: str) -> Any:
  """`config.instrumentation.<key>`, required: configs/default.py holds the defaults."""
  return config_fields.read(config, key, "instrumentation")


@registry.INSTRUMENTERS.register("none")
def _none_instrumenter(config: Any = None) -> Instrumenter:
  return NoInstrumenter()


@registry.INSTRUMENTERS.register("ast")
def _ast_instrumenter(config: Any = None) -> Instrumenter:
  return ASTInstrumenter()


@registry.INSTRUMENTERS.register("llm")
def _llm_instrumenter(config: Any = None, complete: Callable[[list[dict[str, str]]], str] | None = None
                      ) -> Instrumenter:
  if complete is None:
    import os  # pylint: disable=import-outside-toplevel

    base_url, model = _cfg(config, "llm_base_url"), _cfg(config, "llm_model")
    if not base_url or not model:
      raise ValueError("the llm instrumenter needs config.instrumentation.llm_base_url and llm_model "
                       "(an OpenAI-compatible server serving a frozen model)")
    key_env = _cfg(config, "llm_api_key_env")
    complete = openai_complete_fn(base_url, model, api_key=os.environ.get(key_env, "") if key_env else "",
                                  timeout_s=float(_cfg(config, "llm_timeout_s")))
  return LLMInstrumenter(complete)


def make_instrumenter(instrumentation_config: Any = None) -> Instrumenter:
  """The instrumenter named by config.instrumentation.backend, configured from the same section
  (a ConfigDict or a mapping holding the backend's fields); None: no instrumentation."""
  if instrumentation_config is None:
    return NoInstrumenter()
  return registry.INSTRUMENTERS.get(_cfg(instrumentation_config, "backend"))(instrumentation_config)
