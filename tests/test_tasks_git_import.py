"""The git importer on real git repositories made here: byte-exact files, what the commit tests,
inferred environment (src/ layout, version stubs, plugin options), statements, licenses,
per-commit options and bad input. Grading of the imported tasks runs in the sandbox."""

import json
import pathlib
import subprocess

import pytest

from rl.tasks import TaskError, apply_patch, load_task
from rl.tasks.git_import import (clean_message, detect_license, import_git, license_name,
                                 needs_plugin_options, read_commits_file)
from rl.tasks.verify import TaskVerifier, sandbox_available

REPO_ROOT = pathlib.Path(__file__).parents[1]
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e", "PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": "/tmp"}
MIT = ("MIT License\n\nPermission is hereby granted, free of charge, to any person obtaining a copy ...\n"
       "The above copyright notice and this permission notice shall be included ...\n")


def _git(repo, *args):
  subprocess.run(["git", "-C", str(repo), "-c", "core.autocrlf=false", *args], check=True,
                 capture_output=True, env=GIT_ENV)


def _write(root, files):
  for rel, data in files.items():
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data if isinstance(data, bytes) else data.encode())


def _commit(repo, files, message):
  _write(repo, files)
  _git(repo, "add", "-A")
  _git(repo, "commit", "-q", "-m", message)
  return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                        check=True).stdout.strip()


def _repo(tmp_path, files, name="proj"):
  repo = tmp_path / name
  repo.mkdir()
  _git(repo, "init", "-q")
  _commit(repo, files, "initial")
  return repo


# Fixtures whose bytes must survive: bare CR, CRLF, latin-1 text, binary data.
ODD_FILES = {
    "data/bare_cr.txt": b"one\rtwo\rthree\r",
    "data/crlf.txt": b"a\r\nb\r\n",
    "data/latin1.txt": "caf\xe9 cr\xe8me\n".encode("latin-1"),
    "data/blob.bin": bytes(range(256)) * 4,
}


def test_files_keep_their_bytes(tmp_path):
  """CR, CRLF, latin-1 and binary files survive import, the reference patch and hidden tests."""
  repo = _repo(tmp_path, {
      "LICENCE": MIT, **ODD_FILES,
      "crlf_mod.py": b"def f():\r\n    return 1\r\n\r\n\r\nOTHER = 'x'\r\n",
      "tests/test_f.py": "from crlf_mod import f\n\n\ndef test_f():\n    assert f() == 1\n",
  })
  _commit(repo, {"crlf_mod.py": b"def f():\r\n    return 2\r\n\r\n\r\nOTHER = 'x'\r\n",
                 "tests/test_f.py": "from crlf_mod import f\n\n\ndef test_f():\n    assert f() == 2\n",
                 "tests/fixtures/cr.bin": b"\x00\r\x00\r\n\xff"}, "f returns the new value")
  result = import_git(repo, tmp_path / "out")
  assert len(result.tasks) == 1, result.skipped
  task = load_task(result.tasks[0].dir)
  for rel, data in ODD_FILES.items():
    assert (task.repo_dir / rel).read_bytes() == data
  assert (task.tests_dir / "fixtures" / "cr.bin").read_bytes() == b"\x00\r\x00\r\n\xff"
  assert task.metadata["license"] == "MIT" and task.metadata["license_files"] == ["LICENCE"]
  work = tmp_path / "ws"
  import shutil
  shutil.copytree(task.repo_dir, work)
  apply_patch(work, task.solution_patch)
  assert (work / "crlf_mod.py").read_bytes() == b"def f():\r\n    return 2\r\n\r\n\r\nOTHER = 'x'\r\n"
  for rel, data in ODD_FILES.items():
    assert (work / rel).read_bytes() == data


def test_data_only_commit_runs_the_modules_that_read_the_data(tmp_path):
  """A commit that adds only a fixture file: the unchanged module that reads it is the test."""
  reader = ("import pathlib\n\nimport pytest\n\nfrom parse import parse\n\nCASES = sorted((pathlib.Path(__file__).parent / "
            "'data' / 'invalid').glob('*.txt'))\n\n\n@pytest.mark.parametrize('case', CASES, ids=lambda p: p.name)\n"
            "def test_invalid(case):\n    with pytest.raises(ValueError):\n        parse(case.read_text())\n")
  repo = _repo(tmp_path, {
      "LICENSE": MIT, "parse.py": "def parse(text):\n    if not text.strip():\n        raise ValueError('empty')\n    return text\n",
      "tests/test_invalid.py": reader, "tests/data/invalid/empty.txt": "\n",
      "tests/test_other.py": "def test_other():\n    assert True\n",
      "docs/testing.rst": "How to test\n", "testutils.py": "HELPER = 1\n",
  })
  _commit(repo, {"parse.py": "def parse(text):\n    if not text.strip() or text.startswith('#'):\n"
                             "        raise ValueError('bad')\n    return text\n",
                 "tests/data/invalid/comment.txt": "# only a comment\n"}, "Reject input that is only a comment")
  task = import_git(repo, tmp_path / "out").tasks[0]
  assert task.hidden_tests_dest == "tests"
  assert task.metadata["changed_tests"] == ["tests/data/invalid/comment.txt"]
  assert task.test_command == "python -m pytest -q tests/test_invalid.py"
  assert (task.tests_dir / "test_invalid.py").is_file() and (task.tests_dir / "data/invalid/comment.txt").is_file()
  # docs/testing.rst and testutils.py are ordinary files of the workspace.
  assert (task.repo_dir / "docs/testing.rst").is_file() and (task.repo_dir / "testutils.py").is_file()
  if sandbox_available():
    v = TaskVerifier("sandbox").verify(task)
    assert v.ok, v.reason
    assert v.reference["passed"] == 2 and v.initial["passed"] == 1


def test_src_layout_version_stub_and_plugin_options_are_inferred(tmp_path):
  repo = _repo(tmp_path, {
      "COPYING": "Some license of our own.\n",
      "pyproject.toml": "[tool.hatch.version]\nsource = 'vcs'\n\n[tool.hatch.build.hooks.vcs]\n"
                        "version-file = 'src/pkg/_version.py'\n\n[tool.pytest.ini_options]\n"
                        "addopts = '--cov=pkg -ra'\n",
      "src/pkg/__init__.py": "from ._version import __version__\n\n\ndef double(x):\n    return x + x + 1\n",
      "tests/test_pkg.py": "import pkg\n\n\ndef test_version():\n    assert pkg.__version__\n",
  })
  _git(repo, "tag", "v1.4.2")
  _commit(repo, {"src/pkg/__init__.py": "from ._version import __version__\n\n\ndef double(x):\n    return x + x\n",
                 "tests/test_pkg.py": "import pkg\n\n\ndef test_version():\n    assert pkg.__version__\n\n\n"
                                      "def test_double():\n    assert pkg.double(2) == 4\n"},
          "Fix #12: double() added one\n\nIt returned 2x + 1.\n\nCo-authored-by: Someone <s@e>\n")
  task = import_git(repo, tmp_path / "out").tasks[0]
  assert task.metadata["python_path"] == ["src"]
  assert task.metadata["generated_files"] == ["src/pkg/_version.py"]
  assert "'1.4.2'" in (task.repo_dir / "src/pkg/_version.py").read_text()
  assert task.test_command == "python -m pytest -q -o addopts= tests/test_pkg.py"
  assert task.metadata["license"] == "see COPYING"
  assert task.statement.startswith("double() added one\n\nIt returned 2x + 1.")
  assert "Co-authored-by" not in task.statement and "#12" not in task.statement
  assert "`python -m pytest -q -o addopts= tests`" in task.statement
  if sandbox_available():
    v = TaskVerifier("sandbox").verify(task)
    assert v.ok, v.reason


def test_commits_file_statements_and_bad_input(tmp_path):
  repo = _repo(tmp_path, {"m.py": "X = 1\n", "test_m.py": "from m import X\n\ndef test_x():\n    assert X == 1\n"})
  sha = _commit(repo, {"m.py": "X = 2\n", "test_m.py": "from m import X\n\ndef test_x():\n    assert X == 2\n"},
                "Fix #3")
  options = tmp_path / "commits.json"
  options.write_text(json.dumps([{"commit": sha[:8], "test_command": "python -m pytest -q test_m.py -x",
                                  "env": {"MODE": "strict"}, "memory_mb": 512, "setup": "true"}]))
  task = import_git(repo, tmp_path / "out", commits_file=options).tasks[0]
  assert task.hidden_tests_dest == "." and task.test_command == "python -m pytest -q test_m.py -x"
  assert task.environment.env == (("MODE", "strict"),) and task.environment.memory_mb == 512
  assert task.environment.setup == ("true",)
  # A bare issue number gives no description; --statement-from supplies one.
  assert task.statement.startswith("Change the repository's code")
  statements = tmp_path / "statements.json"
  statements.write_text(json.dumps({sha[:7]: "X must be 2, the documented value.\n"}))
  task = import_git(repo, tmp_path / "out2", commits=[sha], statement_from=statements).tasks[0]
  assert task.statement == "X must be 2, the documented value.\n"
  result = import_git(repo, tmp_path / "out3", commits=["0123456789abcdef"])
  assert not result.tasks and "no commit '0123456789abcdef'" in result.skipped[0]
  (tmp_path / "bad.json").write_text(json.dumps([{"commit": sha, "tset_command": "x"}]))
  with pytest.raises(TaskError, match="unknown field.*tset_command"):
    read_commits_file(tmp_path / "bad.json")
  cmd = [".venv/bin/python", "scripts/import_tasks.py", "git", str(repo), "--out", str(tmp_path / "o4"),
         "--commits-file", str(tmp_path / "bad.json")]
  proc = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True)
  assert proc.returncode == 2 and "tset_command" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
  proc = subprocess.run(cmd[:-1] + [str(tmp_path / "missing.json")], cwd=REPO_ROOT, capture_output=True, text=True)
  assert proc.returncode == 2 and "missing.json" in proc.stderr


def test_message_cleaning_and_license_names():
  assert clean_message("Fix #387: handle None\n\nSigned-off-by: A <a@b>\n") == "handle None"
  assert clean_message("Make X show 'x' as its module (#135)\n\n* [pre-commit.ci] auto fixes\n") == \
      "Make X show 'x' as its module"
  assert license_name("Apache License\nVersion 2.0, January 2004\n") == "Apache-2.0"
  assert license_name("Redistribution and use in source and binary forms ... Neither the name of") == "BSD-3-Clause"
  assert license_name("Copyright (c) 2020 Someone") is None
  tree = {"LICENSE.APACHE": b"Apache License\n Version 2.0", "LICENSE.BSD": b"Redistribution and use in source "
          b"and binary forms, with or without", "README": b"x"}
  assert detect_license(tree) == ("Apache-2.0 OR BSD-2-Clause", ["LICENSE.APACHE", "LICENSE.BSD"])
  assert needs_plugin_options({".pytest.ini": b"[pytest]\naddopts =\n  --cov=semver\n  --doctest-modules\n"})
  assert not needs_plugin_options({"setup.cfg": b"[tool:pytest]\naddopts = -ra --strict-markers\n"})


def test_build_real_tasks_names_a_missing_clone(tmp_path):
  cmd = [".venv/bin/python", "scripts/build_real_tasks.py", "--repos", str(tmp_path), "--out", str(tmp_path / "o")]
  proc = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True)
  assert proc.returncode == 2 and "no local clone of" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_helpers_the_tests_import_from_elsewhere_are_put_on_the_path(tmp_path):
  """python-semver's tests/conftest.py imports helper modules that live in docs/advanced."""
  repo = _repo(tmp_path, {
      "src/lib/__init__.py": "def inc(x):\n    return x\n", "docs/advanced/helper.py": "TWO = 2\n",
      "tests/conftest.py": "import helper\n", "tests/test_lib.py": "import lib\n\n\ndef test_inc():\n    assert lib.inc(1) == 1\n"})
  _commit(repo, {"src/lib/__init__.py": "def inc(x):\n    return x + 1\n",
                 "tests/test_lib.py": "import helper\nimport lib\n\n\ndef test_inc():\n    assert lib.inc(1) == helper.TWO\n"},
          "inc() did not add one")
  task = import_git(repo, tmp_path / "out").tasks[0]
  assert task.metadata["python_path"] == ["src", "docs/advanced"]
