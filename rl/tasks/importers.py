"""Importers that turn public benchmarks (and users' git history) into task directories.

Each importer reads its input, writes one task per record under an output root and returns
an `ImportResult` (tasks written, records skipped with reasons). Malformed JSONL lines are
reported with their line numbers and either skipped or rejected (`on_error`).
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import gzip
import json
import os
import pathlib
import re
from typing import Any, Callable, Iterator

from rl.tasks.format import Task, TaskError, sanitize_id, write_manifest, write_task
from rl.tasks.patch import make_patch

IMPORTERS: dict[str, Callable[..., "ImportResult"]] = {}


def importer(name: str):
  def _add(fn):
    IMPORTERS[name] = fn
    return fn
  return _add


@dataclasses.dataclass
class ImportResult:
  tasks: list[Task] = dataclasses.field(default_factory=list)
  skipped: list[str] = dataclasses.field(default_factory=list)  # "line N: reason" / "id: reason"

  def summary(self) -> str:
    return f"{len(self.tasks)} tasks written, {len(self.skipped)} skipped"


class JsonlError(ValueError):
  """A JSONL input has malformed lines and the caller asked to reject them."""


def read_jsonl(path: str | os.PathLike, *, on_error: str = "skip", required: tuple[str, ...] = (),
               errors: list[str] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
  """Yields (line number, record) from a .jsonl or .jsonl.gz file.

  Malformed lines (bad JSON, not an object, missing `required` keys) are appended to
  `errors` as "path:LINE: problem" and skipped (on_error="skip"), or raise JsonlError
  naming every bad line (on_error="reject", checked before anything is yielded).
  """
  if on_error not in ("skip", "reject"):
    raise ValueError(f"on_error must be 'skip' or 'reject', got {on_error!r}")
  path = pathlib.Path(path)
  if not path.is_file():
    raise FileNotFoundError(f"input file {path} does not exist")
  opener = gzip.open if path.name.endswith(".gz") else open
  good, bad = [], []
  with opener(path, "rt", encoding="utf-8") as f:
    for lineno, line in enumerate(f, 1):
      if not line.strip():
        continue
      try:
        rec = json.loads(line)
      except json.JSONDecodeError as e:
        bad.append(f"{path.name}:{lineno}: bad JSON ({e.msg} at column {e.colno})")
        continue
      if not isinstance(rec, dict):
        bad.append(f"{path.name}:{lineno}: expected a JSON object, got {type(rec).__name__}")
        continue
      missing = [k for k in required if k not in rec]
      if missing:
        bad.append(f"{path.name}:{lineno}: missing field(s) {', '.join(missing)}")
        continue
      good.append((lineno, rec))
  if bad and on_error == "reject":
    raise JsonlError(f"{len(bad)} malformed line(s) in {path}:\n" + "\n".join(bad))
  if errors is not None:
    errors.extend(bad)
  yield from good


def compute_fix(before: dict[str, str], after: dict[str, str], *, max_edits: int = 8) -> list[dict[str, str]] | None:
  """Minimal exact-string edits [{"path", "old", "new"}] turning `before` into `after`.

  Each `old` is grown with neighbouring lines until it occurs exactly once in its file,
  so a scripted agent can replay the fix with edit_file. None when files are added or
  removed or the edits are too many to be useful.
  """
  if set(before) != set(after):
    return None
  edits = []
  for path in sorted(before):
    old_text, new_text = before[path], after[path]
    if old_text == new_text:
      continue
    a, b = old_text.splitlines(keepends=True), new_text.splitlines(keepends=True)
    ops = [op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"]
    applied_text = old_text
    for tag, i1, i2, j1, j2 in reversed(ops):  # bottom-up keeps earlier line numbers valid
      del tag
      lo, hi = i1, i2
      while True:
        old = "".join(a[lo:hi])
        # Pure insertions need an anchor line; grow until the anchor is unique too.
        if old and applied_text.count(old) == 1:
          break
        if lo == 0 and hi == len(a):
          break
        if hi < len(a) and (hi - i2) <= (i1 - lo):
          hi += 1
        elif lo > 0:
          lo -= 1
        else:
          hi += 1
      new = "".join(a[lo:i1]) + "".join(b[j1:j2]) + "".join(a[i2:hi])
      if not old or applied_text.count(old) != 1:
        return None
      edits.append({"path": path, "old": old, "new": new})
  edits.reverse()
  if not edits or len(edits) > max_edits:
    return None
  try:
    if apply_fix(before, edits) != after:
      return None
  except ValueError:  # an earlier edit made a later `old` ambiguous
    return None
  return edits


def apply_fix(files: dict[str, str], fix: list[dict[str, str]]) -> dict[str, str]:
  """Replays structured edits (each `old` must occur exactly once) on {path: text}."""
  out = dict(files)
  for e in fix:
    text = out[e["path"]]
    if text.count(e["old"]) != 1:
      raise ValueError(f"fix for {e['path']}: old text occurs {text.count(e['old'])} times")
    out[e["path"]] = text.replace(e["old"], e["new"], 1)
  return out


def _finish(out: str | os.PathLike, result: ImportResult) -> ImportResult:
  write_manifest(out)
  return result


def _stub_if_needed(prompt: str) -> str:
  """The prompt as a runnable module: a function whose body is only a docstring is valid."""
  try:
    compile(prompt, "solution.py", "exec")
    return prompt
  except SyntaxError:
    return prompt.rstrip("\n") + "\n    pass\n"


_TOPLEVEL_CALL_RE = re.compile(r"^check\(.*\)\s*$", re.M)


def _check_test_module(test_code: str, entry_point: str, *, module: str = "solution") -> str:
  """A pytest file around a HumanEval-style `check(candidate)` test."""
  test_code = _TOPLEVEL_CALL_RE.sub("", test_code)  # the call runs inside test_check instead
  return (f"# The benchmark's tests may use the module's own imports and helpers.\n"
          f"from {module} import *  # noqa: F401,F403\n"
          f"from {module} import {entry_point}\n\n"
          f"{test_code.strip()}\n\n\n"
          f"def test_check():\n    check({entry_point})\n")


@importer("humaneval")
def import_humaneval(input_path: str | os.PathLike, out: str | os.PathLike, *, on_error: str = "skip",
                     limit: int | None = None, license: str = "MIT (Copyright (c) OpenAI)") -> ImportResult:
  """HumanEval: the prompt is repo/solution.py; the canonical body is solution.patch."""
  result = ImportResult()
  records = read_jsonl(input_path, on_error=on_error, errors=result.skipped,
                       required=("task_id", "prompt", "canonical_solution", "test", "entry_point"))
  for n, (lineno, rec) in enumerate(records):
    if limit is not None and n >= limit:
      break
    try:
      tid = sanitize_id(rec["task_id"])
      start = _stub_if_needed(rec["prompt"])
      reference = rec["prompt"] + rec["canonical_solution"]
      statement = (f"Implement the function `{rec['entry_point']}` in `solution.py` so that it does what "
                   f"its docstring says. Keep its name and signature.\n\n```python\n{rec['prompt'].strip()}\n```\n")
      result.tasks.append(write_task(
          out, statement=statement, repo_files={"solution.py": start},
          test_files={"test_solution.py": _check_test_module(rec["test"], rec["entry_point"])},
          metadata={"id": tid, "source": "humaneval", "license": license, "timeout_s": 30,
                    "difficulty": "benchmark", "tags": ["humaneval", "completion"], "split": "test",
                    "original_id": rec["task_id"], "entry_point": rec["entry_point"],
                    "fix": compute_fix({"solution.py": start}, {"solution.py": reference})},
          solution_patch=make_patch({"solution.py": start}, {"solution.py": reference})))
    except (TaskError, KeyError, TypeError) as e:
      result.skipped.append(f"line {lineno} ({rec.get('task_id')}): {e}")
  return _finish(out, result)


@importer("humanevalfix")
def import_humanevalfix(input_path: str | os.PathLike, out: str | os.PathLike, *, on_error: str = "skip",
                        limit: int | None = None, license: str = "MIT (Copyright (c) 2023 Muennighoff)") -> ImportResult:
  """HumanEvalFix (HumanEvalPack Python): the starting state is the buggy function."""
  result = ImportResult()
  records = read_jsonl(input_path, on_error=on_error, errors=result.skipped,
                       required=("task_id", "prompt", "canonical_solution", "buggy_solution", "test", "entry_point"))
  for n, (lineno, rec) in enumerate(records):
    if limit is not None and n >= limit:
      break
    try:
      tid = "humanevalfix-" + sanitize_id(rec["task_id"].split("/")[-1])
      buggy = rec["prompt"] + rec["buggy_solution"]
      fixed = rec["prompt"] + rec["canonical_solution"]
      repo = {"solution.py": buggy}
      public = []
      if rec.get("example_test"):
        repo["test_example.py"] = _check_test_module(rec["example_test"], rec["entry_point"]).replace(
            "def test_check", "def test_examples")
        public = ["test_example.py"]
      statement = (f"The function `{rec['entry_point']}` in `solution.py` has a bug: it does not do what "
                   f"its docstring says. Fix the bug."
                   + (" `python -m pytest -q test_example.py` runs the docstring examples." if public else "") + "\n")
      result.tasks.append(write_task(
          out, statement=statement, repo_files=repo,
          test_files={"test_solution.py": _check_test_module(rec["test"], rec["entry_point"])},
          metadata={"id": tid, "source": "humanevalfix", "license": license, "timeout_s": 30,
                    "difficulty": "benchmark", "tags": ["humanevalfix", "bugfix", rec.get("bug_type", "")],
                    "split": "test", "original_id": rec["task_id"], "entry_point": rec["entry_point"],
                    "bug_type": rec.get("bug_type"), "public_tests": public,
                    "fix": compute_fix({"solution.py": buggy}, {"solution.py": fixed})},
          solution_patch=make_patch({"solution.py": buggy}, {"solution.py": fixed})))
    except (TaskError, KeyError, TypeError) as e:
      result.skipped.append(f"line {lineno} ({rec.get('task_id')}): {e}")
  return _finish(out, result)


@importer("quixbugs")
def import_quixbugs(input_path: str | os.PathLike, out: str | os.PathLike, *, on_error: str = "skip",
                    limit: int | None = None, license: str | None = None, timeout_s: float = 60) -> ImportResult:
  """QuixBugs (Python): one-line bugs in classic algorithms; tests as pytest files.

  Several buggy programs loop forever, so their initial state fails by time-out.
  """
  result = ImportResult()
  records = read_jsonl(input_path, on_error=on_error, errors=result.skipped,
                       required=("name", "program_file", "test_file", "buggy_program", "correct_program", "tests"))
  for n, (lineno, rec) in enumerate(records):
    if limit is not None and n >= limit:
      break
    try:
      tid = "quixbugs-" + sanitize_id(rec["name"])
      support = dict(rec.get("support_files") or {})
      before = {rec["program_file"]: rec["buggy_program"], **support}
      after = {rec["program_file"]: rec["correct_program"], **support}
      statement = (f"The program `{rec['program_file']}` (function `{rec.get('entry_point', rec['name'])}`) "
                   f"has a bug on one line. Find and fix it.\n")
      result.tasks.append(write_task(
          out, statement=statement, repo_files=before, test_files={rec["test_file"]: rec["tests"]},
          metadata={"id": tid, "source": "quixbugs", "license": license or rec.get("license") or "MIT",
                    "timeout_s": timeout_s, "difficulty": "benchmark", "tags": ["quixbugs", "bugfix"],
                    "split": "test", "original_id": rec["name"], "entry_point": rec.get("entry_point"),
                    "upstream": rec.get("source"), "notes": rec.get("skipped_cases_note") or [],
                    "fix": compute_fix(before, after)},
          solution_patch=make_patch(before, after)))
    except (TaskError, KeyError, TypeError) as e:
      result.skipped.append(f"line {lineno} ({rec.get('name')}): {e}")
  return _finish(out, result)


_MBPP_NAME_RE = re.compile(r"assert\s+(?:not\s+)?\(?\s*(?:set\(|math\.isclose\()?\s*([A-Za-z_]\w*)\s*\(")


def _mbpp_stub(code: str, name: str, text: str) -> str:
  """A stub module: the function's signature and the problem text as docstring."""
  tree = ast.parse(code)
  for node in tree.body:
    if isinstance(node, ast.FunctionDef) and node.name == name:
      args = ast.unparse(node.args)
      doc = text.replace('"""', "'''").strip()
      return f'def {name}({args}):\n    """{doc}"""\n    pass\n'
  raise TaskError(f"function {name!r} named by the tests is not defined in the reference code")


@importer("mbpp")
def import_mbpp(input_path: str | os.PathLike, out: str | os.PathLike, *, on_error: str = "skip",
                limit: int | None = None, license: str = "CC-BY-4.0 (Google Research, MBPP)") -> ImportResult:
  """MBPP: the function name comes from the asserts; the agent starts from a stub."""
  result = ImportResult()
  records = read_jsonl(input_path, on_error=on_error, errors=result.skipped,
                       required=("task_id", "text", "code", "test_list"))
  for n, (lineno, rec) in enumerate(records):
    if limit is not None and n >= limit:
      break
    try:
      tests = list(rec["test_list"]) + list(rec.get("challenge_test_list") or [])
      names = {m for t in tests for m in _MBPP_NAME_RE.findall(t)}
      names = [nm for nm in names if re.search(rf"def\s+{nm}\s*\(", rec["code"])]
      if len(names) != 1:
        raise TaskError(f"cannot tell the function name from the tests (candidates {sorted(names)})")
      name = names[0]
      code = rec["code"].replace("\r\n", "\n")
      stub = _mbpp_stub(code, name, rec["text"])
      body = "\n".join(f"def test_{i}():\n    {t.strip()}\n" for i, t in enumerate(tests))
      test_file = (f"{rec.get('test_setup_code') or ''}\nfrom solution import *  # noqa: F401,F403\n"
                   f"from solution import {name}\n\n\n{body}")
      statement = (f"{rec['text'].strip()}\n\nWrite it as the function `{name}` in `solution.py`. "
                   f"For example, this must hold:\n\n```python\n{rec['test_list'][0].strip()}\n```\n")
      result.tasks.append(write_task(
          out, statement=statement, repo_files={"solution.py": stub}, test_files={"test_solution.py": test_file},
          metadata={"id": "mbpp-" + sanitize_id(str(rec["task_id"])), "source": "mbpp", "license": license,
                    "timeout_s": 30, "difficulty": "benchmark", "tags": ["mbpp", "completion"], "split": "test",
                    "original_id": rec["task_id"], "entry_point": name},
          solution_patch=make_patch({"solution.py": stub}, {"solution.py": code if code.endswith("\n") else code + "\n"})))
    except (TaskError, KeyError, TypeError, SyntaxError) as e:
      result.skipped.append(f"line {lineno} (task {rec.get('task_id')}): {e}")
  return _finish(out, result)


# Fix commits of a git repository live in rl/tasks/git_import.py (it uses ImportResult and
# compute_fix from here, so it is imported last).
from rl.tasks.git_import import TEST_PATH_RE, import_git  # noqa: E402,F401  # pylint: disable=wrong-import-position

IMPORTERS["git"] = import_git


def run_importer(name: str, input_path: str | os.PathLike, out: str | os.PathLike, **kwargs: Any) -> ImportResult:
  if name not in IMPORTERS:
    raise LookupError(f"unknown importer {name!r}; known importers: {', '.join(sorted(IMPORTERS))}")
  pathlib.Path(out).mkdir(parents=True, exist_ok=True)
  return IMPORTERS[name](input_path, out, **kwargs)
