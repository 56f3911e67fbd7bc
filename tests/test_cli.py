"""Bad input at the command line: each CLI exits with status 2 and one stderr line naming the
problem, without a traceback; real bugs keep theirs. Also the benchmarks' torch interpreter."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rl import cli

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bad_root(tmp_path_factory):
  """A task root whose one task's metadata id differs from its folder name, and a bad JSONL file."""
  root = tmp_path_factory.mktemp("bad") / "root"
  task = root / "t1"
  (task / "repo").mkdir(parents=True)
  (task / "tests").mkdir()
  (task / "task.md").write_text("Fix it.\n")
  (task / "metadata.json").write_text(json.dumps({
      "id": "other", "version": "1", "source": "test", "license": "MIT", "language": "python",
      "grader": "pytest", "test_command": "python -m pytest -q tests", "hidden_tests_dest": "tests",
      "timeout_s": 10}))
  (root.parent / "bad.jsonl").write_text('{"task_id": "HumanEval/0", "prompt": \n')
  return root


MISMATCH = "task 't1': metadata id 'other' differs from the directory name"

CASES = {
    "grade": (["scripts/grade.py", "--task", "{root}/t1", "--workspace", "{root}/t1/repo"], MISMATCH),
    "evaluate": (["scripts/evaluate.py", "--checkpoint", "rl/assets/tiny_base", "--tasks", "{root}"], MISMATCH),
    "check_tasks_on_a_task": (["scripts/check_tasks.py", "{root}/t1"], "is a task directory, not a task root"),
    "check_tasks_missing_root": (["scripts/check_tasks.py", "{root}/nope"], "task root {root}/nope does not exist"),
    "import_tasks": (["scripts/import_tasks.py", "humaneval", "{root}/../bad.jsonl", "--out", "{root}/../out",
                      "--on-error", "reject"], "1 malformed line(s) in"),
    "train_missing_config": (["train.py", "--config", "configs/nope.py", "--workdir", "{root}/../run"],
                             "--config: config file configs/nope.py does not exist"),
    "train_unknown_field": (["train.py", "--workdir", "{root}/../run", "--config.trainer.nope=1"],
                            "unknown config field --config.trainer.nope: config.trainer has no field 'nope'"),
    "train_wrong_type": (["train.py", "--workdir", "{root}/../run", "--config.trainer.iterations=many"],
                         "flag --config.trainer.iterations=many: invalid literal"),
    "train_negative_iterations": (["train.py", "--workdir", "{root}/../run", "--config.trainer.iterations=-1"],
                                  "config.trainer.iterations=-1 must be >= 0"),
    "train_unknown_estimator": (["train.py", "--workdir", "{root}/../run",
                                 "--config.algo.advantage_estimator=nope"],
                                "config.algo.advantage_estimator: unknown advantage estimator 'nope'"),
    "train_malformed_task": (["train.py", "--workdir", "{root}/../run", "--config.tasks.sources=(('dir:{root}', 1.0),)",
                              "--config.tasks.eval_sources=()"], MISMATCH),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_one_line_and_status_2(case, bad_root):
  argv, expected = CASES[case]
  argv = [a.format(root=bad_root) for a in argv]
  proc = subprocess.run([sys.executable, *argv], cwd=REPO, capture_output=True, text=True, timeout=600,
                        env={**os.environ, "JAX_PLATFORMS": "cpu"})
  script = Path(argv[0]).name
  assert proc.returncode == cli.EXIT_BAD_INPUT, proc.stderr
  assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
  lines = proc.stderr.strip().splitlines()
  assert len(lines) == 1, proc.stderr
  assert lines[0].startswith(f"{script}: error: ") and expected.format(root=bad_root) in lines[0], lines[0]


def test_only_input_errors_are_caught(capsys):
  from rl.tasks import TaskError

  with pytest.raises(SystemExit) as exit_info:
    with cli.bad_input_exits():
      raise TaskError("task 'x': missing file task.md")
  assert exit_info.value.code == 2
  assert capsys.readouterr().err.endswith("error: task 'x': missing file task.md\n")
  with pytest.raises(KeyError):  # a bug, not bad input: its traceback stays
    with cli.bad_input_exits():
      raise KeyError("oops")
  assert cli.one_line("2 bad line(s) in f.jsonl:\nf.jsonl:1: bad JSON\nf.jsonl:3: no prompt") == (
      "2 bad line(s) in f.jsonl: f.jsonl:1: bad JSON; f.jsonl:3: no prompt")


def test_benchmarks_need_a_torch_interpreter_named_by_flag_or_environment(monkeypatch, capsys, tmp_path):
  monkeypatch.syspath_prepend(str(REPO / "scripts"))
  import torch_compare

  monkeypatch.setattr(torch_compare, "has_torch", lambda: False)
  monkeypatch.delenv(torch_compare.TORCH_PYTHON_ENV, raising=False)
  with pytest.raises(SystemExit) as exit_info:
    torch_compare.resolve_torch_python("")
  err = capsys.readouterr().err
  assert exit_info.value.code == 2 and len(err.strip().splitlines()) == 1
  assert "--torch-python" in err and torch_compare.TORCH_PYTHON_ENV in err and "pip install torch" in err
  python = tmp_path / "python"
  python.write_text("#!/bin/sh\n")
  python.chmod(0o755)
  monkeypatch.setenv(torch_compare.TORCH_PYTHON_ENV, str(python))
  assert torch_compare.resolve_torch_python("") == str(python)
  with pytest.raises(SystemExit):
    torch_compare.resolve_torch_python(str(tmp_path / "missing"))  # the flag wins over the environment
  assert "(from --torch-python) is not an executable file" in capsys.readouterr().err
