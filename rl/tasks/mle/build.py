"""Writes MLE task directories (ARCHITECTURE.md format, grader `mle`) and their leaderboards.

`make_mle_tasks(root)` generates the four competitions, runs the reference
solutions on the host (they are our own code) and records their scores in
`leaderboard.json`, so an agent's score can be put in context.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import os
import pathlib
import shutil
import subprocess
import tempfile
import time
from typing import Any, Iterable, Sequence

from rl.tasks.mle import competitions as competitions_lib
from rl.tasks.mle import grader
from rl.tasks.mle import references
from sandbox.runtime_env import runtime_python

SUBMISSION_FILE = "submission.csv"
SOLUTION_FILE = "solution.py"
ANSWERS_FILE = "private/answers.csv"
LEADERBOARD_FILE = "leaderboard.json"
HIDDEN_DEST = ".mle_grading"
TASK_VERSION = 1
DEFAULT_TIMEOUT_S = 120.0
# Held-out data variants are numbered from here (their data seed is seed * 1000 + variant), so
# adding training variants never turns a held-out draw into a training one.
HELDOUT_VARIANT_BASE = 500

_INSTRUCTIONS = """\
# {title}

You are a machine-learning engineer competing in an offline Kaggle-style competition.

{description}

## What to deliver

Write a Python program `{solution}` in the workspace root. It is run as `python {solution}` from
the workspace root, must finish within {timeout:.0f} seconds, and must write `{submission}` there.
The data files are `train.csv`, `test.csv` and `sample_submission.csv` (the submission format).
numpy, pandas and scikit-learn are installed; there is no network access.
"""


@dataclasses.dataclass
class ProgramRun:
  exit_code: int
  stdout: str
  stderr: str
  duration_s: float
  timed_out: bool


def run_program_on_host(source: str, workspace_dir: str | os.PathLike, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                        filename: str = SOLUTION_FILE, python: str | None = None) -> ProgramRun:
  """Runs a TRUSTED program (a reference solution, a test fixture) in a host subprocess.

  Untrusted agent code goes through the sandbox (`rl.tasks.mle.runner`), never here.
  """
  workspace_dir = pathlib.Path(workspace_dir)
  (workspace_dir / filename).write_text(source, encoding="utf-8")
  start = time.monotonic()
  try:
    proc = subprocess.run([python or runtime_python(), filename], cwd=workspace_dir, capture_output=True,
                          text=True, timeout=timeout_s, env=_program_env())
  except subprocess.TimeoutExpired as e:
    out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
    err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
    return ProgramRun(-9, out, err, time.monotonic() - start, True)
  return ProgramRun(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start, False)


def _program_env() -> dict[str, str]:
  # One OpenMP thread: on a shared, busy CPU the spinning threads of gradient boosting make a
  # seconds-long fit take minutes.
  env = {**os.environ, "PYTHONHASHSEED": "0"}
  env.setdefault("OMP_NUM_THREADS", "1")
  return env


def task_id_for(competition: str, variant: int) -> str:
  return f"mle-{competition}" + (f"-v{variant}" if variant else "")


def _new_file_patch(path: str, text: str) -> str:
  lines = text.splitlines()
  body = "".join(f"+{line}\n" for line in lines)
  return (f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
          f"@@ -0,0 +1,{len(lines)} @@\n{body}")


def write_task(root: str | os.PathLike, competition: str, *, seed: int = 0, variant: int = 0,
               timeout_s: float = DEFAULT_TIMEOUT_S, split: str = "train") -> pathlib.Path:
  """Writes one task directory (without its leaderboard); returns its path."""
  if competition not in competitions_lib.COMPETITIONS:
    raise ValueError(f"unknown MLE competition {competition!r}; known: "
                     f"{', '.join(sorted(competitions_lib.COMPETITIONS))}")
  data = competitions_lib.COMPETITIONS[competition](seed * 1000 + variant)
  task_id = task_id_for(competition, variant)
  task_dir = pathlib.Path(root) / task_id
  if task_dir.exists():
    shutil.rmtree(task_dir)
  repo = task_dir / "repo"
  repo.mkdir(parents=True)
  data.train.to_csv(repo / "train.csv", index=False)
  data.test.to_csv(repo / "test.csv", index=False)
  data.sample_submission.to_csv(repo / "sample_submission.csv", index=False)
  answers = task_dir / ANSWERS_FILE
  answers.parent.mkdir(parents=True)
  data.answers.to_csv(answers, index=False)
  refs = task_dir / "references"
  refs.mkdir()
  for name, source in references.REFERENCES[competition].items():
    (refs / f"{name}.py").write_text(source, encoding="utf-8")
  (task_dir / "solution.patch").write_text(
      _new_file_patch(SOLUTION_FILE, references.REFERENCES[competition]["linear"]), encoding="utf-8")
  (task_dir / "task.md").write_text(_INSTRUCTIONS.format(
      title=data.title, description=data.description, solution=SOLUTION_FILE, submission=SUBMISSION_FILE,
      timeout=timeout_s), encoding="utf-8")
  metadata: dict[str, Any] = {
      "id": task_id, "version": TASK_VERSION, "source": "synthetic-mle",
      "license": "Apache-2.0 (synthetic data generated by this project)",
      "language": "python", "grader": "mle", "test_command": f"python {SOLUTION_FILE}",
      "hidden_tests_dest": HIDDEN_DEST, "timeout_s": timeout_s, "difficulty": data.difficulty,
      "tags": data.tags, "split": split, "competition": competition, "generator_seed": seed,
      "variant": variant, "metric": data.metric,
      "higher_is_better": grader.get_metric(data.metric).higher_is_better,
      "submission_file": SUBMISSION_FILE, "solution_file": SOLUTION_FILE, "answers_file": ANSWERS_FILE,
      "id_column": data.id_column, "target_columns": data.target_columns,
      "expert_plan": "mle_program",  # rl.tasks.mle.expert (the scripted expert's SFT demonstrations)
      "leaderboard": LEADERBOARD_FILE, "references": [f"references/{n}.py" for n in references.REFERENCE_NAMES],
  }
  (task_dir / "metadata.json").write_text(json.dumps(metadata, indent=2) + "\n", encoding="utf-8")
  return task_dir


def run_reference(task_dir: str | os.PathLike, name: str, *, timeout_s: float = DEFAULT_TIMEOUT_S
                  ) -> dict[str, Any]:
  """Runs one reference solution on a copy of the task's repo and grades it."""
  task_dir = pathlib.Path(task_dir)
  source = (task_dir / "references" / f"{name}.py").read_text(encoding="utf-8")
  with tempfile.TemporaryDirectory(prefix="mle_ref_") as tmp:
    workspace = pathlib.Path(tmp) / "ws"
    shutil.copytree(task_dir / "repo", workspace)
    run = run_program_on_host(source, workspace, timeout_s=timeout_s)
    result = grader.grade_workspace(task_dir, workspace)
  entry = {"name": name, "runtime_s": round(run.duration_s, 3), **result.to_dict()}
  if run.exit_code != 0:
    entry.update(valid=False, error=f"exit code {run.exit_code}: {run.stderr[-500:]}")
  return entry


# Runs several trusted programs in one interpreter so pandas and scikit-learn are imported once.
# Per program: its run time, the exception that ended it (its type name; a SystemExit of 0 or
# None is none), the program's own line that raised, and the traceback's tail. The results file
# is rewritten after each program, so a driver that dies keeps what it finished.
_BATCH_DRIVER = """
import json, os, runpy, sys, time, traceback
jobs = json.loads(sys.argv[1])
results = []
for job in jobs:
  os.chdir(job["workspace"])
  start = time.monotonic()
  exception, line, error = None, None, ""
  try:
    runpy.run_path(job["program"], run_name="__main__")
  except SystemExit as e:
    if e.code not in (None, 0):
      exception, error = "SystemExit", f"SystemExit({e.code!r})"
  except BaseException as e:
    exception, error = type(e).__name__, traceback.format_exc()[-800:]
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == job["program"]]
    line = frames[-1].lineno if frames else None
  results.append({"runtime_s": time.monotonic() - start, "exception": exception, "line": line, "error": error})
  with open(sys.argv[2], "w") as f:
    json.dump(results, f)
"""


def run_programs_batch(task_dir: str | os.PathLike, programs: Sequence[tuple[str, str]], tmp_dir: str | os.PathLike,
                       *, timeout_s: float) -> tuple[list[pathlib.Path], list[dict[str, Any]], str]:
  """Runs trusted `(name, source)` programs one after another in ONE interpreter of the sandbox
  runtime, each as solution.py in its own copy of the task's repo/ under `tmp_dir`. Returns the
  workspaces, each finished program's run (see _BATCH_DRIVER; fewer when the driver stopped)
  and why the driver stopped early ("" when it finished). Agents' programs run in the sandbox
  (rl.tasks.mle.runner), never here."""
  task_dir = pathlib.Path(task_dir)
  jobs = []
  for name, source in programs:
    workspace = pathlib.Path(tmp_dir) / name
    shutil.copytree(task_dir / "repo", workspace)
    program = workspace / SOLUTION_FILE
    program.write_text(source, encoding="utf-8")
    jobs.append({"workspace": str(workspace), "program": str(program)})
  results_path = pathlib.Path(tmp_dir) / "results.json"
  try:
    proc = subprocess.run([runtime_python(), "-c", _BATCH_DRIVER, json.dumps(jobs), str(results_path)],
                          capture_output=True, text=True, timeout=timeout_s, env=_program_env())
    failure = "" if proc.returncode == 0 else f"driver exit code {proc.returncode}: {proc.stderr[-500:]}"
  except subprocess.TimeoutExpired:
    failure = f"timed out after {timeout_s:.0f}s"
  runs = json.loads(results_path.read_text()) if results_path.is_file() else []
  return [pathlib.Path(j["workspace"]) for j in jobs], runs, failure


def run_reference_batch(task_dir: str | os.PathLike, names: Sequence[str] = references.REFERENCE_NAMES, *,
                   timeout_s: float = DEFAULT_TIMEOUT_S) -> list[dict[str, Any]]:
  """Runs reference solutions one after another in ONE host interpreter; grades each.

  Same results as `run_reference` per name, minus the repeated import cost.
  """
  task_dir = pathlib.Path(task_dir)
  with tempfile.TemporaryDirectory(prefix="mle_refs_") as tmp:
    sources = [(name, (task_dir / "references" / f"{name}.py").read_text(encoding="utf-8")) for name in names]
    workspaces, runs, failure = run_programs_batch(task_dir, sources, tmp, timeout_s=timeout_s * len(names))
    entries = []
    for k, name in enumerate(names):
      run = runs[k] if k < len(runs) else {"runtime_s": 0.0, "error": failure or "not run"}
      entry = {"name": name, "runtime_s": round(run["runtime_s"], 3),
               **grader.grade_workspace(task_dir, workspaces[k]).to_dict()}
      if run["error"]:
        entry.update(valid=False, error=run["error"])
      entries.append(entry)
  return entries


def write_leaderboard(task_dir: str | os.PathLike, entries: Sequence[dict[str, Any]]) -> dict[str, Any]:
  task_dir = pathlib.Path(task_dir)
  metadata = json.loads((task_dir / "metadata.json").read_text(encoding="utf-8"))
  ranked = sorted(entries, key=lambda e: -(e["normalized_score"] if e.get("valid") else float("inf")))
  board = {"task_id": metadata["id"], "metric": metadata["metric"],
           "higher_is_better": metadata["higher_is_better"], "entries": ranked}
  (task_dir / LEADERBOARD_FILE).write_text(json.dumps(board, indent=2) + "\n", encoding="utf-8")
  return board


def leaderboard_position(task_dir: str | os.PathLike, normalized_score: float) -> dict[str, Any]:
  """Where a (sign-normalised) score lands among the references: rank and references beaten."""
  board = json.loads((pathlib.Path(task_dir) / LEADERBOARD_FILE).read_text(encoding="utf-8"))
  valid = [e for e in board["entries"] if e.get("valid")]
  beaten = [e["name"] for e in valid if normalized_score > e["normalized_score"]]
  return {"rank": 1 + len(valid) - len(beaten), "of": len(valid) + 1, "beats": beaten}


def task_plan(*, variants: int = 1, heldout_variants: int = 0,
              competitions: Iterable[str] | None = None) -> list[tuple[str, int, str]]:
  """(competition, variant, split) of every task `make_mle_tasks` writes: `variants` training
  variants (0, 1, ...) and `heldout_variants` held-out ones (HELDOUT_VARIANT_BASE, ...) per
  competition. A variant is another draw of the competition's data (same columns and metric)."""
  if not 0 <= variants <= HELDOUT_VARIANT_BASE or heldout_variants < 0:
    raise ValueError(f"MLE variants: need 0 <= variants <= {HELDOUT_VARIANT_BASE} and heldout_variants >= 0, "
                     f"got {variants} and {heldout_variants}")
  names = list(competitions or competitions_lib.COMPETITIONS)
  return ([(c, v, "train") for c in names for v in range(variants)]
          + [(c, HELDOUT_VARIANT_BASE + v, "heldout") for c in names for v in range(heldout_variants)])


def make_mle_tasks(root: str | os.PathLike, *, seed: int = 0, variants: int = 1, heldout_variants: int = 0,
                   competitions: Iterable[str] | None = None, run_references: bool = True,
                   jobs: int = 2, timeout_s: float = DEFAULT_TIMEOUT_S) -> list[pathlib.Path]:
  """Generates `variants` training and `heldout_variants` held-out tasks per competition under
  `root` (task_plan); returns the task directories."""
  root = pathlib.Path(root)
  root.mkdir(parents=True, exist_ok=True)
  task_dirs = [write_task(root, c, seed=seed, variant=v, timeout_s=timeout_s, split=split)
               for c, v, split in task_plan(variants=variants, heldout_variants=heldout_variants,
                                            competitions=competitions)]
  if run_references:
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
      boards = list(pool.map(lambda d: run_reference_batch(d, timeout_s=timeout_s), task_dirs))
    for d, entries in zip(task_dirs, boards):
      write_leaderboard(d, entries)
  _write_manifest(root)
  return task_dirs


def _write_manifest(root: pathlib.Path) -> None:
  """Indexes the root when the tasks package offers a manifest writer (it is optional)."""
  try:
    from rl.tasks import format as task_format  # pylint: disable=import-outside-toplevel
  except ImportError:
    return
  task_format.write_manifest(root)


def demonstration_records(task_dirs: Iterable[str | os.PathLike], *,
                          solutions: Sequence[str] = ("linear", "gradient_boosting")) -> list[dict[str, Any]]:
  """Single-turn `answer` trajectories (ARCHITECTURE.md record format) whose code is a reference
  solution: SFT warm-start data for the MLE experiment. Rewards are the leaderboard scores
  when one was computed, else 0."""
  records = []
  for task_dir in task_dirs:
    task_dir = pathlib.Path(task_dir)
    metadata = json.loads((task_dir / "metadata.json").read_text(encoding="utf-8"))
    board_path = task_dir / LEADERBOARD_FILE
    board = json.loads(board_path.read_text(encoding="utf-8")) if board_path.is_file() else {"entries": []}
    scores = {e["name"]: e for e in board["entries"]}
    statement = (task_dir / "task.md").read_text(encoding="utf-8")
    for name in solutions:
      code = (task_dir / "references" / f"{name}.py").read_text(encoding="utf-8")
      entry = scores.get(name, {})
      reward = float(entry["normalized_score"]) if entry.get("valid") else 0.0
      step = {"step": 0, "text": f"```python\n{code.rstrip()}\n```", "action_type": "answer",
              "action_input": {"code": code}, "observation": "",
              "thought": "", "reward": reward, "timestamp": 0.0, "duration_s": float(entry.get("runtime_s", 0.0)),
              "tokens": {"action": 0, "observation": 0},
              "hack": {"flagged": False, "stage": None, "rules": [], "response": None}}
      records.append({
          "task_id": metadata["id"], "task_version": metadata["version"], "base_hash": "", "prompt": statement,
          "mode": "single_turn", "model": {"checkpoint": f"reference:{name}", "step": 0}, "sampling": {"temperature": 0.0, "top_p": 1.0},
          "steps": [step], "final_reward": reward, "success": bool(entry.get("valid", True)),
          "tests": {"passed": 0, "failed": 0, "errors": 0, "skipped": 0, "total": 0},
          "hack": {"flagged": False, "stage": None, "rules": [], "judge_score": None, "reason": ""},
          "terminated": "submit", "duration_s": float(entry.get("runtime_s", 0.0)),
          "submission_valid": bool(entry.get("valid", True))})
  return records
