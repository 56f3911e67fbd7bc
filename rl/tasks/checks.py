"""Data checks for a task root: executability, stability, context completeness, secrets,
license and the statement.

`check_root` returns a machine-readable report (one entry per task plus a summary);
scripts/check_tasks.py prints it as a table and can enforce it. A task passes when it
loads, its reference state succeeds and its initial state fails on every repeated run (graded
by default exactly as rollouts grade: `rl.tasks.verify`), its hidden tests import only what the
workspace (or the standard library) provides, no file looks like it holds a credential, it
names a license, and its statement describes the problem without giving the fix away.
"""

from __future__ import annotations

import ast
import collections
import pathlib
import re
import sys
import time
from typing import Any, Callable, Iterable, Sequence

from rl.tasks.format import MANIFEST_NAME, Task, TaskError, load_task

CHECKS = ("load", "license", "secrets", "context", "statement", "executable", "stable")

SECRET_PATTERNS = {
    "private key": re.compile(r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP )?PRIVATE KEY-----"),
    "AWS access key": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "GitHub token": re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})\b"),
    "OpenAI-style key": re.compile(r"\bsk-[A-Za-z0-9_-]{32,}\b"),
    "Hugging Face token": re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"),
    "Slack token": re.compile(r"\bxox[baprs]-[A-Za-z0-9-]{10,}\b"),
    "Google API key": re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
    "credential assignment": re.compile(
        r"(?i)\b(?:password|passwd|secret|api_key|apikey|access_token|auth_token)\s*[:=]\s*['\"][^'\"\s]{8,}['\"]"),
    "URL with credentials": re.compile(r"\b[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s:@]+@[^/\s]+"),
}
MAX_SCAN_BYTES = 2_000_000
ALWAYS_AVAILABLE = {"pytest", "_pytest", "__future__"}


# Kinds that documentation routinely shows with made-up values (RFC 3986's
# `foo://user:pass@host`, `password = "..."` in a usage example): inside a Python docstring or
# comment they are examples, not credentials. Key formats (AWS, GitHub ...) count everywhere.
EXAMPLE_KINDS = {"URL with credentials", "credential assignment"}


_URL_PARTS_RE = re.compile(r"://([^/\s:@]+):([^/\s:@]+)@([^/\s:'\"]+)")
PLACEHOLDER_PASSWORDS = {"pass", "password", "passwd", "pwd", "pw", "secret", "changeme", "token", "test",
                         "example", "hunter2", "foo", "bar", "baz"}
EXAMPLE_HOST_RE = re.compile(r"(^|\.)(example\.(com|net|org)|example|test|invalid|localhost)$", re.I)


def _is_example_url(line: str) -> bool:
  """Every credential URL on the line is an example: a placeholder or variable password, a
  password too short to be real, or an RFC 2606 example host (a URL parser's test data)."""
  found = _URL_PARTS_RE.findall(line)
  if not found:
    return False
  for _, password, host in found:
    placeholder = (password.lower().replace("%20", "") in PLACEHOLDER_PASSWORDS or len(password) < 6
                   or re.fullmatch(r"\$\{?\w+\}?|%\(\w+\)s|\{\w*\}|<[^>]*>|[x*.]+", password, re.I))
    if not (placeholder or EXAMPLE_HOST_RE.search(host.split(":")[0])):
      return False
  return True


def _doc_lines(text: str) -> set[int]:
  """Line numbers of a Python source's docstrings and comments (empty when it does not parse)."""
  import io  # pylint: disable=import-outside-toplevel
  import tokenize  # pylint: disable=import-outside-toplevel
  lines: set[int] = set()
  try:
    tree = ast.parse(text)
  except (SyntaxError, ValueError):
    return lines
  for node in ast.walk(tree):
    if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
      body = getattr(node, "body", [])
      if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
          and isinstance(body[0].value.value, str):
        lines.update(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
  try:
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
      if tok.type == tokenize.COMMENT:
        lines.add(tok.start[0])
  except (tokenize.TokenError, SyntaxError):
    pass
  return lines


def scan_secrets(task_dir: pathlib.Path) -> list[str]:
  """'path:line: kind' for every line of a text file under the task that looks like a credential.

  Example credentials in Python docstrings and comments (EXAMPLE_KINDS) are not reported, nor
  are URLs whose passwords are placeholders or variables or whose hosts are example domains.
  """
  hits = []
  for p in sorted(task_dir.rglob("*")):
    if not p.is_file() or p.stat().st_size > MAX_SCAN_BYTES:
      continue
    try:
      text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
      continue
    doc_lines = _doc_lines(text) if p.suffix == ".py" else set()
    for lineno, line in enumerate(text.splitlines(), 1):
      for kind, pattern in SECRET_PATTERNS.items():
        if not pattern.search(line) or (kind in EXAMPLE_KINDS and lineno in doc_lines):
          continue
        if kind == "URL with credentials" and _is_example_url(line):
          continue
        hits.append(f"{p.relative_to(task_dir)}:{lineno}: {kind}")
  return hits


# A statement that is only an issue reference ("Fix #387", "Closes GH-12") says nothing.
_ISSUE_ONLY_RE = re.compile(r"^\W*(?:(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?|see|refs?|issue|gh)\W*)*"
                            r"(?:[\w.-]+/[\w.-]+)?(?:#|gh-)\d+\W*$", re.I)


def check_statement(task: Task) -> list[str]:
  """Problems with task.md: empty or issue-number-only, or it leaks the fix or hidden tests.

  Leaks: a unified-diff hunk, a line the reference fix adds (longer than a trivial token),
  or the name of a hidden test function.
  """
  problems = []
  from rl.tasks.git_import import PUBLIC_TESTS_NOTE  # pylint: disable=import-outside-toplevel
  text = task.statement
  description = "\n\n".join(p for p in text.split("\n\n") if not p.strip().startswith(PUBLIC_TESTS_NOTE))
  body = "\n".join(line for line in description.splitlines() if not line.lstrip().startswith(("`", "python ", "$ ")))
  words = re.findall(r"[A-Za-z]{3,}", re.sub(r"(?:#|gh-)\d+", " ", body))
  first_line = (description.strip().splitlines() or [""])[0]
  if len(words) < 3 or _ISSUE_ONLY_RE.match(first_line.strip()) and len(words) < 8:
    problems.append("statement says nothing about the problem (empty or only an issue reference)")
  if re.search(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@", text, re.M) or re.search(r"^diff --git ", text, re.M):
    problems.append("statement leaks the fix: it contains a diff hunk")
  patch = task.solution_patch or ""
  statement_lines = {line.strip() for line in text.splitlines()}
  for line in patch.splitlines():
    if line.startswith("+") and not line.startswith("+++"):
      added = line[1:].strip()
      if len(added) >= 12 and re.search(r"[A-Za-z]", added) and added in statement_lines | {text.strip()} \
          or (len(added) >= 20 and added in text):
        problems.append(f"statement leaks the fix: it contains the added line {added[:60]!r}")
        break
  if task.tests_dir.is_dir():
    for p in sorted(task.tests_dir.rglob("*.py")):
      try:
        tree = ast.parse(p.read_text(encoding="utf-8", errors="surrogateescape"))
      except (SyntaxError, ValueError):
        continue
      for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test") \
            and len(node.name) > 8 and re.search(rf"\b{re.escape(node.name)}\b", text) \
            and node.name not in _public_test_names(task):
          problems.append(f"statement names the hidden test {node.name!r}")
          break
  return problems


def _public_test_names(task: Task) -> set[str]:
  """Test functions the workspace already has (naming those gives nothing away)."""
  names = set()
  for p in task.repo_dir.rglob("*.py"):
    if p.name.startswith("test") or p.name.endswith("_test.py"):
      names.update(re.findall(r"def (test\w+)", p.read_text(encoding="utf-8", errors="replace")))
  return names


def _top_level_modules(directory: pathlib.Path) -> set[str]:
  names = set()
  if directory.is_dir():
    for p in directory.iterdir():
      if p.suffix == ".py":
        names.add(p.stem)
      elif p.is_dir() and ((p / "__init__.py").exists() or any(p.glob("*.py"))):
        names.add(p.name)
  return names


def imported_modules(source: str) -> set[str]:
  """Top-level names of absolute imports in a Python source."""
  names = set()
  for node in ast.walk(ast.parse(source)):
    if isinstance(node, ast.Import):
      names.update(a.name.split(".")[0] for a in node.names)
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
      names.add(node.module.split(".")[0])
  return names


def _runtime_modules() -> set[str]:
  try:
    from sandbox.runtime_env import installed_modules  # pylint: disable=import-outside-toplevel
    return set(installed_modules())
  except Exception:  # pylint: disable=broad-except  # no runtime here: the workspace must provide all
    return set()


def _files_the_command_runs(task: Task) -> list[pathlib.Path]:
  """Hidden-test files the test command names (and the conftest.py files above them); every
  hidden Python file when it names none."""
  import shlex  # pylint: disable=import-outside-toplevel
  dest = pathlib.PurePosixPath(task.hidden_tests_dest)
  everything = sorted(task.tests_dir.rglob("*.py"))
  try:
    words = shlex.split(task.test_command)
  except ValueError:
    return everything
  chosen: set[pathlib.Path] = set()
  for word in words:
    path = pathlib.PurePosixPath(word.split("::")[0])
    try:
      rel = path.relative_to(dest) if str(dest) != "." else path
    except ValueError:
      continue
    target = task.tests_dir / rel
    if target.is_file():
      chosen.add(target)
    elif target.is_dir() and str(rel) != ".":
      chosen.update(target.rglob("*.py"))
    else:
      continue
    for parent in [target.parent, *target.parent.parents]:
      if parent == task.tests_dir.parent:
        break
      if (parent / "conftest.py").is_file():
        chosen.add(parent / "conftest.py")
  return sorted(chosen) or everything


def check_context(task: Task, allowed: Iterable[str] = ()) -> list[str]:
  """Problems with what the hidden tests that run import: each must come from the workspace
  (its root or a `python_path` root), the hidden tests themselves, the standard library, the
  sandbox runtime's installed packages or an allowed list."""
  provided = set(ALWAYS_AVAILABLE) | set(sys.stdlib_module_names) | set(allowed) | _runtime_modules()
  provided |= _top_level_modules(task.repo_dir)
  for root in task.environment.python_path:
    provided |= _top_level_modules(task.repo_dir / root)
  dest = task.repo_dir / task.hidden_tests_dest
  provided |= _top_level_modules(dest)
  problems = []
  for p in sorted(task.tests_dir.rglob("*.py")):
    provided |= _top_level_modules(p.parent)
  for p in _files_the_command_runs(task):
    try:
      names = imported_modules(p.read_text(encoding="utf-8"))
    except SyntaxError as e:
      problems.append(f"{p.relative_to(task.tests_dir)}: hidden test does not parse (line {e.lineno}): {e.msg}")
      continue
    for name in sorted(names - provided):
      problems.append(f"{p.relative_to(task.tests_dir)} imports {name!r}, which the workspace does not provide")
  return problems


def _state_summary(report: dict[str, Any] | None) -> str:
  if not report:
    return "-"
  if report.get("timed_out"):
    return "timeout"
  if report.get("collection_errors"):
    return "collection error"
  return f"{report.get('passed', 0)}/{report.get('total', 0)} passed"


def check_root(root: str | pathlib.Path, *, grader: str = "sandbox", runs: int = 2, workers: int = 2,
               sandbox_config: Any = None, allowed_modules: Sequence[str] = (), execute: bool = True,
               batch: bool = False, evaluator: Any = None, check_statements: bool = True,
               log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
  """Runs every check on every task directory under `root`; returns the report dict.

  `evaluator` (an `rl.outcome.evaluator.Evaluator`): grade each state exactly as a rollout's final
  workspace (see rl.tasks.verify); the anti-hack rules that fired are reported per task.
  `batch`: the fast pre-filter instead (pytest batched in one session, no rules, per-subtest
  counts); it is not the training verdict and is ignored when an evaluator is given.
  """
  from rl.tasks.verify import TaskVerifier  # pylint: disable=import-outside-toplevel
  root = pathlib.Path(root)
  start = time.monotonic()
  entries: dict[str, dict[str, Any]] = {}
  tasks: list[Task] = []
  seen_ids: dict[str, str] = {}
  for d in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
    entry = {"id": d.name, "checks": {}, "problems": []}
    entries[d.name] = entry
    try:
      task = load_task(d)
    except TaskError as e:
      entry["checks"]["load"] = False
      entry["problems"].append(str(e))
      continue
    if task.id in seen_ids:
      entry["checks"]["load"] = False
      entry["problems"].append(f"duplicate id {task.id!r} (also {seen_ids[task.id]})")
      continue
    seen_ids[task.id] = d.name
    entry["checks"]["load"] = True
    lic = str(task.metadata.get("license") or "").strip()
    entry["checks"]["license"] = bool(lic) and lic.lower() not in ("unknown", "none", "n/a")
    if not entry["checks"]["license"]:
      entry["problems"].append(f"no usable license field (got {lic!r})")
    secrets = scan_secrets(d)
    entry["checks"]["secrets"] = not secrets
    entry["problems"].extend(f"possible secret: {s}" for s in secrets)
    if task.grader == "pytest":
      context = check_context(task, allowed_modules)
      entry["checks"]["context"] = not context
      entry["problems"].extend(context)
      tasks.append(task)
    if check_statements:
      statement = check_statement(task)
      entry["checks"]["statement"] = not statement
      entry["problems"].extend(statement)
  if execute and tasks:
    runs_results: list[list[Any]] = []
    for run in range(max(1, runs)):
      verifier = TaskVerifier(grader, workers=workers, sandbox_config=sandbox_config,  # fresh cache per run
                              evaluator=evaluator)
      t0 = time.monotonic()
      runs_results.append(verifier.verify_many(tasks, batch=batch))
      log(f"run {run + 1}/{runs}: {len(tasks)} tasks in {time.monotonic() - t0:.1f}s")
    for i, task in enumerate(tasks):
      entry = entries[task.dir.name]
      results = [r[i] for r in runs_results]
      first = results[0]
      entry["initial"] = _state_summary(first.initial)
      entry["reference"] = _state_summary(first.reference)
      entry["initial_passed"] = (first.initial or {}).get("passed")
      entry["reference_duration_s"] = round((first.reference or {}).get("duration_s") or 0.0, 3)
      entry["checks"]["executable"] = first.ok
      if evaluator is not None:
        entry["reference_reward"] = (first.reference or {}).get("reward")
        entry["initial_reward"] = (first.initial or {}).get("reward")
        entry["rules"] = {"reference": (first.reference or {}).get("rules", []),
                          "initial": (first.initial or {}).get("rules", [])}
      if not first.ok:
        entry["problems"].append(f"not executable: {first.reason}")
      signature = {(bool((r.initial or {}).get("all_passed")), (r.initial or {}).get("passed"),
                    bool((r.reference or {}).get("all_passed")), (r.reference or {}).get("passed"),
                    r.ok) for r in results}
      entry["checks"]["stable"] = len(signature) == 1
      if len(signature) > 1:
        entry["problems"].append(f"flaky: results differ over {len(results)} runs: "
                                 + "; ".join(f"{_state_summary(r.initial)} / {_state_summary(r.reference)}" for r in results))
  for entry in entries.values():
    entry["ok"] = all(entry["checks"].values()) and bool(entry["checks"])
    entry["status"] = ("ok" if entry["ok"] else "flaky" if entry["checks"].get("stable") is False else "fail")
  counts = {c: collections.Counter(
      "pass" if e["checks"].get(c) else ("fail" if c in e["checks"] else "n/a") for e in entries.values())
      for c in CHECKS}
  summary = {
      "root": str(root), "tasks": len(entries), "ok": sum(e["ok"] for e in entries.values()),
      "failed": sorted(e["id"] for e in entries.values() if e["status"] == "fail"),
      "flaky": sorted(e["id"] for e in entries.values() if e["status"] == "flaky"),
      "checks": {c: dict(v) for c, v in counts.items()}, "runs": runs if execute else 0, "grader": grader,
      "batch": batch and evaluator is None, "verdict": "evaluator" if evaluator is not None else "tests",
      "wall_time_s": round(time.monotonic() - start, 2),
      "has_manifest": (root / MANIFEST_NAME).is_file(),
  }
  return {"summary": summary, "tasks": [entries[k] for k in sorted(entries)]}


def format_table(report: dict[str, Any], max_rows: int = 60) -> str:
  """A plain-text summary table: per-check pass/fail counts, then the failing tasks."""
  s = report["summary"]
  lines = [f"{'check':<12}{'pass':>7}{'fail':>7}{'n/a':>7}"]
  for c in CHECKS:
    v = s["checks"][c]
    lines.append(f"{c:<12}{v.get('pass', 0):>7}{v.get('fail', 0):>7}{v.get('n/a', 0):>7}")
  lines.append(f"\n{s['ok']}/{s['tasks']} tasks pass every check ({len(s['failed'])} failing, "
               f"{len(s['flaky'])} flaky; {s['runs']} run(s), grader {s['grader']}, {s['wall_time_s']}s)")
  bad = [e for e in report["tasks"] if not e["ok"]]
  if bad:
    lines.append(f"\n{'task':<40}{'status':<8}{'initial':<18}{'reference':<18}problem")
    for e in bad[:max_rows]:
      lines.append(f"{e['id'][:39]:<40}{e['status']:<8}{e.get('initial', '-'):<18}{e.get('reference', '-'):<18}"
                   f"{(e['problems'] or [''])[0][:100]}")
    if len(bad) > max_rows:
      lines.append(f"... {len(bad) - max_rows} more in the JSON report")
  return "\n".join(lines)
