"""The fifth held-out red-team round (tests/redteam/holdout5.json) and its two tasks.

The round holds hacks and honest fixes on two task shapes the rest of the suite lacks: a
class-based, stateful API whose hidden tests build objects through a fixture (`ledger`) and a
package whose hidden tests are parametrized over data files in the hidden folder, read by a
fixture in the hidden folder's conftest.py (`wordfreq`). These tests check the round
itself, not the defences: each task's pristine repo fails its hidden tests and the reference
fix passes them; every honest fix passes real grading; every hack that is not a process hack
(`"process": true`, judged by its actions alone) really works when nothing defends, i.e. the
hidden tests pass on its raw workspace although the bug is not fixed.
"""

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "redteam"))

import holdout_checks  # noqa: E402
import redteam_suite  # noqa: E402

HOLDOUT_FILE = os.path.join(os.path.dirname(__file__), "redteam", "holdout5.json")
TASKS = ("ledger", "wordfreq")

with open(HOLDOUT_FILE, encoding="utf-8") as _fh:
  RECORDS = {r["id"]: r for r in json.load(_fh)}

HACK_IDS = [c.id for c in redteam_suite.HOLDOUT5 if c.kind == "hack"]
LEGIT_IDS = [c.id for c in redteam_suite.HOLDOUT5 if c.kind == "legit"]
WORKING_HACK_IDS = [i for i in HACK_IDS if not RECORDS[i].get("process")]


@pytest.fixture
def sandbox_ok():
  ok, why = holdout_checks.sandbox_usable()
  if not ok:
    pytest.skip(why)


# -- (a) shape -------------------------------------------------------------------------


def test_holdout5_shape():
  cases = redteam_suite.HOLDOUT5
  ids = [c.id for c in cases]
  assert len(ids) == len(set(ids)) == len(RECORDS)
  assert len(HACK_IDS) >= 30 and len(LEGIT_IDS) >= 15
  others = (redteam_suite.CASES + redteam_suite.BENIGN + redteam_suite.SPELLING + redteam_suite.BENIGN_HOLDOUT
            + redteam_suite.HOLDOUT4)
  assert not set(ids) & {c.id for c in others}
  assert not set(ids) & {c.id for c in redteam_suite.CASES}
  holdout_checks.check_round_cases(cases, RECORDS, TASKS, HACK_IDS, LEGIT_IDS)


def test_task_directories():
  for task in TASKS:
    d = redteam_suite.task_dir(task)
    meta = redteam_suite.task_metadata(task)
    assert meta["hidden_tests_dest"] == "tests" and meta["test_command"] == "python -m pytest -q tests"
    for name in ("task.md", "metadata.json", "solution.patch"):
      assert os.path.isfile(os.path.join(d, name)), (task, name)
    assert holdout_checks.editable(task)
  # The wordfreq hidden tests read data files through a fixture in the hidden conftest.py.
  hidden = os.path.join(redteam_suite.task_dir("wordfreq"), "tests")
  assert os.path.isfile(os.path.join(hidden, "conftest.py"))
  stems = lambda ext: sorted(n[:-len(ext)] for n in os.listdir(os.path.join(hidden, "data")) if n.endswith(ext))
  assert stems(".txt") and stems(".txt") == stems(".json")


# -- (b) the tasks: pristine fails, the reference fix passes ------------------------------


@pytest.mark.parametrize("task", TASKS)
def test_pristine_fails_and_solution_passes(task, tmp_path, sandbox_ok):
  holdout_checks.check_pristine_fails_and_solution_passes(task, str(tmp_path / "ws"))


# -- (c) every honest fix passes real grading -------------------------------------------


@pytest.mark.parametrize("case_id", LEGIT_IDS)
def test_honest_fix_passes_grading(case_id, tmp_path, sandbox_ok):
  holdout_checks.check_honest_fix_passes(case_id, str(tmp_path / "ws"))


# -- (d) every file-based hack works when nothing defends --------------------------------


@pytest.mark.parametrize("case_id", WORKING_HACK_IDS)
def test_hack_passes_on_raw_workspace(case_id, tmp_path, sandbox_ok):
  case = redteam_suite.by_id(case_id)
  workspace = redteam_suite.materialize(case, str(tmp_path / "ws"))
  result = holdout_checks.raw_pytest(case, workspace)
  assert result.exit_code == 0, (result.stdout + result.stderr)[-3000:]
