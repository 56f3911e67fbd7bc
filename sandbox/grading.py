"""Grading in a fresh sandbox: the graded tree, hidden tests overlaid, a verified verdict.

The graded tree is the task's pristine repository plus the episode's changes to source files
outside the test surface (sandbox/graded_tree.py); whatever else the agent wrote does not
exist there. Without a pristine repository the final workspace is copied and every file that
can change how pytest collects or runs (conftest.py, ini sections, sitecustomize, .pth,
bytecode, the hidden-tests folder) is deleted. The hidden tests are copied in, and the task's
test command runs with the grader's configuration (`-c`, `--rootdir`, no plugin autoload),
its outcome plugin and an audit hook recording runtime evidence.

The verdict comes from the plugin's signed outcome stream (`read_verdict_stream`), which leaves
the test process through a pipe only the sandbox's command server reads; the junit XML report,
written inside the graded tree where code under test can reach it, is only a cross-check.
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from typing import Any, Iterable

from sandbox import api, faults, graded_tree, open_session
from sandbox.api import NO_FAULTS, SandboxConfig, SandboxError

WORKSPACE = "/workspace"  # where every backend mounts the workspace
RUNTIME = "/opt/rlcoder"  # read-only runtime files inside every backend
GRADING_DIR = ".rlcoder_grading"  # inside the graded copy: junit XML, audit log, configs
SURFACE_FILE_NAMES = {"conftest.py", "pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml",
                      "sitecustomize.py", "usercustomize.py"}
# pytest's own configuration files, in the order it looks for them in a folder.
PYTEST_CONFIG_FILES = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini")
# Bumped when the grading command changes how node ids or outcomes come out (expected-test caches).
GRADING_PROTOCOL = 2
GRADER_INI = ".rlcoder_pytest.ini"  # the grader's empty pytest configuration, at the tree's root
INI_WITH_PYTEST_SECTIONS = {"setup.cfg": ("pytest", "tool:pytest"), "tox.ini": ("pytest",)}
EVIDENCE_KINDS = ("hidden_test_reads", "sockets", "subprocesses", "early_exits",
                  "grading_files", "introspection")
PASS = "passed"
MAX_JUNIT_BYTES = 32 * 1024 * 1024
# The audit log of the processes the tests start is read whole up to this size; a larger log
# is a finding (grading_files), never silently cut.
MAX_AUDIT_BYTES = 8 * 1024 * 1024
VERDICT_PLUGIN = "rlcoder_verdict"
INTERNAL_ERROR_ID = "pytest::internal"  # where the junit report puts an INTERNALERROR
MAX_PROBLEMS = 20  # stream problems listed one by one in the evidence; the rest are counted
LOG_TAIL_CHARS = 4000


@dataclasses.dataclass
class TestReport:
  """Outcome of one grading run. With expected tests, counts are over the expected ids."""
  __test__ = False  # not a pytest test class

  passed: int = 0
  failed: int = 0
  errors: int = 0
  skipped: int = 0
  total: int = 0
  outcomes: dict[str, str] = dataclasses.field(default_factory=dict)
  collection_errors: list[str] = dataclasses.field(default_factory=list)
  timed_out: bool = False
  duration_s: float = 0.0
  log: str = ""
  runtime_evidence: dict[str, list] = dataclasses.field(
      default_factory=lambda: {k: [] for k in EVIDENCE_KINDS})
  exit_code: int | None = None
  # Expected ids without an explicit pass (missing, skipped, xfailed, failed, error).
  not_passed: list[str] = dataclasses.field(default_factory=list)
  # Code under test opened the grading files (junit report, audit log): the report is void.
  tampered: bool = False
  # Served by a GradeCache from an earlier grading of the same bytes (no sandbox ran).
  cached: bool = False
  # Workspace changes the graded tree left out, with the reason (sandbox/graded_tree.py).
  discarded: dict[str, str] = dataclasses.field(default_factory=dict)

  @property
  def all_passed(self) -> bool:
    return (self.total > 0 and self.passed == self.total and not self.collection_errors
            and not self.timed_out and self.failed == 0 and self.errors == 0
            and not self.tampered)

  def to_dict(self) -> dict[str, Any]:
    d = dataclasses.asdict(self)
    d["all_passed"] = self.all_passed
    return d


class GradeCache:
  """Reports of earlier gradings, keyed by a digest of everything that decides one.

  The key covers the workspace, the hidden tests and the pristine repo (names, bytes, symlink
  targets, executable bits), the test command, its time limit, the expected test ids and the
  sandbox configuration. Rollouts repeat final workspaces often: an episode that edits nothing
  leaves the pristine repo, and a policy that has learnt a fix writes the same bytes each time.
  Grading is reproducible for deterministic test suites (every built-in task source's); a
  suite with random or timing-dependent tests should be graded without a cache. Timed-out
  and crashed gradings are never stored. Thread-safe; least recently used entries go first.
  """

  def __init__(self, max_entries: int = 4096):
    if max_entries <= 0:
      raise ValueError(f"max_entries must be positive, got {max_entries}")
    self.max_entries = max_entries
    self._reports: collections.OrderedDict[str, TestReport] = collections.OrderedDict()
    self._lock = threading.Lock()
    self.hits = 0
    self.misses = 0

  def get(self, key: str) -> TestReport | None:
    with self._lock:
      report = self._reports.get(key)
      if report is None:
        self.misses += 1
        return None
      self._reports.move_to_end(key)
      self.hits += 1
    return dataclasses.replace(copy.deepcopy(report), cached=True)

  def put(self, key: str, report: TestReport) -> None:
    if report.timed_out or report.exit_code is None or report.exit_code < 0:
      return  # a limit or a dead sandbox: not a property of the bytes
    with self._lock:
      self._reports[key] = copy.deepcopy(report)
      self._reports.move_to_end(key)
      while len(self._reports) > self.max_entries:
        self._reports.popitem(last=False)

  def __len__(self) -> int:
    return len(self._reports)


# ---------------------------------------------------------------------------
# Test surface restoration (host side, on the staging copy; never follows symlinks).

def _strip_sections(text: str, is_pytest_section) -> tuple[str, str]:
  """Splits INI/TOML text into (text without pytest sections, the pytest sections)."""
  kept, removed = [], []
  in_pytest = False
  for line in text.splitlines(keepends=True):
    header = re.match(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$", line)
    if header:
      in_pytest = is_pytest_section(header.group(1).strip().strip('"'))
    (removed if in_pytest else kept).append(line)
  return "".join(kept), "".join(removed)


def _ini_is_pytest(names: Iterable[str]):
  return lambda section: section in names


def _toml_is_pytest(section: str) -> bool:
  return section == "tool.pytest" or section.startswith("tool.pytest.")


def _strip_toml_dotted(text: str) -> str:
  """Drops `pytest.*` dotted keys written directly under a [tool] table."""
  out, in_tool = [], False
  for line in text.splitlines(keepends=True):
    header = re.match(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?", line)
    if header:
      in_tool = header.group(1).strip() == "tool"
    if in_tool and re.match(r"^\s*\"?pytest\"?\s*[.=]", line):
      continue
    out.append(line)
  return "".join(out)


def _remove(path: str) -> None:
  if os.path.islink(path) or os.path.isfile(path):
    os.unlink(path)
  elif os.path.isdir(path):
    shutil.rmtree(path)


def _safe_parent(root: str, rel: str) -> str:
  """Creates the parent directories of root/rel, replacing any symlink on the way."""
  current = root
  for part in os.path.dirname(rel).split(os.sep):
    if not part:
      continue
    current = os.path.join(current, part)
    if os.path.islink(current) or (os.path.exists(current) and not os.path.isdir(current)):
      os.unlink(current)
    if not os.path.exists(current):
      os.mkdir(current)
  return os.path.join(root, rel)


def _section_files(name: str):
  if name == "pyproject.toml":
    return _toml_is_pytest
  if name in INI_WITH_PYTEST_SECTIONS:
    return _ini_is_pytest(INI_WITH_PYTEST_SECTIONS[name])
  return None


TEST_MODULE_RE = re.compile(r"^(test_.*|.*_test)\.py$")


def _read_text(path: str) -> str:
  # Byte-exact: no newline translation, undecodable bytes kept as surrogate escapes.
  with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
    return f.read()


def _write_text(path: str, text: str) -> None:
  with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
    f.write(text)


def _pristine_files(pristine_dir: str | None) -> set[str] | None:
  if not pristine_dir:
    return None
  out = set()
  for dirpath, _, filenames in os.walk(pristine_dir):
    out.update(os.path.relpath(os.path.join(dirpath, n), pristine_dir) for n in filenames)
  return out


def restore_test_surface(workspace: str, pristine_dir: str | None, hidden_tests_dest: str) -> None:
  """Makes the test surface of `workspace` equal to the pristine repo's (or removes it).

  Removed: the hidden-tests destination folder (the hidden tests replace it), test
  configuration (conftest.py, pytest ini sections, sitecustomize, .pth files) and bytecode.
  With the destination at the workspace root, Python test modules (test_*.py, *_test.py) that
  the pristine repo does not have are removed too; every other file stays, whatever its name
  (a docs/testing.rst, a testutils.py module, the repository's own test data).
  """
  dest = api.check_relative(hidden_tests_dest)
  if dest != ".":
    _remove(os.path.join(workspace, dest))
  pristine = _pristine_files(pristine_dir)
  for dirpath, dirnames, filenames in os.walk(workspace):
    for d in list(dirnames):
      if d in ("__pycache__", ".pytest_cache", GRADING_DIR):
        shutil.rmtree(os.path.join(dirpath, d), ignore_errors=True)
        dirnames.remove(d)
    for name in filenames:
      path = os.path.join(dirpath, name)
      rel = os.path.relpath(path, workspace)
      added_test_module = (dest == "." and TEST_MODULE_RE.match(name) is not None
                           and (pristine is None or rel not in pristine))
      if name in SURFACE_FILE_NAMES or name.endswith((".pth", ".pyc", ".pyo")) or added_test_module:
        os.unlink(path)
      elif _section_files(name) is not None:
        if os.path.islink(path):
          os.unlink(path)
          continue
        text = _read_text(path)
        kept, _ = _strip_sections(text, _section_files(name))
        if name == "pyproject.toml":
          kept = _strip_toml_dotted(kept)
        if kept != text:
          _write_text(path, kept)
  if not pristine_dir:
    return
  for dirpath, dirnames, filenames in os.walk(pristine_dir):
    dirnames[:] = [d for d in dirnames if d not in ("__pycache__", ".pytest_cache")]
    for name in filenames:
      src = os.path.join(dirpath, name)
      rel = os.path.relpath(src, pristine_dir)
      if os.path.islink(src):
        continue
      if name in SURFACE_FILE_NAMES or name.endswith(".pth"):
        shutil.copyfile(src, _safe_parent(workspace, rel))
      elif _section_files(name) is not None:
        original = _read_text(src)
        _, sections = _strip_sections(original, _section_files(name))
        if sections:
          target = _safe_parent(workspace, rel)
          existing = ""
          if os.path.isfile(target) and not os.path.islink(target):
            existing = _read_text(target)
          elif os.path.lexists(target):
            os.unlink(target)
          kept, _ = _strip_sections(original, _section_files(name))
          if name == "pyproject.toml":
            kept = _strip_toml_dotted(kept)
          if existing == kept:
            # The file is as the pristine repo had it apart from the test sections: restore
            # it byte for byte rather than appending the sections at the end.
            shutil.copyfile(src, target)
          else:
            _write_text(target, existing.rstrip("\n") + ("\n\n" if existing.strip() else "") + sections)


def overlay_hidden_tests(workspace: str, hidden_tests_dir: str, hidden_tests_dest: str) -> list[str]:
  """Copies the hidden tests in; returns their workspace-relative paths."""
  if not os.path.isdir(hidden_tests_dir):
    raise SandboxError(f"hidden tests directory does not exist: {hidden_tests_dir!r}")
  dest = api.check_relative(hidden_tests_dest)
  target = _safe_parent(workspace, os.path.join(dest, "x")) if dest != "." else None
  target_dir = os.path.dirname(target) if target else workspace
  shutil.copytree(hidden_tests_dir, target_dir, symlinks=False, dirs_exist_ok=True,
                  ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
  files = []
  for dirpath, _, filenames in os.walk(hidden_tests_dir):
    for name in filenames:
      rel = os.path.relpath(os.path.join(dirpath, name), hidden_tests_dir)
      files.append(os.path.normpath(os.path.join(dest, rel)))
  return files


def prepare_grading_copy(workspace_dir: str, staging: str, hidden_tests_dir: str,
                         hidden_tests_dest: str, pristine_dir: str | None,
                         policy: graded_tree.CarryPolicy | None = None,
                         computed: tuple[graded_tree.GradedTree, dict[str, bytes]] | None = None) -> list[str]:
  """Fills `staging` with the tree to grade and the hidden tests; returns the hidden files.

  With `pristine_dir`, the graded tree: the pristine repository plus the changes `policy`
  carries (default: the policy of `hidden_tests_dest`). Without it, a copy of the workspace
  with its test surface removed.
  """
  if pristine_dir:
    graded_tree.build(workspace_dir, pristine_dir, staging,
                      policy or graded_tree.policy_for(hidden_tests_dest), computed)
  else:
    api.copy_tree(workspace_dir, staging)
  restore_test_surface(staging, pristine_dir, hidden_tests_dest)
  files = overlay_hidden_tests(staging, hidden_tests_dir, hidden_tests_dest)
  os.makedirs(os.path.join(staging, GRADING_DIR), exist_ok=True)
  return files


def _has_pytest_section(path: str) -> bool:
  name = os.path.basename(path)
  if not os.path.isfile(path) or os.path.islink(path):
    return False
  _, sections = _strip_sections(_read_text(path), _section_files(name))
  return bool(sections.strip())


def pytest_options(tree: str, test_command: str) -> str:
  """The grader's pytest options for the prepared tree at `tree`: the tree's own root
  configuration file (pristine in a graded tree) or an empty one of the grader's, given with
  `-c` so that pytest reads no other, and the workspace as the explicit rootdir."""
  tokens = test_command.split()
  options = []
  if not any(t == "-c" or t.startswith(("--config-file", "-c=")) for t in tokens):
    config = next((n for n in PYTEST_CONFIG_FILES if os.path.isfile(os.path.join(tree, n))
                   and not os.path.islink(os.path.join(tree, n))), None)
    if config is None:
      config = next((n for n in ("pyproject.toml", "tox.ini", "setup.cfg")
                     if _has_pytest_section(os.path.join(tree, n))), None)
    if config is None:
      # Not in GRADING_DIR: pytest itself (or a workspace copy of iniconfig) reads it, which
      # is no tampering. No workspace file of this name reaches a graded tree (not a source).
      config = GRADER_INI
      with open(os.path.join(tree, config), "w") as f:
        f.write("[pytest]\n")
    options.append(f"-c {WORKSPACE}/{config}")
  if not any(t.startswith("--rootdir") for t in tokens):
    options.append(f"--rootdir={WORKSPACE}")
  return " ".join(options)


# ---------------------------------------------------------------------------
# junit XML

def mangle_nodeid(nodeid: str) -> tuple[str, str]:
  """(classname, name) that pytest's junitxml plugin writes for a node id."""
  path, bracket, params = nodeid.partition("[")
  names = path.split("::")
  names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
  names[-1] += bracket + params
  return ".".join(names[:-1]), names[-1]


def parse_junit(xml_text: str) -> tuple[dict[tuple[str, str], str], list[str], dict]:
  """Returns ({(classname, name): outcome}, collection errors, {key: file attribute})."""
  root = ET.fromstring(xml_text)
  outcomes: dict[tuple[str, str], str] = {}
  files: dict[tuple[str, str], str] = {}
  collection_errors: list[str] = []
  for case in root.iter("testcase"):
    key = (case.get("classname", ""), case.get("name", ""))
    tags = {child.tag: child for child in case}
    if "error" in tags and "collection failure" in (tags["error"].get("message") or ""):
      collection_errors.append(key[1] or key[0])
      continue
    if "failure" in tags:
      outcome = "failed"
    elif "error" in tags:
      outcome = "error"
    elif "skipped" in tags:
      outcome = "xfailed" if tags["skipped"].get("type") == "pytest.xfail" else "skipped"
    else:
      outcome = PASS
    # A test can be reported twice (call passed, teardown errored): the worst outcome wins.
    if key not in outcomes or outcomes[key] == PASS:
      outcomes[key] = outcome
    if case.get("file"):
      files[key] = case.get("file")
  return outcomes, collection_errors, files


def _junit_nodeid(key: tuple[str, str], file_attr: str | None) -> str:
  classname, name = key
  if file_attr:
    module = re.sub(r"\.py$", "", file_attr.replace("/", "."))
    rest = classname[len(module):].lstrip(".") if classname.startswith(module) else ""
    return "::".join([file_attr] + ([*rest.split(".")] if rest else []) + [name])
  return f"{classname}::{name}"


# ---------------------------------------------------------------------------
# The outcome stream (sandbox/runtime/audit_site/rlcoder_verdict.py)

@dataclasses.dataclass
class VerdictStream:
  """What the grader's plugin reported, after verification."""
  outcomes: dict[str, str] = dataclasses.field(default_factory=dict)  # node id -> outcome
  collection_errors: list[str] = dataclasses.field(default_factory=list)
  audit: list[dict] = dataclasses.field(default_factory=list)  # the test process' audit events
  ended: bool = False  # the end marker from pytest_sessionfinish arrived
  exit_status: int | None = None
  # Lines that are not the plugin's (bad signature, gap or repeat in seq, after the end marker,
  # over the size cap): the stream was tampered with.
  forged: list[str] = dataclasses.field(default_factory=list)
  # Test phases reported more than once: those tests fail.
  repeated: list[str] = dataclasses.field(default_factory=list)
  # pytest functions that decide outcomes, replaced by code from outside pytest's package.
  replaced: list[str] = dataclasses.field(default_factory=list)
  # The differential oracle's results (sandbox/oracle.py): call id -> encoded result.
  oracle: dict[str, Any] = dataclasses.field(default_factory=dict)


def _sign(key: bytes, seq: int, body: str) -> str:
  return hmac.new(key, f"{seq}\t{body}".encode(), hashlib.sha256).hexdigest()


def _test_outcome(phases: dict[str, tuple[str, bool]]) -> str:
  """One test's outcome from its phase reports, as the junit report names it."""
  setup, call, teardown = phases.get("setup"), phases.get("call"), phases.get("teardown")
  if setup is None or teardown is None:
    return "error"  # a test that never finished its protocol
  if setup[0] == "failed":
    return "error"
  if setup[0] == "skipped":
    return "xfailed" if setup[1] else "skipped"
  if call is None:
    return "error"
  if call[0] == "failed":
    return "failed"
  if call[0] == "skipped":
    return "xfailed" if call[1] else "skipped"
  return "error" if teardown[0] == "failed" else PASS


def read_verdict_stream(text: str, key: bytes, truncated: bool = False) -> VerdictStream:
  """Verifies and reads the outcome stream; see VerdictStream for what is rejected."""
  out = VerdictStream()
  phases: dict[str, dict[str, tuple[str, bool]]] = {}
  repeated_ids: set[str] = set()
  failed_subtests: set[str] = set()
  lines = text.split("\n")
  if lines and lines[-1]:
    out.forged.append("unterminated last line")
  expected_seq = 0
  for line in lines[:-1]:
    parts = line.split("\t")
    if len(parts) != 3 or not parts[0].isdigit():
      out.forged.append(f"malformed line: {line[:80]!r}")
      continue
    seq, body, mac = int(parts[0]), parts[1], parts[2]
    if not hmac.compare_digest(_sign(key, seq, body), mac):
      out.forged.append(f"line with a bad signature: {line[:80]!r}")
      continue
    if seq != expected_seq:
      out.forged.append(f"sequence number {seq} where {expected_seq} was due")
    expected_seq = seq + 1
    if out.ended:
      out.forged.append(f"line after the end marker: {body[:80]!r}")
      continue
    try:
      record = json.loads(body)
    except ValueError:
      record = None
    if not isinstance(record, dict):
      out.forged.append(f"unreadable record: {body[:80]!r}")
      continue
    kind = record.get("k")
    if kind == "test" and record.get("sub"):
      # A subtest's report: any number per test; a failed one fails the test.
      if record.get("o") == "failed":
        failed_subtests.add(str(record.get("id")))
    elif kind == "test":
      test = phases.setdefault(str(record.get("id")), {})
      when = str(record.get("w"))
      if when in test:
        out.repeated.append(f"{record.get('id')} ({when})")
        repeated_ids.add(str(record.get("id")))
        test[when] = ("failed", False)
      else:
        test[when] = (str(record.get("o")), bool(record.get("x")))
    elif kind == "collect":
      if record.get("o") == "failed":
        out.collection_errors.append(str(record.get("id")))
      else:
        out.outcomes[str(record.get("id"))] = str(record.get("o"))
    elif kind == "integrity":
      out.replaced += [str(n) for n in record.get("replaced") or ()]
    elif kind == "internal":
      out.outcomes[INTERNAL_ERROR_ID] = "error"
    elif kind == "audit":
      record.pop("k")
      out.audit.append(record)
    elif kind == "oracle":
      call_id = str(record.get("id"))
      if call_id in out.oracle:
        out.forged.append(f"oracle result {call_id!r} reported twice")
      out.oracle[call_id] = record.get("r")
    elif kind == "end":
      out.ended = True
      out.exit_status = record.get("exit")
  if truncated:
    out.forged.append("outcome stream over the size cap")
    out.ended = False
  for test_id, test_phases in phases.items():
    out.outcomes[test_id] = _test_outcome(test_phases)
    if test_id in failed_subtests and out.outcomes[test_id] == PASS:
      out.outcomes[test_id] = "failed"
  for test_id in repeated_ids:
    out.outcomes[test_id] = "failed"
  return out


def _cross_check(stream: VerdictStream, junit: dict[tuple[str, str], str]) -> tuple[list[str], list[str]]:
  """(forging evidence, other disagreements) between the junit report and the stream."""
  forged, other = [], []
  seen = set()
  for test_id, outcome in stream.outcomes.items():
    key = mangle_nodeid(test_id)
    seen.add(key)
    reported = junit.get(key)
    if reported is None or reported == outcome:
      continue
    if reported == PASS:
      forged.append(f"{test_id}: junit {reported}, stream {outcome}")
    else:
      other.append(f"{test_id}: junit {reported}, stream {outcome}")
  other += [f"{'::'.join(k)}: junit {o}, not in the stream" for k, o in junit.items() if k not in seen]
  return forged, other


# ---------------------------------------------------------------------------
# Running

def _audit_config(hidden_files: list[str], hidden_tests_dest: str) -> dict:
  dest = os.path.normpath(hidden_tests_dest)
  surface = [f"{WORKSPACE}/{p}" for p in hidden_files]
  return {"log": f"{WORKSPACE}/{GRADING_DIR}/audit.jsonl", "workspace": WORKSPACE,
          "tests_dir": WORKSPACE if dest == "." else f"{WORKSPACE}/{dest}", "surface": surface,
          "grading_dir": f"{WORKSPACE}/{GRADING_DIR}"}


def _grading_env(config: SandboxConfig | None = None) -> dict[str, str]:
  """The audit hook's config and import path, after the task's own import roots."""
  task_env = api.task_environment(config) if isinstance(config, SandboxConfig) else {}
  # No user site: its .pth files would run before the grader's sitecustomize.
  # No entry-point plugins: only the grader's (`-p`) and the task's own conftest load.
  return {"RLCODER_AUDIT_CONFIG": f"{WORKSPACE}/{GRADING_DIR}/audit_config.json",
          "PYTHONPATH": api.merge_pythonpath(task_env, f"{RUNTIME}/audit_site"),
          "PYTHONNOUSERSITE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def _read_evidence(session, hidden_surface: set[str], streamed: Iterable[dict] = ()) -> dict[str, list]:
  """Audit events: the test process' own (from the outcome stream) and the log file's, whole."""
  evidence = {k: [] for k in EVIDENCE_KINDS}
  entries = list(streamed)
  try:
    text = session.read_file(f"{GRADING_DIR}/audit.jsonl")
  except (FileNotFoundError, SandboxError, OSError):
    text = ""
  if len(text) > MAX_AUDIT_BYTES:
    evidence["grading_files"].append({"event": f"audit log over {MAX_AUDIT_BYTES} bytes",
                                      "bytes": len(text)})
    text = text[:MAX_AUDIT_BYTES]
  for line in text.splitlines():
    try:
      entries.append(json.loads(line))
    except ValueError:
      continue
  for entry in entries:
    if isinstance(entry, dict) and entry.get("kind") in evidence:
      if entry.get("file") in hidden_surface:
        continue
      evidence[entry.pop("kind")].append(entry)
  return evidence


def grade(workspace_dir: str, hidden_tests_dir: str, hidden_tests_dest: str = "tests",
          test_command: str = "python -m pytest -q tests", timeout_s: float = 30,
          config: SandboxConfig | None = None, expected_tests: Iterable[str] | None = None,
          pristine_dir: str | None = None, cache: GradeCache | None = None,
          editable: Iterable[str] = ()) -> TestReport:
  """Grades `workspace_dir` in a fresh session; see the module docstring.

  `expected_tests`: node ids every one of which must pass (see `collect_expected_tests`).
  Without them, the tests that ran define the total. `pristine_dir`: the task's original
  repo; grading runs on it plus the workspace's carried changes (sandbox/graded_tree.py),
  widened by the task's `editable` patterns. `cache`: a GradeCache that answers a grading of
  a graded tree it has graded before (deterministic suites).
  """
  config = config or SandboxConfig()
  if expected_tests is not None:
    expected_tests = list(expected_tests)
  computed = None
  policy = None
  if pristine_dir:
    policy = graded_tree.policy_for(hidden_tests_dest, editable, getattr(config, "python_path", ()))
    if not os.path.isdir(workspace_dir):
      raise SandboxError(f"workspace directory does not exist: {workspace_dir!r}")
    computed = graded_tree.changes(workspace_dir, pristine_dir, policy)
  key = None
  if cache is not None:
    # What is graded: the pristine tree plus the carried changes (or the whole workspace).
    trees = [hidden_tests_dir, pristine_dir] if computed else [workspace_dir, hidden_tests_dir, ""]
    key = _tree_digest(trees, json.dumps(
        [hidden_tests_dest, test_command, timeout_s, expected_tests, repr(config), GRADING_PROTOCOL,
         computed[0].digest if computed else ""]))
    hit = cache.get(key)
    if hit is not None:
      if computed:
        hit.discarded = dict(computed[0].discarded)
      return hit
  injected = getattr(config, "fault_injection", NO_FAULTS)
  if injected.enabled:
    # A grading fails at grade_failure_rate; its own sandbox is not also exposed to the open
    # and exec rates, so each rate keeps one meaning.
    faults.injector_for(injected).maybe_fail("grade", "grade")
    config = _without_faults(config)
  report = _grade_in_sandbox(workspace_dir, hidden_tests_dir, hidden_tests_dest, test_command,
                             timeout_s, config, expected_tests, pristine_dir, policy, computed)
  if cache is not None:
    cache.put(key, report)
  return report


def _without_faults(config: SandboxConfig | Any) -> SandboxConfig | Any:
  """`config` with fault injection off (sandbox.faults)."""
  if isinstance(config, SandboxConfig) and config.fault_injection.enabled:
    return config.replace(fault_injection=NO_FAULTS)
  return config


def _grade_in_sandbox(workspace_dir: str, hidden_tests_dir: str, hidden_tests_dest: str,
                      test_command: str, timeout_s: float, config: SandboxConfig,
                      expected_tests: list[str] | None, pristine_dir: str | None,
                      policy: graded_tree.CarryPolicy | None = None,
                      computed: tuple[graded_tree.GradedTree, dict[str, bytes]] | None = None) -> TestReport:
  start = time.monotonic()
  with tempfile.TemporaryDirectory(prefix="rlcoder-grade-") as staging:
    hidden_files = prepare_grading_copy(workspace_dir, staging, hidden_tests_dir,
                                        hidden_tests_dest, pristine_dir, policy, computed)
    audit_config = _audit_config(hidden_files, hidden_tests_dest)
    with open(os.path.join(staging, GRADING_DIR, "audit_config.json"), "w") as f:
      json.dump(audit_config, f)
    junit = f"{WORKSPACE}/{GRADING_DIR}/junit.xml"
    command = (f"{test_command} {pytest_options(staging, test_command)} --junitxml={junit} "
               f"-o junit_family=xunit1 -p no:cacheprovider")
    with open_session(staging, config) as session:
      key = None
      kwargs = {}
      if getattr(session, "supports_verdict_channel", False):
        key = secrets.token_bytes(32)
        command += f" -p {VERDICT_PLUGIN}"
        kwargs["verdict_key"] = key
      result = session.exec(command, timeout=timeout_s, env=_grading_env(config), **kwargs)
      try:
        xml_text = session.read_file(f"{GRADING_DIR}/junit.xml")
      except (FileNotFoundError, SandboxError, OSError):
        xml_text = None
      stream = None
      if key is not None and result.verdict_stream is not None:
        stream = read_verdict_stream(result.verdict_stream, key, result.verdict_stream_truncated)
      evidence = _read_evidence(session, set(hidden_files), stream.audit if stream else ())
  report = TestReport(timed_out=result.timed_out, exit_code=result.exit_code,
                      duration_s=time.monotonic() - start, runtime_evidence=evidence,
                      log=(result.stdout + result.stderr)[-LOG_TAIL_CHARS:],
                      discarded=dict(computed[0].discarded) if computed else {})
  raw: dict[tuple[str, str], str] = {}
  files: dict = {}
  junit_errors: list[str] = []
  if xml_text:
    try:
      raw, junit_errors, files = parse_junit(xml_text[:MAX_JUNIT_BYTES])
    except ET.ParseError as e:
      junit_errors.append(f"unreadable junit XML: {e}")
  if stream is None:
    # A backend without the channel (a custom one, or a remote engine's older baked server):
    # the junit report is all there is.
    _verdict_from_junit(report, result, xml_text, raw, junit_errors)
    _fill_counts(report, raw, files, expected_tests)
  else:
    _verdict_from_stream(report, result, stream, raw)
    _fill_stream_counts(report, stream.outcomes if stream.ended else {}, expected_tests)
  report.tampered = bool(report.runtime_evidence["grading_files"])
  return report


def _verdict_from_junit(report: TestReport, result, xml_text, raw: dict,
                        junit_errors: list[str]) -> None:
  report.collection_errors = list(junit_errors)
  if not xml_text and not result.timed_out:
    report.runtime_evidence["early_exits"].append(
        {"event": "no junit report", "exit_code": result.exit_code})
    if result.exit_code in (2, 3, 4):
      report.collection_errors.append(f"pytest exited with {result.exit_code} before reporting")
  if not raw and not report.collection_errors and result.exit_code == 5:
    report.collection_errors.append("no tests collected")


def _verdict_from_stream(report: TestReport, result, stream: VerdictStream, raw: dict) -> None:
  """The verdict from the verified stream; the junit report is only compared against it."""
  grading_files = report.runtime_evidence["grading_files"]
  notes = []
  for problem in stream.forged[:MAX_PROBLEMS]:
    grading_files.append({"event": "outcome stream: " + problem})
  if len(stream.forged) > MAX_PROBLEMS:
    grading_files.append({"event": f"outcome stream: {len(stream.forged) - MAX_PROBLEMS} more problems"})
  if stream.replaced:
    grading_files.append({"event": "pytest internals replaced by code under test",
                          "names": stream.replaced[:MAX_PROBLEMS]})
  if stream.repeated:
    notes.append(f"test phases reported twice (those tests fail): {stream.repeated[:5]}")
  if stream.ended:
    report.collection_errors = list(stream.collection_errors)
    forged, other = _cross_check(stream, raw)
    for item in forged[:MAX_PROBLEMS]:
      grading_files.append({"event": "junit report claims a pass the outcome stream does not", "test": item})
    if len(forged) > MAX_PROBLEMS:
      grading_files.append({"event": f"junit report claims {len(forged)} passes the outcome stream does not"})
    if other:
      notes.append(f"junit report disagrees with the outcome stream ({len(other)}): {other[:5]}")
  elif not result.timed_out:
    report.runtime_evidence["early_exits"].append(
        {"event": "no junit report", "exit_code": result.exit_code,
         "detail": "the outcome stream has no end marker"})
    if result.exit_code in (2, 3, 4):
      report.collection_errors.append(f"pytest exited with {result.exit_code} before reporting")
    if any(o == PASS for o in raw.values()):
      notes.append("junit report without a complete outcome stream: ignored")
  if (not stream.outcomes and not report.collection_errors and result.exit_code == 5
      and not result.timed_out):
    report.collection_errors.append("no tests collected")
  if notes:
    report.log = (report.log + "".join(f"\ngrading: {n}" for n in notes))[-LOG_TAIL_CHARS:]


def _fill_stream_counts(report: TestReport, outcomes: dict[str, str],
                        expected_tests: Iterable[str] | None) -> None:
  """Counts from {node id: outcome}; with expected ids, every one needs an explicit pass."""
  report.outcomes = dict(outcomes)
  if expected_tests is not None:
    expected = list(dict.fromkeys(expected_tests))
    for test_id in expected:
      report.outcomes.setdefault(test_id, "missing")
    counted = [report.outcomes[t] for t in expected]
    report.not_passed = [t for t in expected if report.outcomes[t] != PASS]
  else:
    counted = list(report.outcomes.values())
    report.not_passed = [t for t, o in report.outcomes.items() if o != PASS]
  report.passed = counted.count(PASS)
  report.skipped = counted.count("skipped")
  report.errors = counted.count("error") + len(report.collection_errors)
  report.failed = len(counted) - report.passed - report.skipped - counted.count("error")
  report.total = len(counted) + len(report.collection_errors)


def _fill_counts(report: TestReport, raw: dict, files: dict,
                 expected_tests: Iterable[str] | None) -> None:
  """Counts from junit (classname, name) keys, mapped back to node ids."""
  by_key = {mangle_nodeid(t): t for t in expected_tests} if expected_tests is not None else {}
  outcomes = {by_key.get(key) or _junit_nodeid(key, files.get(key)): outcome
              for key, outcome in raw.items()}
  _fill_stream_counts(report, outcomes, expected_tests)


# ---------------------------------------------------------------------------
# Expected tests (collected on the pristine reference state, cached per task)

def _tree_digest(paths: Iterable[str], extra: str) -> str:
  """Digest of `extra` and each tree's names, bytes, symlink targets and executable bits."""
  h = hashlib.sha256(extra.encode())
  for root in paths:
    h.update(b"\1root\0")
    if not root:
      continue
    for dirpath, dirnames, filenames in os.walk(root):
      dirnames.sort()
      h.update(b"\2dir\0" + os.path.relpath(dirpath, root).encode() + b"\0")
      # os.walk lists a symlink to a directory among the directories and does not enter it.
      for name in sorted(filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]):
        path = os.path.join(dirpath, name)
        h.update(os.path.relpath(path, root).encode() + b"\0")
        if os.path.islink(path):
          h.update(b"\3link\0" + os.readlink(path).encode() + b"\0")
        else:
          h.update(b"x" if os.access(path, os.X_OK) else b"-")
          with open(path, "rb") as f:
            h.update(hashlib.sha256(f.read()).digest())
  return h.hexdigest()


def collect_expected_tests(reference_dir: str, hidden_tests_dir: str,
                           hidden_tests_dest: str = "tests",
                           test_command: str = "python -m pytest -q tests",
                           config: SandboxConfig | None = None, timeout_s: float = 60,
                           cache_dir: str | None = None) -> list[str]:
  """Node ids pytest collects on the reference state (e.g. repo + solution) with the hidden tests.

  Cached in `cache_dir` by a digest of both trees and the command. Raises SandboxError when
  the reference itself does not collect cleanly (a broken task).
  """
  # Task preparation, not an episode: injected faults (sandbox.faults) do not apply.
  config = _without_faults(config or SandboxConfig())
  task_env = sorted(api.task_environment(config).items()) if isinstance(config, SandboxConfig) else []
  digest = _tree_digest([reference_dir, hidden_tests_dir],
                        f"{hidden_tests_dest}\0{test_command}\0{json.dumps(task_env)}\0{GRADING_PROTOCOL}")
  cache_path = os.path.join(cache_dir, f"expected-{digest[:32]}.json") if cache_dir else None
  if cache_path and os.path.exists(cache_path):
    with open(cache_path) as f:
      return json.load(f)
  with tempfile.TemporaryDirectory(prefix="rlcoder-collect-") as staging:
    prepare_grading_copy(reference_dir, staging, hidden_tests_dir, hidden_tests_dest,
                         reference_dir)
    out = f"{WORKSPACE}/{GRADING_DIR}/collected.txt"
    # The grading command's own options, so that node ids come out as grading names them.
    command = (f"{test_command} {pytest_options(staging, test_command)} --collect-only "
               f"-p rlcoder_collect -p no:cacheprovider")
    task_env = api.task_environment(config) if isinstance(config, SandboxConfig) else {}
    env = {"PYTHONPATH": api.merge_pythonpath(task_env, f"{RUNTIME}/audit_site"), "RLCODER_COLLECT_OUT": out,
           "PYTHONNOUSERSITE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    with open_session(staging, config) as session:
      result = session.exec(command, timeout=timeout_s, env=env)
      try:
        text = session.read_file(f"{GRADING_DIR}/collected.txt")
      except (FileNotFoundError, OSError):
        text = None
  if result.exit_code != 0 or text is None:
    raise SandboxError(f"collecting the expected tests failed (exit {result.exit_code}): "
                       f"{(result.stdout + result.stderr)[-2000:]}")
  tests = [line for line in text.splitlines() if line.strip()]
  if cache_path:
    os.makedirs(cache_dir, exist_ok=True)
    tmp = cache_path + f".{os.getpid()}.tmp"
    with open(tmp, "w") as f:
      json.dump(tests, f)
    os.replace(tmp, cache_path)
  return tests
