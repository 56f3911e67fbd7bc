"""Importers on small committed samples: layout, metadata, malformed lines, and verification
(reference passes, initial fails) by actually running the hidden tests."""

import json
import pathlib
import subprocess

import pytest

from rl.tasks import load_task_root
from rl.tasks.importers import JsonlError, read_jsonl, run_importer
from rl.tasks.verify import TaskVerifier, sandbox_available

SAMPLES = pathlib.Path(__file__).parent / "fixtures" / "tasks_samples"


@pytest.fixture(scope="module")
def verifier():
  # The sandbox is the real path; the plain-subprocess runner stands in only where no
  # sandbox package exists (then these tests exercise the task logic, not isolation).
  return TaskVerifier("sandbox" if sandbox_available() else "subprocess", workers=2)


def test_read_jsonl_reports_line_numbers(tmp_path):
  errors = []
  rows = list(read_jsonl(SAMPLES / "humaneval_sample.jsonl", errors=errors, required=("task_id",)))
  assert [n for n, _ in rows] == [1, 3]
  assert len(errors) == 1 and errors[0].startswith("humaneval_sample.jsonl:2: bad JSON")
  with pytest.raises(JsonlError, match=r"humaneval_sample.jsonl:2"):
    list(read_jsonl(SAMPLES / "humaneval_sample.jsonl", on_error="reject"))
  p = tmp_path / "x.jsonl"
  p.write_text('[1, 2]\n{"a": 1}\n')
  errors = []
  assert len(list(read_jsonl(p, errors=errors, required=("task_id",)))) == 0
  assert errors == ["x.jsonl:1: expected a JSON object, got list", "x.jsonl:2: missing field(s) task_id"]


@pytest.mark.slow
def test_humaneval_import_and_verify(tmp_path, verifier):
  result = run_importer("humaneval", SAMPLES / "humaneval_sample.jsonl", tmp_path)
  assert len(result.tasks) == 2 and len(result.skipped) == 1 and ":2:" in result.skipped[0]
  tasks = load_task_root(tmp_path)  # via the manifest the importer wrote
  assert (tmp_path / "manifest.jsonl").is_file()
  t = tasks[0]
  assert t.id == "humaneval-0" and t.metadata["source"] == "humaneval" and "MIT" in t.metadata["license"]
  assert (t.repo_dir / "solution.py").read_text().startswith("from typing import List")
  assert "check(has_close_elements)" in (t.tests_dir / "test_solution.py").read_text()
  for v in verifier.verify_many(tasks):
    assert v.ok, v.reason
    assert v.initial["passed"] == 0 and v.reference["all_passed"]
  with pytest.raises(JsonlError):
    run_importer("humaneval", SAMPLES / "humaneval_sample.jsonl", tmp_path / "r", on_error="reject")


@pytest.mark.slow
def test_humanevalfix_import_and_verify(tmp_path, verifier):
  result = run_importer("humanevalfix", SAMPLES / "humanevalfix_sample.jsonl", tmp_path)
  assert len(result.tasks) == 2 and not result.skipped
  t = result.tasks[0]
  assert t.public_tests == ["test_example.py"] and t.metadata["bug_type"]
  assert "distance = elem - elem2" in (t.repo_dir / "solution.py").read_text()
  assert t.fix and all((t.repo_dir / e["path"]).read_text().count(e["old"]) == 1 for e in t.fix)
  for v in verifier.verify_many(result.tasks):
    assert v.ok, v.reason


@pytest.mark.slow
def test_quixbugs_import_and_verify(tmp_path, verifier):
  # The buggy bitcount loops forever: a short time limit keeps the test fast.
  result = run_importer("quixbugs", SAMPLES / "quixbugs_sample.jsonl", tmp_path, timeout_s=4)
  ids = sorted(t.id for t in result.tasks)
  assert ids == ["quixbugs-bitcount", "quixbugs-breadth_first_search"]
  bfs = [t for t in result.tasks if "breadth" in t.id][0]
  assert (bfs.repo_dir / "node.py").is_file()  # support file the tests import
  assert bfs.metadata["license"].startswith("MIT")
  verdicts = {v.task_id: v for v in verifier.verify_many(result.tasks)}
  assert all(v.ok for v in verdicts.values()), verdicts
  assert verdicts["quixbugs-bitcount"].initial["timed_out"]


@pytest.mark.slow
def test_mbpp_import(tmp_path, verifier):
  result = run_importer("mbpp", SAMPLES / "mbpp_sample.jsonl", tmp_path)
  assert sorted(t.id for t in result.tasks) == ["mbpp-9001", "mbpp-9002"]
  assert len(result.skipped) == 1 and "cannot tell the function name" in result.skipped[0]
  t = [t for t in result.tasks if t.id == "mbpp-9001"][0]
  stub = (t.repo_dir / "solution.py").read_text()
  assert stub.startswith("def sum_squares(xs):") and "pass" in stub
  for v in verifier.verify_many(result.tasks):
    assert v.ok, v.reason


def _git(repo, *args):
  subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                 env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
                      "GIT_COMMITTER_EMAIL": "t@e", "PATH": "/usr/bin:/bin:/usr/local/bin"})


def test_git_import_and_verify(tmp_path, verifier):
  repo = tmp_path / "proj"
  (repo / "tests").mkdir(parents=True)
  (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
  (repo / "tests" / "test_calc.py").write_text("from calc import add\n\ndef test_old():\n    assert add(2, 0) == 2\n")
  (repo / "LICENSE").write_text("MIT License\n\nCopyright (c) test\n\nPermission is hereby granted, free of charge, "
                                "to any person ... The above copyright notice and this permission notice ...\n")
  _git(repo, "init", "-q")
  _git(repo, "add", ".")
  _git(repo, "commit", "-q", "-m", "initial")
  (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
  (repo / "tests" / "test_calc.py").write_text(
      "from calc import add\n\ndef test_old():\n    assert add(2, 0) == 2\n\ndef test_add():\n    assert add(2, 3) == 5\n")
  _git(repo, "commit", "-q", "-am", "Fix add: it subtracted")
  result = run_importer("git", repo, tmp_path / "out")
  assert len(result.tasks) == 1, result.skipped
  t = result.tasks[0]
  # The hidden tests are the commit's test folder, landing where it was.
  assert t.hidden_tests_dest == "tests" and "Fix add" in t.statement and t.metadata["license"] == "MIT"
  assert "return a - b" in (t.repo_dir / "calc.py").read_text()
  assert "test_add" in (t.tests_dir / "test_calc.py").read_text()
  assert t.test_command == "python -m pytest -q tests/test_calc.py"
  assert "tests/test_calc.py" not in t.solution_patch  # tests are hidden, not part of the fix
  v = verifier.verify(t)
  assert v.ok, v.reason
  (repo / "README").write_text("x\n")
  _git(repo, "add", ".")
  _git(repo, "commit", "-q", "-m", "docs only")
  result = run_importer("git", repo, tmp_path / "out2")
  assert not result.tasks and "no test files" in result.skipped[0]


def test_import_script_cli(tmp_path):
  out = subprocess.run([".venv/bin/python", "scripts/import_tasks.py", "quixbugs", str(SAMPLES / "quixbugs_sample.jsonl"),
                        "--out", str(tmp_path / "q"), "--limit", "1"], capture_output=True, text=True,
                       cwd=pathlib.Path(__file__).parents[1], check=True)
  assert json.loads(out.stdout.strip().splitlines()[-1])["tasks"] == 1
  bad = subprocess.run([".venv/bin/python", "scripts/import_tasks.py", "humaneval", str(SAMPLES / "humaneval_sample.jsonl"),
                        "--out", str(tmp_path / "h"), "--on-error", "reject"], capture_output=True, text=True,
                       cwd=pathlib.Path(__file__).parents[1])
  assert bad.returncode == 2 and "humaneval_sample.jsonl:2" in bad.stderr
