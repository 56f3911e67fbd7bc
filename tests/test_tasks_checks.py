"""Data checks: each check catches its problem, flaky tasks are excluded, the CLI enforces."""

import json
import pathlib
import subprocess

import pytest

from rl.tasks import make_patch, write_manifest, write_task
from rl.tasks.checks import check_context, check_root, format_table, scan_secrets
from rl.tasks.verify import Verification, sandbox_available

GRADER = "sandbox" if sandbox_available() else "subprocess"
BUGGY = {"m.py": "def f():\n    return 1\n"}
FIXED = {"m.py": "def f():\n    return 2\n"}
TEST = {"test_m.py": "from m import f\n\n\ndef test_f():\n    assert f() == 2\n"}


def _task(root, tid, repo=BUGGY, tests=TEST, fixed=FIXED, statement="f() returns 1 where 2 is expected.", **meta):
  return write_task(root, statement=statement, repo_files=dict(repo), test_files=dict(tests),
                    metadata={"id": tid, "source": "unit", "license": "MIT", **meta},
                    solution_patch=make_patch(dict(repo), {**repo, **fixed}))


def _root(tmp_path):
  _task(tmp_path, "good")
  _task(tmp_path, "secret", repo={**BUGGY, "cfg.py": "password = 'hunter2hunter2'\n"})
  _task(tmp_path, "missing-import", tests={"test_m.py": "import numpyish\n" + TEST["test_m.py"]})
  _task(tmp_path, "already-passes", fixed=BUGGY, tests={"test_m.py": "from m import f\n\ndef test_f():\n    assert f() == 1\n"})
  _task(tmp_path, "no-license", license="unknown")
  _task(tmp_path, "uncollectable", tests={"test_m.py": "from m import g\n\ndef test_g():\n    assert g()\n"})
  _task(tmp_path, "skips", tests={"test_m.py": TEST["test_m.py"] + "\n\ndef test_slow():\n    import pytest\n    pytest.skip('too slow')\n"})
  (tmp_path / "broken").mkdir()
  (tmp_path / "broken" / "metadata.json").write_text("{")
  return tmp_path


@pytest.mark.slow
def test_check_root_flags_each_problem(tmp_path):
  report = check_root(_root(tmp_path), grader=GRADER, runs=1)
  by_id = {e["id"]: e for e in report["tasks"]}
  assert by_id["good"]["ok"] and by_id["good"]["initial"] == "0/1 passed" and by_id["good"]["reference"] == "1/1 passed"
  assert by_id["secret"]["checks"]["secrets"] is False and "cfg.py:1" in by_id["secret"]["problems"][0]
  assert by_id["missing-import"]["checks"]["context"] is False
  assert by_id["already-passes"]["checks"]["executable"] is False
  assert "already passes" in " ".join(by_id["already-passes"]["problems"])
  assert by_id["no-license"]["checks"]["license"] is False
  assert by_id["uncollectable"]["checks"]["executable"] is False
  assert "cannot be collected" in " ".join(by_id["uncollectable"]["problems"])
  assert by_id["broken"]["checks"]["load"] is False and "bad JSON" in by_id["broken"]["problems"][0]
  # As in sandbox grading, a skipped test is not a pass: such a task can never be solved.
  assert by_id["skips"]["checks"]["executable"] is False and "skips 1 test" in by_id["skips"]["problems"][0]
  assert report["summary"]["ok"] == 1 and report["summary"]["tasks"] == 8
  table = format_table(report)
  assert "1/8 tasks pass every check" in table and "executable" in table


def test_flaky_tasks_are_reported_and_excluded(tmp_path, monkeypatch):
  _task(tmp_path, "a")
  _task(tmp_path, "b")
  calls = {"n": 0}

  def fake_verify_many(self, tasks, progress=None, batch=True):
    calls["n"] += 1
    out = []
    for t in tasks:
      flaky_pass = t.id == "b" and calls["n"] == 2  # b's initial state passes on the second run only
      out.append(Verification(t.id, initial={"all_passed": flaky_pass, "passed": int(flaky_pass), "total": 1},
                              reference={"all_passed": True, "passed": 1, "total": 1}, ok=not flaky_pass))
    return out

  monkeypatch.setattr("rl.tasks.verify.TaskVerifier.verify_many", fake_verify_many)
  report = check_root(tmp_path, grader="subprocess", runs=3)
  by_id = {e["id"]: e for e in report["tasks"]}
  assert by_id["a"]["ok"] and by_id["b"]["status"] == "flaky" and report["summary"]["flaky"] == ["b"]
  assert "flaky" in by_id["b"]["problems"][0]


def test_secret_and_context_scanners(tmp_path):
  (tmp_path / "a.txt").write_text("ok\nkey = 'AKIAABCDEFGHIJKLMNOP'\n-----BEGIN RSA PRIVATE KEY-----\n")
  hits = scan_secrets(tmp_path)
  assert hits == ["a.txt:2: AWS access key", "a.txt:3: private key"]
  t = _task(tmp_path / "r", "ctx", tests={"test_m.py": "import os, json\nfrom m import f\nfrom helper import h\n",
                                           "helper.py": "def h():\n    pass\n"})
  assert check_context(t) == []
  t = _task(tmp_path / "r", "ctx2", tests={"test_m.py": "import requests\n"})
  assert "imports 'requests'" in check_context(t)[0]
  assert check_context(t, allowed=["requests"]) == []


def test_check_script_enforce_and_prune(tmp_path):
  root = tmp_path / "root"
  _task(root, "good")
  _task(root, "no-license", license="")
  write_manifest(root)
  repo_root = pathlib.Path(__file__).parents[1]
  cmd = [".venv/bin/python", "scripts/check_tasks.py", str(root), "--no-exec", "--report", str(tmp_path / "r.json")]
  assert subprocess.run(cmd, cwd=repo_root, capture_output=True).returncode == 0
  proc = subprocess.run(cmd + ["--enforce", "--prune-manifest"], cwd=repo_root, capture_output=True, text=True)
  assert proc.returncode == 1 and "1/2 tasks pass" in proc.stdout
  report = json.loads((tmp_path / "r.json").read_text())
  assert report["summary"]["failed"] == ["no-license"]
  manifest = [json.loads(l)["dir"] for l in (root / "manifest.jsonl").read_text().splitlines()]
  assert manifest == ["good"]


def test_secrets_ignore_example_urls_in_docstrings_and_comments(tmp_path):
  """RFC 3986's `foo://user:pass@host` in a docstring is documentation, not a credential (it
  failed three good tasks); the same URL in code, and real key formats anywhere, still count."""
  (tmp_path / "uri.py").write_text(
      '"""Split URIs.\n\n  foo://user:pass@example.com:8042/over/there\n"""\n\n'
      'def split(uri):\n  """E.g. split("ftp://anonymous:guest@ftp.example.org/")."""\n'
      '  # password = "example-password" (see the docs)\n  return uri\n\n'
      'URL = "https://admin:s3cret@db.internal/"\n\n'
      'def key():\n  """AKIAABCDEFGHIJKLMNOP"""\n')
  hits = scan_secrets(tmp_path)
  assert hits == ["uri.py:11: URL with credentials", "uri.py:14: AWS access key"]
  # A URL parser's test data: placeholder or variable passwords, example hosts.
  (tmp_path / "uri.py").unlink()
  (tmp_path / "test_urls.py").write_text(
      'CASES = ["https://user:pass@g.c/r.git", "https://user:${PASSWORD}@g.c/r.git",\n'
      '         "ssh://user:pass%20word@example.com/p.zip", "https://deploy:Zq8vW3nLp2@git.corp.io/r.git"]\n')
  assert scan_secrets(tmp_path) == ["test_urls.py:2: URL with credentials"]


def test_statement_check_flags_empty_and_leaking_statements(tmp_path):
  from rl.tasks.checks import check_statement
  fixed = {"m.py": "def f():\n    return compute_the_value(2)\n"}
  ok = _task(tmp_path, "ok", fixed=fixed, statement="f returns the wrong value for the default input.")
  assert check_statement(ok) == []
  bare = _task(tmp_path, "bare", fixed=fixed, statement="Fix #387\n")
  assert "says nothing" in check_statement(bare)[0]
  leak = _task(tmp_path, "leak", fixed=fixed, statement="f is wrong. Use:\n\n    return compute_the_value(2)\n")
  assert "leaks the fix" in check_statement(leak)[0]
  hunk = _task(tmp_path, "hunk", fixed=fixed, statement="f is wrong:\n@@ -1,2 +1,2 @@\n-x\n+y\n")
  assert any("diff hunk" in p for p in check_statement(hunk))
  tests = {"test_m.py": "from m import f\n\n\ndef test_default_value():\n    assert f() == 2\n"}
  named = _task(tmp_path, "named", fixed=fixed, tests=tests, statement="f is wrong; see test_default_value.")
  assert "hidden test 'test_default_value'" in check_statement(named)[0]


@pytest.mark.slow
def test_checks_grade_as_rollouts_do(tmp_path):
  """With the rollout evaluator the check is the training verdict: rewards, the expected-test
  counting and the anti-hack rules (a reference that reads the hidden tests is flagged)."""
  from rl import config as config_lib
  from rl.outcome import evaluator as evaluator_lib
  from rl.tasks.verify import subprocess_grade
  _task(tmp_path, "good")
  cheat = {"m.py": "import pathlib\n\n\ndef f():\n    return 2 if pathlib.Path('tests/test_m.py').exists() else 1\n"}
  _task(tmp_path, "cheat", fixed=cheat)
  config = config_lib.load_config(None)
  config.antihack.judge = "none"
  config.reward.grade_cache = False
  evaluator = evaluator_lib.Evaluator(config, grade_fn=None if GRADER == "sandbox" else subprocess_grade)
  report = check_root(tmp_path, grader=GRADER, runs=1, evaluator=evaluator)
  by_id = {e["id"]: e for e in report["tasks"]}
  assert by_id["good"]["ok"] and by_id["good"]["reference_reward"] == 1.0 and by_id["good"]["initial_reward"] == 0.0
  assert not by_id["cheat"]["ok"] and "D013-test-paths-in-code" in by_id["cheat"]["rules"]["reference"]
  assert "reference flagged by anti-hack rules" in by_id["cheat"]["problems"][0]
  assert report["summary"]["verdict"] == "evaluator"


def test_context_knows_import_roots_runtime_packages_and_what_runs(tmp_path):
  """A src/ layout's package, a package installed in the sandbox runtime, and a hidden helper
  the command does not run are not context problems; an unknown import in a test that runs is."""
  t = _task(tmp_path, "src", repo={"src/pkg/__init__.py": "X = 1\n"}, fixed={"src/pkg/__init__.py": "X = 2\n"},
            tests={"test_pkg.py": "import dateutil\nimport pkg\n", "property/strategies.py": "import hypothesis\n",
                   "test_other.py": "import requestsish\n"},
            python_path=["src"], test_command="python -m pytest -q tests/test_pkg.py")
  assert check_context(t) == []
  t = _task(tmp_path, "all", repo={"src/pkg/__init__.py": "X = 1\n"}, fixed={"src/pkg/__init__.py": "X = 2\n"},
            tests={"test_pkg.py": "import pkg\n", "test_other.py": "import requestsish\n"},
            python_path=["src"], test_command="python -m pytest -q tests")
  assert check_context(t) == ["test_other.py imports 'requestsish', which the workspace does not provide"]
