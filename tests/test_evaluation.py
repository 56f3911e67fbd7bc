"""pass@k against the exact combinatorial formula and edge cases."""

import math

import pytest

from rl.train.evaluate import pass_at_k, pass_at_k_table, reward_ability_correlation


@pytest.mark.parametrize("n,c,k", [(10, 3, 1), (10, 3, 5), (200, 17, 10), (5, 0, 2), (5, 5, 3), (7, 4, 4)])
def test_matches_binomial_formula(n, c, k):
  expected = 1.0 - math.comb(n - c, k) / math.comb(n, k)
  assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


def test_pass_at_1_is_fraction_correct():
  assert pass_at_k(8, 3, 1) == pytest.approx(3 / 8)


@pytest.mark.parametrize("args", [(0, 0, 1), (5, 6, 1), (5, 2, 0), (5, 2, 6), (5.0, 2, 1)])
def test_bad_arguments(args):
  with pytest.raises((ValueError, TypeError)):
    pass_at_k(*args)


def test_table_and_correlation():
  table = pass_at_k_table([("a", True), ("a", False), ("b", False), ("b", False)], ks=[1, 2, 4])
  assert table["pass@1"] == pytest.approx(0.25) and table["pass@2"] == pytest.approx(0.5)
  assert "pass@4" not in table
  out = reward_ability_correlation([0.1, 0.5, 0.9], [0.2, 0.2, 0.1])
  assert out["verdict"].startswith("WARNING")


class _ScriptedEngine:
  """A rollout engine that plays fixed outcomes: what `evaluate` asks of an engine, no model."""

  def __init__(self, outcomes):
    self.outcomes, self.calls = outcomes, []

  def run(self, tasks, group_size):
    import types
    self.calls.append(([t.id for t in tasks], group_size))
    episodes = [types.SimpleNamespace(task_id=t.id, success=s, infra_failure=f)
                for t in tasks for s, f in self.outcomes[t.id][:group_size]]
    return episodes, {}


def test_evaluate_splits_into_calls_and_leaves_infrastructure_failures_out():
  import types
  from rl.train.evaluate import evaluate
  tasks = [types.SimpleNamespace(id=name) for name in "abc"]
  engine = _ScriptedEngine({"a": [(True, None), (False, None)], "b": [(False, None), (False, "grade")],
                            "c": [(True, None), (True, None)]})
  metrics, episodes = evaluate(engine, tasks, samples=2, rows=4)
  assert engine.calls == [(["a", "b"], 2), (["c"], 2)]  # at most `rows` concurrent episodes
  assert len(episodes) == 5 and metrics["eval/infra_failed"] == 1.0
  # a: 1 of 2, b: 0 of 1 (its failed grading is no sample), c: 2 of 2.
  assert metrics["eval/pass@1"] == pytest.approx((0.5 + 0.0 + 1.0) / 3)
  assert metrics["eval/pass@2"] == 1.0  # a and c; b has one sample left, fewer than k
  assert evaluate(engine, [], samples=1, rows=4) == ({}, [])


@pytest.mark.slow
def test_evaluate_script_scores_a_checkpoint_without_a_trainer(tmp_path):
  """scripts/evaluate.py on the committed tiny base (a Hugging Face directory) and generated tasks:
  a pass@1 for every task, and the training loop is never imported."""
  import json
  import os
  import subprocess
  import sys
  from pathlib import Path

  from rl.tasks.synthetic.generator import generate
  repo = Path(__file__).resolve().parents[1]
  generate(tmp_path / "tasks", num_tasks=3, seed=0, grader="subprocess", workers=1, heldout_fraction=0.0)
  out = tmp_path / "result.json"
  proc = subprocess.run([sys.executable, "-X", "importtime", "scripts/evaluate.py", "--checkpoint",
                         "rl/assets/tiny_base", "--tasks", str(tmp_path / "tasks"), "--out", str(out),
                         "--trajectories", str(tmp_path / "traj")],
                        cwd=repo, capture_output=True, text=True, timeout=900, env={**os.environ, "JAX_PLATFORMS": "cpu"})
  assert proc.returncode == 0, proc.stderr[-3000:]
  assert "rl.train.trainer" not in proc.stderr  # -X importtime lists every imported module
  result = json.loads(out.read_text())
  assert 0.0 <= result["pass@1"] <= 1.0 and len(result["per_task"]) == 3
  assert all(v["n"] == 1 for v in result["per_task"].values())
  records = [json.loads(line) for f in (tmp_path / "traj").glob("*.jsonl") for line in f.read_text().splitlines()]
  assert len(records) == 3 and {r["task_id"] for r in records} == set(result["per_task"])
