"""MLE-style tasks: generators, the strict grader, reference leaderboards and sandboxed run-and-grade."""

import json
import math
import pathlib
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm

from configs import default
from rl import registry
from rl.env import instrumentation as instr
from rl.outcome.rewards import RewardSettings
from rl.tasks import load_task, load_task_root
from rl.tasks.mle import InvalidSubmission, grade_submission, make_mle_tasks, mle_task_source
from rl.tasks.mle import build, competitions, grader, references, runner


@pytest.fixture(scope="module")
def task_root(tmp_path_factory) -> pathlib.Path:
  root = tmp_path_factory.mktemp("mle_tasks")
  make_mle_tasks(root, seed=0, variants=1, run_references=False)
  return root


def _task(root, name):
  return load_task(root / f"mle-{name}")


def test_four_competitions_load_as_mle_tasks(task_root):
  tasks = load_task_root(task_root, use_manifest=False)
  assert sorted(t.id for t in tasks) == sorted(f"mle-{c}" for c in competitions.COMPETITIONS)
  metrics = {t.metadata["competition"]: t.metadata["metric"] for t in tasks}
  assert metrics == {"author-identification": "multi_class_log_loss", "insult-detection": "roc_auc",
                     "tabular-churn": "roc_auc", "materials-regression": "mean_column_rmsle"}
  for t in tasks:
    assert t.grader == "mle"
    repo_files = sorted(p.name for p in t.repo_dir.iterdir())
    assert repo_files == ["sample_submission.csv", "test.csv", "train.csv"]
    answers = pd.read_csv(t.dir / t.metadata["answers_file"])
    test = pd.read_csv(t.repo_dir / "test.csv")
    assert list(answers["id"]) == list(test["id"])
    # the private answers' targets are nowhere in the workspace
    assert not set(t.metadata["target_columns"]) & set(test.columns)
    assert "train.csv" in t.statement and t.metadata["submission_file"] in t.statement
    assert t.solution_patch and "+++ b/solution.py" in t.solution_patch
    # the sample submission is a valid (if poor) submission
    assert grader.grade_workspace(t.dir, t.repo_dir.parent / "repo.__none__").valid is False
    sample = grade_submission(t.repo_dir / "sample_submission.csv", t.dir / t.metadata["answers_file"],
                              metric=t.metadata["metric"], id_column="id",
                              target_columns=t.metadata["target_columns"])
    assert sample.valid, sample.error


def test_generation_is_deterministic_and_variants_differ(tmp_path):
  a = competitions.tabular_binary(7)
  b = competitions.tabular_binary(7)
  c = competitions.tabular_binary(8)
  pd.testing.assert_frame_equal(a.train, b.train)
  assert not a.train["f0"].equals(c.train["f0"])
  text_a, text_b = competitions.author_identification(3), competitions.author_identification(3)
  assert list(text_a.train["text"]) == list(text_b.train["text"])
  assert set(text_a.train["author"]) == set(competitions.AUTHORS)
  reg = competitions.two_target_regression(1)
  assert (reg.answers[reg.target_columns] >= 0).all().all()
  ins = competitions.insult_detection(2)
  assert 0.15 < ins.train["Insult"].mean() < 0.45


def _answers(task):
  return pd.read_csv(task.dir / task.metadata["answers_file"])


def _grade(task, submission, **kw):
  return grade_submission(submission, _answers(task), metric=task.metadata["metric"], id_column="id",
                          target_columns=task.metadata["target_columns"], **kw)


def test_metrics_match_sklearn(task_root):
  rng = np.random.default_rng(0)
  auth = _task(task_root, "author-identification")
  ans = _answers(auth)
  probs = rng.dirichlet(np.ones(3), size=len(ans))
  sub = pd.DataFrame(probs, columns=list(competitions.AUTHORS)).assign(id=ans["id"])
  g = _grade(auth, sub)
  labels = ans[list(competitions.AUTHORS)].to_numpy().argmax(1)
  assert g.valid and g.score == pytest.approx(skm.log_loss(labels, probs, labels=[0, 1, 2]), rel=1e-9)
  assert g.normalized_score == pytest.approx(-g.score)

  churn = _task(task_root, "tabular-churn")
  ans = _answers(churn)
  scores = rng.normal(size=len(ans)).round(2)  # ties on purpose
  g = _grade(churn, pd.DataFrame({"id": ans["id"], "target": scores}))
  assert g.score == pytest.approx(skm.roc_auc_score(ans["target"], scores), rel=1e-12)
  assert g.normalized_score == g.score

  mat = _task(task_root, "materials-regression")
  ans = _answers(mat)
  cols = mat.metadata["target_columns"]
  pred = ans[cols].to_numpy() * rng.uniform(0.8, 1.2, size=(len(ans), 2))
  g = _grade(mat, pd.DataFrame(pred, columns=cols).assign(id=ans["id"]))
  expected = np.mean([math.sqrt(skm.mean_squared_log_error(ans[c], pred[:, k])) for k, c in enumerate(cols)])
  assert g.score == pytest.approx(expected, rel=1e-9)


def test_row_order_does_not_matter(task_root):
  churn = _task(task_root, "tabular-churn")
  ans = _answers(churn)
  sub = pd.DataFrame({"id": ans["id"], "target": np.linspace(0, 1, len(ans))})
  assert _grade(churn, sub).score == pytest.approx(_grade(churn, sub.sample(frac=1, random_state=0)).score)


@pytest.mark.parametrize("mutate,message", [
    (lambda s: s.drop(columns=["BRO"]), r"lacks column\(s\) \['BRO'\]"),
    (lambda s: s.assign(extra=1.0), r"unexpected column\(s\) \['extra'\]"),
    (lambda s: s.iloc[:-3], r"has \d+ rows, expected \d+"),
    (lambda s: s.assign(id=[s["id"].iloc[0]] * len(s)), "repeats id"),
    (lambda s: s.assign(id=["zz" + str(i) for i in range(len(s))]), "not in the test set"),
    (lambda s: s.assign(ALD=np.where(np.arange(len(s)) == 5, np.nan, s["ALD"])), "NaN value"),
    (lambda s: s.assign(ALD=s["ALD"] * 2), "must sum to 1"),
    (lambda s: s.assign(ALD=-s["ALD"], BRO=s["BRO"] + 2 * s["ALD"]), r"lie in \[0, 1\]"),
    (lambda s: s.assign(CAV="high"), "non-numeric"),
    (lambda s: s.assign(CAV=np.inf), "infinite"),
])
def test_malformed_submissions_are_invalid_with_a_precise_message(task_root, mutate, message):
  auth = _task(task_root, "author-identification")
  ans = _answers(auth)
  good = ans.copy()
  good[list(competitions.AUTHORS)] = 1 / 3
  assert _grade(auth, good).valid
  bad = mutate(good.copy())
  g = _grade(auth, bad)
  assert not g.valid and g.score is None
  assert pytest.importorskip("re").search(message, g.error), g.error
  with pytest.raises(InvalidSubmission, match=message):
    _grade(auth, bad, raise_invalid=True)


def test_regression_rejects_negative_predictions_and_files_are_checked(task_root, tmp_path):
  mat = _task(task_root, "materials-regression")
  ans = _answers(mat)
  sub = ans.copy()
  sub.loc[3, "bandgap_energy_ev"] = -0.5
  assert "non-negative" in _grade(mat, sub).error
  assert "was not found" in _grade(mat, tmp_path / "missing.csv").error
  (tmp_path / "empty.csv").write_text("")
  assert "is empty" in _grade(mat, tmp_path / "empty.csv").error
  (tmp_path / "garbage.csv").write_bytes(b"id,a\n1,2,3,4\n\xff\xfe,\"\n")
  assert not _grade(mat, tmp_path / "garbage.csv").valid
  with pytest.raises(LookupError, match="known metrics"):
    grade_submission(sub, ans, metric="accuracy", id_column="id", target_columns=["x"])


# --- running programs: a trusted subprocess "session" for fast tests, the real sandbox in slow ones ---


class SubprocessSession:
  """Stands in for sandbox.Session in fast tests (trusted test programs only): `python` is the
  interpreter whose folder leads PATH."""

  python = sys.executable

  def __init__(self, workspace):
    self.dir = pathlib.Path(tempfile.mkdtemp(prefix="fake_session_"))
    shutil.copytree(workspace, self.dir, dirs_exist_ok=True)

  def __enter__(self):
    return self

  def __exit__(self, *exc):
    shutil.rmtree(self.dir, ignore_errors=True)

  def write_file(self, path, content):
    (self.dir / path).write_text(content)

  def exec(self, command, timeout=None, env=None):
    import os
    import time

    start = time.monotonic()
    path = os.path.dirname(self.python) + os.pathsep + os.environ.get("PATH", "")
    proc = subprocess.run(command, shell=True, cwd=self.dir, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {}), "PATH": path})
    return type("R", (), {"exit_code": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr,
                          "timed_out": False, "duration_s": time.monotonic() - start})()

  def export_workspace(self, dest):
    shutil.copytree(self.dir, dest)


def _workspace(task, tmp_path, solution=None, stale_submission=False):
  ws = tmp_path / "ws"
  shutil.copytree(task.repo_dir, ws)
  if solution is not None:
    (ws / "solution.py").write_text(solution)
  if stale_submission:
    shutil.copy(ws / "sample_submission.csv", ws / "submission.csv")
  return ws


def test_run_and_grade_instruments_and_scores_the_constant_reference(task_root, tmp_path):
  task = _task(task_root, "tabular-churn")
  ws = _workspace(task, tmp_path, references.REFERENCES["tabular-churn"]["constant"])
  result = runner.run_and_grade(task, ws, instrumenter=instr.ASTInstrumenter(), session_factory=SubprocessSession)
  assert result.valid and result.grade.score == pytest.approx(0.5)
  assert result.instrumentation["verified"]
  assert result.stages.stages == ["imported_packages", "loaded_data", "wrote_submission"]
  scheme = registry.REWARD_SCHEMES.get("mle")(RewardSettings.from_config(default.get_config().reward))
  assert scheme.final(None, result.reward_context()) == pytest.approx(0.5 + 0.1 * 3)
  assert "[progress:" in result.terminal_output() and "submission valid" in result.terminal_output()
  assert result.metrics()["instrumentation/stages"] == 3.0


def test_run_and_grade_rejects_stale_and_missing_submissions(task_root, tmp_path):
  task = _task(task_root, "tabular-churn")
  ws = _workspace(task, tmp_path, "import pandas\nprint('thinking')\n", stale_submission=True)
  result = runner.run_and_grade(task, ws, instrumenter=instr.ASTInstrumenter(), session_factory=SubprocessSession)
  assert not result.valid and "submission.csv was not found" in result.grade.error
  assert result.stages.stages == ["imported_packages"]
  scheme = registry.REWARD_SCHEMES.get("mle")(RewardSettings.from_config(default.get_config().reward))
  assert scheme.final(None, result.reward_context()) == -10.0

  (ws / "solution.py").unlink()
  result = runner.run_and_grade(task, ws, session_factory=SubprocessSession)
  assert not result.valid and "solution.py was not found" in result.grade.error

  (ws / "solution.py").write_text("raise RuntimeError('boom')\n")
  result = runner.run_and_grade(task, ws, session_factory=SubprocessSession)
  assert "exited with code 1" in result.grade.error and "boom" in result.grade.error


def test_task_source_generates_and_loads(tmp_path):
  from configs.default import get_config

  config = get_config()
  tasks = registry.TASK_SOURCES.get("mle")(config, tmp_path)
  assert len(tasks) == 4 and all(t.grader == "mle" for t in tasks)
  assert (tmp_path / "tasks" / "mle" / "manifest.jsonl").is_file()
  assert mle_task_source(config, tmp_path)[0].id == tasks[0].id  # second call loads, does not regenerate
  subset = mle_task_source(config, tmp_path, arg="tabular-churn,insult-detection")
  assert sorted(t.id for t in subset) == ["mle-insult-detection", "mle-tabular-churn"]
  with pytest.raises(ValueError, match="unknown competition"):
    mle_task_source(config, tmp_path, arg="titanic")


@pytest.mark.slow
def test_every_reference_solution_grades_valid_and_beats_constant(tmp_path):
  """The synthetic leaderboard: constant < linear, gradient boosting < the best possible."""
  dirs = make_mle_tasks(tmp_path, seed=0, variants=1, run_references=True, jobs=2)
  for d in dirs:
    board = json.loads((d / "leaderboard.json").read_text())
    entries = {e["name"]: e for e in board["entries"]}
    assert set(entries) == set(references.REFERENCE_NAMES)
    for name, e in entries.items():
      assert e["valid"], f"{d.name}/{name}: {e['error']}"
    assert entries["linear"]["normalized_score"] > entries["constant"]["normalized_score"] + 0.01, d.name
    assert entries["gradient_boosting"]["normalized_score"] > entries["constant"]["normalized_score"] + 0.01
    pos = build.leaderboard_position(d, entries["constant"]["normalized_score"] - 1)
    assert pos == {"rank": 4, "of": 4, "beats": []}
    best = max(e["normalized_score"] for e in entries.values())
    assert build.leaderboard_position(d, best + 1)["rank"] == 1


@pytest.mark.slow
def test_run_and_grade_in_the_local_sandbox(task_root, tmp_path):
  sandbox = pytest.importorskip("sandbox")
  if not shutil.which("bwrap"):
    pytest.skip("bubblewrap is not installed")
  task = _task(task_root, "materials-regression")
  ws = _workspace(task, tmp_path, references.REFERENCES["materials-regression"]["linear"])
  cfg = sandbox.SandboxConfig(backend="local", exec_timeout_s=120, memory_mb=2048)
  result = runner.run_and_grade(task, ws, instrumenter=instr.ASTInstrumenter(), sandbox_config=cfg)
  assert result.valid, result.grade.error + result.stderr[-500:]
  assert result.grade.score < 0.08  # the linear reference's RMSLE is about 0.045
  assert result.stages.count == 6, result.stdout
  assert result.exec_time_s > 0
  assert result.stages.stage_seconds["trained_model"] >= 0


def test_batched_references_match_a_single_run(task_root):
  task_dir = task_root / "mle-materials-regression"
  batched = build.run_reference_batch(task_dir, ["constant"])
  single = build.run_reference(task_dir, "constant")
  assert [e["name"] for e in batched] == ["constant"] and batched[0]["valid"] and single["valid"]
  assert batched[0]["score"] == pytest.approx(single["score"], abs=1e-12)
  (task_dir / "references" / "broken.py").write_text("raise SystemExit(4)\n")
  broken = build.run_reference_batch(task_dir, ["broken"])[0]
  assert not broken["valid"] and "SystemExit(4)" in broken["error"]


def test_run_and_grade_runs_non_utf8_programs_untouched(task_root, tmp_path):
  task = _task(task_root, "tabular-churn")
  ws = _workspace(task, tmp_path)
  program = references.REFERENCES["tabular-churn"]["constant"].replace(
      "import pandas as pd", "# -*- coding: latin-1 -*-\nimport pandas as pd\nNOTE = 'caf\xe9'")
  (ws / "solution.py").write_bytes(program.encode("latin-1"))
  result = runner.run_and_grade(task, ws, instrumenter=instr.ASTInstrumenter(), session_factory=SubprocessSession)
  assert result.valid and result.stages.count == 0
  assert result.instrumentation["fallback_reason"] == "the program is not UTF-8 text"


def test_iteration_metrics_summarise_the_mle_episodes():
  """mle/valid_rate, mle/score_mean (valid submissions only), mle/stage_mean and mle/exec_time_s
  from the episodes' `mle` records; nothing when no episode is an MLE task's."""
  import types

  from rl.env.episode import mle_metrics

  def episode(valid, score, stages, seconds):
    grade = {"valid": valid, "normalized_score": score if valid else None}
    return types.SimpleNamespace(record={"mle": {"grade": grade, "stages": {"count": stages}, "exec_time_s": seconds}})

  episodes = [episode(True, 0.8, 5, 2.0), episode(True, 0.6, 4, 4.0), episode(False, None, 1, 0.5),
              types.SimpleNamespace(record={})]
  m = mle_metrics(episodes)
  assert m["mle/episodes"] == 3 and m["mle/valid_rate"] == pytest.approx(2 / 3)
  assert m["mle/score_mean"] == pytest.approx(0.7) and m["mle/stage_mean"] == pytest.approx(10 / 3)
  assert m["mle/exec_time_s"] == pytest.approx(6.5 / 3)
  assert mle_metrics([types.SimpleNamespace(record={})]) == {}
  assert "mle/score_mean" not in mle_metrics([episode(False, None, 0, 0.1)])


def test_iteration_metrics_split_by_prompt_kind_and_per_task_scores():
  """With improve-previous prompts (record field `prompt_origin`) the valid rate and score split
  into `_improve` and `_scratch`; mle_task_scores gives each task's valid rate and mean score."""
  import types

  from rl.env.episode import mle_metrics, mle_task_scores

  def episode(task, valid, score, improve=False):
    grade = {"valid": valid, "normalized_score": score if valid else None}
    record = {"mle": {"grade": grade, "stages": {"count": 3}, "exec_time_s": 1.0}}
    if improve:
      record["prompt_origin"] = {"kind": "improve_previous", "parent_score": 0.5}
    return types.SimpleNamespace(task_id=task, record=record)

  episodes = [episode("a", True, 0.9, improve=True), episode("a", False, None, improve=True),
              episode("a", True, 0.5), episode("b", True, 0.2), episode("b", True, 0.4)]
  m = mle_metrics(episodes)
  assert m["mle/improve_episodes"] == 2
  assert m["mle/valid_rate_improve"] == pytest.approx(0.5) and m["mle/score_mean_improve"] == pytest.approx(0.9)
  assert m["mle/valid_rate_scratch"] == pytest.approx(1.0)
  assert m["mle/score_mean_scratch"] == pytest.approx((0.5 + 0.2 + 0.4) / 3)
  assert not any(k.endswith(("_improve", "_scratch")) for k in mle_metrics(episodes[2:]))
  per_task = mle_task_scores(episodes)
  assert per_task["a"] == {"episodes": 3.0, "valid_rate": pytest.approx(2 / 3), "score_mean": pytest.approx(0.7)}
  assert per_task["b"]["score_mean"] == pytest.approx(0.3)
  assert mle_task_scores([episode("c", False, None)]) == {"c": {"episodes": 1.0, "valid_rate": 0.0}}


def test_heldout_variants_are_other_draws_of_each_competition(tmp_path):
  """tasks.mle_heldout_variants adds held-out tasks (split "heldout", variants from
  HELDOUT_VARIANT_BASE) with other data than the training variants; a root generated without
  them is completed on the next load; out-of-range counts are one-line errors."""
  import types

  from rl.tasks.mle import build
  from rl.tasks.mle.source import mle_task_source

  def config(heldout):
    return types.SimpleNamespace(tasks=types.SimpleNamespace(
        mle_root=str(tmp_path / "root"), mle_variants=1, mle_heldout_variants=heldout, synthetic_seed=0))

  assert {t.split for t in mle_task_source(config(0), tmp_path)} == {"train"}
  tasks = mle_task_source(config(2), tmp_path)  # the same root, completed
  heldout = [t for t in tasks if t.split == "heldout"]
  assert len(tasks) == 12 and len(heldout) == 8
  assert {t.metadata["variant"] for t in heldout} == {build.HELDOUT_VARIANT_BASE, build.HELDOUT_VARIANT_BASE + 1}
  train = {t.metadata["competition"]: t for t in tasks if t.split == "train"}
  for t in heldout:
    same = train[t.metadata["competition"]]
    assert (t.repo_dir / "train.csv").read_bytes() != (same.repo_dir / "train.csv").read_bytes()
    assert t.statement == same.statement  # the same competition: only the data differ
  with pytest.raises(ValueError, match="heldout_variants >= 0"):
    build.task_plan(variants=1, heldout_variants=-1)
  with pytest.raises(ValueError, match="variants <= 500"):
    build.task_plan(variants=501)
