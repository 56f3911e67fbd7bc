"""Data checks for a task root: executability, stability, context completeness, secrets, license.

`check_root` returns a machine-readable report (one entry per task plus a summary);
scripts/check_tasks.py prints it as a table and can enforce it. A task passes when it
loads, its reference state passes and its initial state fails on every repeated run, its
hidden tests import only what the workspace (or the standard library) provides, no file
looks like it holds a credential, and it names a license.
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

CHECKS = ("load", "license", "secrets", "context", "executable", "stable")

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


def scan_secrets(task_dir: pathlib.Path) -> list[str]:
  """'path:line: kind' for every line of a text file under the task that looks like a credential."""
  hits = []
  for p in sorted(task_dir.rglob("*")):
    if not p.is_file() or p.stat().st_size > MAX_SCAN_BYTES:
      continue
    try:
      text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
      continue
    for lineno, line in enumerate(text.splitlines(), 1):
      for kind, pattern in SECRET_PATTERNS.items():
        if pattern.search(line):
          hits.append(f"{p.relative_to(task_dir)}:{lineno}: {kind}")
  return hits


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


def check_context(task: Task, allowed: Iterable[str] = ()) -> list[str]:
  """Problems with what the hidden tests import: each must come from the workspace, the
  hidden tests themselves, the standard library or an allowed list."""
  provided = set(ALWAYS_AVAILABLE) | set(sys.stdlib_module_names) | set(allowed)
  provided |= _top_level_modules(task.repo_dir)
  dest = task.repo_dir / task.hidden_tests_dest
  provided |= _top_level_modules(dest)
  problems = []
  for p in sorted(task.tests_dir.rglob("*.py")):
    provided |= _top_level_modules(p.parent)
  for p in sorted(task.tests_dir.rglob("*.py")):
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
               batch: bool = True, log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
  """Runs every check on every task directory under `root`; returns the report dict."""
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
  if execute and tasks:
    runs_results: list[list[Any]] = []
    for run in range(max(1, runs)):
      verifier = TaskVerifier(grader, workers=workers, sandbox_config=sandbox_config)  # fresh cache per run
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
      "batch": batch,
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
