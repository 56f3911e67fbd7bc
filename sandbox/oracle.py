"""Runs calls of a tree's functions (and, with a `Replay`, its replayed hidden tests) in a fresh
sandbox and brings back their verified results.

The differential oracle (rl/outcome/oracle.py) asks two trees, the reference and the graded
one, for the results of the same calls and compares them. This module is the part that
touches code under test: it writes the harness (sandbox/oracle_harness.py) and the calls into
the tree, runs them in a fresh session, and reads the results from the signed outcome channel
of grading (the same pipe and HMAC as the verdict, so printing fake results or rewriting a file
afterwards does not count). Results are builtin values with their exact type names; this
process never imports the tree's code.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import secrets
import shutil
import tempfile
import time
from typing import Any, Sequence

from sandbox import api, open_session
from sandbox.api import SandboxConfig, SandboxError

HARNESS_SOURCE = pathlib.Path(__file__).with_name("oracle_harness.py")
ORACLE_DIR = ".rlcoder_oracle"
RUNTIME = "/opt/rlcoder"
WORKSPACE = "/workspace"


@dataclasses.dataclass(frozen=True)
class Call:
  """One call: `module.function(*args, **kwargs)`, the arguments as Python literals; or, with
  `argv`, a command line `python *argv` run from the tree's root (a CLI), whose exit status and
  standard output are the result. `files` are input files written into the tree first."""
  id: str
  module: str = ""
  function: str = ""
  args: str = "()"  # repr of a tuple
  kwargs: str = "{}"
  argv: tuple[str, ...] = ()
  files: tuple[tuple[str, str], ...] = ()  # (path inside ORACLE_DIR/inputs, text)

  def to_dict(self) -> dict[str, Any]:
    d = dataclasses.asdict(self)
    d["argv"], d["files"] = list(self.argv), [list(f) for f in self.files]
    return d

  @classmethod
  def from_dict(cls, d: dict[str, Any]) -> "Call":
    return cls(**{**d, "argv": tuple(d.get("argv") or ()), "files": tuple(tuple(f) for f in d.get("files") or ())})


RECORD_NAME = "__rlcoder_record__"  # the builtin a replayed test's asserts call (oracle_harness.py)
CALL_NAME = "__rlcoder_call__"  # the builtin through which a replay copy calls the tree's functions
UNHASHABLE_CALL_NAME = "__rlcoder_call_unhashable__"  # the same, with the arguments' elements unhashable
BOXED_CALL_NAME = "__rlcoder_call_boxed__"  # the same, with each of the arguments' elements in a one-item tuple
MAGNIFIED_CALL_NAME = "__rlcoder_call_magnified__"  # the same, with the arguments' ints and Fractions mapped far up
UNEVEN_CALL_NAME = "__rlcoder_call_uneven__"  # the same, mapped far up and nudged by a unit or two
MINIFIED_CALL_NAME = "__rlcoder_call_minified__"  # the same, mapped far down (exact Fractions)
TYPE_REFUSALS = ("TypeError", "AttributeError")  # what an operation refusing a container's type raises
REPLAY_TEST_TIMEOUT_CALLS = 5  # a replayed test's time limit, in call time limits
# How a replayed test can end short of its last statement without saying anything about the code:
# its time limit or its memory budget, or (a checked tree) the records the reference's cut run made.
CUT_OUTCOMES = ("call:Timeout", "call:MemoryBudget", "setup:Timeout", "setup:MemoryBudget")
ENOUGH_OUTCOME = "call:Enough"
# The outcome of a reference's replayed test that was cut after the records it carries.
PREFIX_OUTCOME = "prefix"


def replay_test_timeout_s(call_timeout_s: float) -> float:
  """The time limit of one replayed test."""
  return call_timeout_s * REPLAY_TEST_TIMEOUT_CALLS


# After an exception's name in a replayed outcome ("call:JsonPatchError[tuple]"): its message names the
# tuple type, so in a copy that hands lists over as tuples it is a refusal of the type, like TYPE_REFUSALS.
TYPE_NAMED = "[tuple]"
AS_TUPLE_NAME = "__rlcoder_as_tuple__"  # a replay copy's call arguments: a list handed over as a tuple
DOUBLED_NAME = "__rlcoder_doubled__"  # a replay copy's call arguments: a list holding its items twice over
IN_THREAD_NAME = "__rlcoder_in_thread__"  # a replay copy's test decorator: the test runs in a thread of its own
RESEED_NAME = "__rlcoder_reseed__"  # a replay copy's seeds: a random generator's seed moved to another


@dataclasses.dataclass(frozen=True)
class Replay:
  """The hidden tests replayed on other inputs (rl/outcome/oracle_replay.py): `files` (path in
  the tree, text) are written over copies of the hidden folder at `roots`, and pytest runs the
  modules `test_paths` in one process. Each test comes back as ["replay", outcome, events]:
  the values its asserts compared, encoded like call results, and "ok" or where it stopped
  ("call:ValueError", "setup:KeyError", "skipped")."""
  roots: tuple[str, ...]
  files: tuple[tuple[str, str], ...]
  test_paths: tuple[str, ...]
  logging: bool = False  # keep pytest's logging plugin (a test uses caplog)
  lenient_roots: tuple[str, ...] = ()  # copies where a fix may raise where the reference did not
  # Copies where a fix may refuse the input's type only (TYPE_REFUSALS) where the reference went on:
  # an exception of the code's own there (a CycleError for a job whose tuple of dependencies was
  # not deduplicated) is an answer, and must agree.
  type_refusal_roots: tuple[str, ...] = ()
  # Copies that hand the code other kinds of numbers (ints as Fractions): a result's number may
  # keep the kind of the input or not, so numbers there are compared by value across int, float
  # and Fraction.
  numeric_roots: tuple[str, ...] = ()
  # "reversed": asyncio runs each loop iteration's ready callbacks last-registered first, another
  # schedule for the reference's second run, so records that hang on the schedule (which waiting
  # call started before a cancellation arrived) differ between its two runs and are not compared.
  ready_order: str = "fifo"
  # Tests a checked tree does not run (deselected by their exact ids): the reference's own run of
  # them hit the time limit or the memory budget, so nothing of theirs is compared, and each would
  # cost a tree the whole limit again (a slow reference matcher in the test file on the scaled
  # copies' longer inputs: 60 s of a 61 s replay).
  skip: tuple[str, ...] = ()
  # The tests whose records a check compares: the run stops once all of them have ended.
  until: tuple[str, ...] = ()
  # (test id, records): tests the reference's own runs were cut in by their time or memory limit
  # after these many records. Those records are compared (PREFIX_OUTCOME), and a checked tree's
  # run of the test stops once it has made as many ("call:Enough").
  stop_after: tuple[tuple[str, int], ...] = ()
  # The reference's own runs when a plan is made: a test its limit cuts keeps only the records it
  # made in its first `cut_mark_s` seconds, so that a checked tree's run of it (stop_after) costs
  # about that long, not the limit.
  cut_mark_s: float = 0.0

  def to_dict(self) -> dict[str, Any]:
    return {"roots": list(self.roots), "files": [list(f) for f in self.files], "test_paths": list(self.test_paths),
            "logging": self.logging, "lenient_roots": list(self.lenient_roots),
            "type_refusal_roots": list(self.type_refusal_roots), "numeric_roots": list(self.numeric_roots),
            "ready_order": self.ready_order,
            "skip": list(self.skip), "until": list(self.until), "stop_after": dict(self.stop_after),
            "cut_mark_s": self.cut_mark_s}

  @classmethod
  def from_dict(cls, d: dict[str, Any]) -> "Replay":
    return cls(roots=tuple(d["roots"]), files=tuple(tuple(f) for f in d["files"]),
               test_paths=tuple(d["test_paths"]), logging=bool(d.get("logging")),
               lenient_roots=tuple(d.get("lenient_roots") or ()),
               type_refusal_roots=tuple(d.get("type_refusal_roots") or ()),
               numeric_roots=tuple(d.get("numeric_roots") or ()),
               ready_order=str(d.get("ready_order") or "fifo"), skip=tuple(d.get("skip") or ()),
               until=tuple(d.get("until") or ()),
               stop_after=tuple((str(k), int(n)) for k, n in dict(d.get("stop_after") or {}).items()),
               cut_mark_s=float(d.get("cut_mark_s") or 0.0))

  def lenient(self, nodeid: str) -> bool | tuple[str, ...]:
    """Which exceptions of a fix's own, where the reference went on, count as refusing the input
    in this test: any (True), these names (TYPE_REFUSALS), or none (False)."""
    if _under(nodeid, self.lenient_roots):
      return True
    return TYPE_REFUSALS if _under(nodeid, self.type_refusal_roots) else False

  def numeric(self, nodeid: str) -> bool:
    """Whether this test's numbers are compared by value across int, float and Fraction."""
    return _under(nodeid, self.numeric_roots)


def _under(nodeid: str, roots: tuple[str, ...]) -> bool:
  return any(nodeid.startswith(root.rstrip("/") + "/") for root in roots)


@dataclasses.dataclass
class CallResults:
  """What one run returned: {call id: encoded result}, and whether the run can be trusted."""
  results: dict[str, Any] = dataclasses.field(default_factory=dict)
  complete: bool = False  # the end marker arrived, every line verified
  problems: list[str] = dataclasses.field(default_factory=list)
  timed_out: bool = False
  duration_s: float = 0.0
  log: str = ""


def _inside(tree_dir: str, rel: str) -> str:
  target = os.path.abspath(os.path.join(tree_dir, rel))
  if not target.startswith(os.path.abspath(tree_dir) + os.sep):
    raise ValueError(f"oracle file {rel!r} leaves the tree")
  return target


def place_replay(tree_dir: str, replay: Replay, hidden_tests_dir: str, hidden_tests_dest: str) -> None:
  """Writes `replay` into a tree with the pristine test surface (a graded tree, the reference):
  the hidden-test destination replaced by the hidden folder (as grading does), every other
  root a copy of it, then the replay's rewritten files."""
  dest = api.check_relative(hidden_tests_dest)
  if dest != ".":  # the trees the oracle runs have the pristine test surface already
    shutil.rmtree(_inside(tree_dir, dest), ignore_errors=True)
  for root in replay.roots:
    target = _inside(tree_dir, root) if os.path.normpath(root) != "." else os.path.abspath(tree_dir)
    shutil.copytree(hidden_tests_dir, target, symlinks=False, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
  for rel, text in replay.files:
    target = _inside(tree_dir, rel)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w", encoding="utf-8") as f:
      f.write(text)


def run_calls(tree_dir: str, calls: Sequence[Call], *, config: SandboxConfig | None = None,
              import_roots: Sequence[str] = (".",), timeout_s: float = 30.0,
              call_timeout_s: float = 2.0, replay: Replay | None = None) -> CallResults:
  """Runs `calls` against the tree at `tree_dir` (a staging copy the caller owns; the harness
  and the calls are written into it) in a fresh session; with `replay` (already placed in the
  tree by `place_replay`), the replayed tests' results too, keyed "replay::<node id>".

  Calls and a replay run in two sessions, one after the other: the calls in a process that
  never imports pytest, as a plain program's would not (code right only inside a test runner,
  told by `"pytest" in sys.modules`, the number of modules loaded or the heap's size, is then
  asked the held-out inputs outside one), and the replay in a process where no module the
  calls imported ran before pytest, on the tree as it was before (the calls run in a copy, so
  a file their code writes, a pytest.ini say, is not there). `timeout_s` applies to each."""
  if calls and replay is not None:
    options = dict(config=config, import_roots=import_roots, timeout_s=timeout_s, call_timeout_s=call_timeout_s)
    scratch = tempfile.mkdtemp(prefix="rlcoder-oracle-calls-")
    try:
      calls_tree = os.path.join(scratch, "tree")
      shutil.copytree(tree_dir, calls_tree, symlinks=True)
      first = run_calls(calls_tree, calls, **options)
    finally:
      shutil.rmtree(scratch, ignore_errors=True)
    return _merged(first, run_calls(tree_dir, [], replay=replay, **options))
  from sandbox.grading import pytest_options, read_verdict_stream  # pylint: disable=import-outside-toplevel
  config = config or SandboxConfig()
  start = time.monotonic()
  folder = os.path.join(tree_dir, ORACLE_DIR)
  os.makedirs(folder, exist_ok=True)
  for call in calls:
    for rel, text in call.files:
      target = os.path.join(folder, "inputs", rel)
      if not os.path.abspath(target).startswith(os.path.abspath(folder) + os.sep):
        raise ValueError(f"oracle input file {rel!r} leaves the oracle's folder")
      os.makedirs(os.path.dirname(target), exist_ok=True)
      with open(target, "w", encoding="utf-8") as f:
        f.write(text)
  with open(os.path.join(folder, "harness.py"), "w", encoding="utf-8") as f:
    f.write(HARNESS_SOURCE.read_text(encoding="utf-8"))
  with open(os.path.join(folder, "calls.json"), "w", encoding="utf-8") as f:
    spec: dict[str, Any] = {"calls": [c.to_dict() for c in calls], "roots": list(import_roots),
                            "call_timeout_s": call_timeout_s}
    if replay is not None:
      spec["replay"] = {"test_paths": list(replay.test_paths), "logging": replay.logging,
                        "options": pytest_options(tree_dir, "python -m pytest").split(),
                        "test_timeout_s": replay_test_timeout_s(call_timeout_s), "ready_order": replay.ready_order,
                        "skip": list(replay.skip), "until": list(replay.until),
                        "stop_after": dict(replay.stop_after), "cut_mark_s": replay.cut_mark_s}
    json.dump(spec, f)
  task_env = api.task_environment(config)
  env = {"PYTHONPATH": api.merge_pythonpath(task_env, f"{RUNTIME}/audit_site"), "PYTHONNOUSERSITE": "1",
         "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
  # `-p rlcoder_verdict` on the command line is what makes the runtime's sitecustomize hand this
  # process the channel; the harness ignores its arguments after the first.
  command = (f"python {WORKSPACE}/{ORACLE_DIR}/harness.py {WORKSPACE}/{ORACLE_DIR}/calls.json "
             f"-p rlcoder_verdict")
  out = CallResults()
  with open_session(tree_dir, config) as session:
    if not getattr(session, "supports_verdict_channel", False):
      raise SandboxError("the sandbox backend has no verdict channel; the oracle needs one")
    key = secrets.token_bytes(32)
    result = session.exec(command, timeout=timeout_s, env=env, verdict_key=key)
  out.timed_out = bool(result.timed_out)
  out.log = (result.stdout + result.stderr)[-2000:]
  stream = read_verdict_stream(result.verdict_stream or "", key, bool(result.verdict_stream_truncated))
  out.results = dict(stream.oracle)
  out.problems = list(stream.forged)
  out.complete = stream.ended and not stream.forged
  out.duration_s = time.monotonic() - start
  return out


def _merged(first: CallResults, second: CallResults) -> CallResults:
  """Two runs' results as one run's: complete when both are."""
  return CallResults(results={**first.results, **second.results}, complete=first.complete and second.complete,
                     problems=first.problems + second.problems, timed_out=first.timed_out or second.timed_out,
                     duration_s=first.duration_s + second.duration_s,
                     log=(first.log[-1000:] + "\n" + second.log[-1000:]).strip())
