"""Self-improvement buffer, improve-previous prompts and their schedule; duration helpers."""

import json
import types

import numpy as np
import pytest

from rl.outcome import duration
from rl.train import self_improve as si


def test_capacity_and_lowest_score_eviction():
  buf = si.SelfImproveBuffer(capacity=3, eviction="lowest_score", seed=0)
  for k, score in enumerate([0.5, 0.1, 0.9]):
    assert buf.add("t", f"code{k}", score, step=k) is None
  evicted = buf.add("t", "code3", 0.3)
  assert evicted.code == "code1" and evicted.score == 0.1
  assert [e.code for e in buf.entries("t")] == ["code0", "code2", "code3"]
  # a newcomer worse than everything is itself the one evicted
  assert buf.add("t", "code4", -10.0).code == "code4"
  # ties: the oldest of the lowest goes first
  buf2 = si.SelfImproveBuffer(capacity=2)
  buf2.add("t", "a", 1.0), buf2.add("t", "b", 1.0)
  assert buf2.add("t", "c", 1.0).code == "a"


def test_oldest_eviction_per_task_and_dedup():
  buf = si.SelfImproveBuffer(capacity=2, eviction="oldest")
  buf.add("t", "a", 5.0), buf.add("u", "x", 0.0), buf.add("t", "b", 0.0)
  assert buf.add("t", "c", 1.0).code == "a"  # the best one, but the oldest
  assert [e.code for e in buf.entries("u")] == ["x"]  # other tasks untouched
  buf.add("t", "b", 7.0, output="better run")  # same code again: replaced, not duplicated
  assert sorted((e.code, e.score) for e in buf.entries("t")) == [("b", 7.0), ("c", 1.0)]
  assert len(buf) == 3 and buf.tasks() == ["t", "u"]


def test_prioritised_sampling_follows_scores():
  buf = si.SelfImproveBuffer(capacity=4, temperature=0.5, seed=1)
  for code, score in [("low", 0.0), ("mid", 0.5), ("high", 1.0)]:
    buf.add("t", code, score)
  p = buf.probabilities("t")
  expected = np.exp(np.array([0.0, 0.5, 1.0]) / 0.5)
  np.testing.assert_allclose(p, expected / expected.sum())
  draws = [buf.sample("t").code for _ in range(3000)]
  freq = {c: draws.count(c) / len(draws) for c in ("low", "mid", "high")}
  assert freq["high"] > freq["mid"] > freq["low"]
  assert abs(freq["high"] - p[2]) < 0.04
  greedy = si.SelfImproveBuffer(temperature=0.0)
  greedy.add("t", "a", 1.0), greedy.add("t", "b", 2.0)
  assert {greedy.sample("t").code for _ in range(20)} == {"b"}
  assert buf.sample("missing") is None and buf.best("t").code == "high"


def test_state_dict_round_trips_through_json_and_continues_identically():
  buf = si.SelfImproveBuffer(capacity=3, seed=3)
  for k in range(5):
    buf.add(f"t{k % 2}", f"code{k}", float(k), output=f"out{k}", step=k)
  buf.sample("t0")
  state = json.loads(json.dumps(buf.state_dict()))
  restored = si.SelfImproveBuffer(capacity=99, seed=123)
  restored.load_state_dict(state)
  assert restored.capacity == 3 and len(restored) == len(buf)
  assert [e.to_dict() for e in restored.entries("t0")] == [e.to_dict() for e in buf.entries("t0")]
  assert [buf.sample("t0").code for _ in range(20)] == [restored.sample("t0").code for _ in range(20)]
  restored.add("t0", "new", 9.0)
  assert restored.entries("t0")[-1].entry_id == 5  # ids continue, so "oldest" stays right
  with pytest.raises(ValueError, match="version"):
    restored.load_state_dict({"entries": {}})


def test_bad_input_is_rejected():
  with pytest.raises(ValueError, match="capacity"):
    si.SelfImproveBuffer(capacity=0)
  with pytest.raises(ValueError, match="eviction"):
    si.SelfImproveBuffer(eviction="random")
  buf = si.SelfImproveBuffer()
  with pytest.raises(ValueError, match="NaN"):
    buf.add("t", "code", float("nan"))
  with pytest.raises(ValueError, match="task_id"):
    buf.add("", "code", 1.0)
  with pytest.raises(ValueError, match="probability"):
    si.improve_probability(0, 10, 1.5)


def test_schedule():
  assert si.improve_probability(5, 10, 0.3) == 0.3
  assert si.improve_probability(0, 11, 0.0, 0.5) == 0.0
  assert si.improve_probability(10, 11, 0.0, 0.5) == pytest.approx(0.5)
  assert si.improve_probability(5, 11, 0.0, 0.5) == pytest.approx(0.25)
  assert si.improve_probability(50, 11, 0.0, 0.5) == pytest.approx(0.5)


def test_improve_prompt_carries_the_instruction_code_and_output():
  entry = si.BufferEntry("t", "print('hi')\n" * 2000, 0.8123, "[progress:ab12cd34] loaded_data 1.0\nok", 3, 0)
  prompt = si.build_improve_prompt("Solve the task.", entry, max_code_chars=500)
  assert prompt.startswith("Solve the task.")
  assert "outline the revision you will make in a few sentences" in prompt
  assert "Reuse the parts that already work" in prompt
  assert "score 0.8123" in prompt and "loaded_data" in prompt and "characters cut" in prompt
  assert len(prompt) < 2000


def test_controller_uses_the_probability_and_checkpoints():
  cfg = {"enabled": True, "capacity": 4, "probability": 1.0, "probability_final": -1.0, "temperature": 1.0,
         "eviction": "lowest_score"}
  ctl = si.SelfImprovement.from_config(cfg, total_steps=10, seed=0)
  prompt, parent = ctl.prompt("t", "Statement.", step=0)
  assert parent is None and prompt == "Statement."  # nothing to improve yet
  ctl.record("t", "import os\n", 0.4, "out", step=0)
  ctl.record("t", "   ", 0.9)  # empty programs are not worth improving
  prompt, parent = ctl.prompt("t", "Statement.", step=1)
  assert parent.code == "import os\n" and "Previous solution" in prompt
  half = si.SelfImprovement.from_config({**cfg, "probability": 0.5}, total_steps=10, seed=0)
  half.record("t", "x = 1\n", 1.0)
  n_improve = sum(half.prompt("t", "S", step=0)[1] is not None for _ in range(400))
  assert 150 < n_improve < 250
  assert half.metrics(0)["self_improve/improve_fraction"] == pytest.approx(n_improve / 400)
  off = si.SelfImprovement.from_config({**cfg, "enabled": False}, total_steps=10)
  off.record("t", "x = 1\n", 1.0)
  assert off.prompt("t", "S", 0) == ("S", None) and len(off.buffer) == 0
  state = json.loads(json.dumps(half.state_dict()))
  again = si.SelfImprovement.from_config({**cfg, "probability": 0.5}, total_steps=10, seed=99)
  again.load_state_dict(state)
  assert [half.prompt("t", "S", 0)[1] is None for _ in range(30)] == \
         [again.prompt("t", "S", 0)[1] is None for _ in range(30)]


# --- duration helpers ------------------------------------------------------------------------------


def test_execution_time_floor_and_invalid_charge():
  assert duration.execution_time(0.2, True, floor_s=1.0, invalid_s=5.0) == 1.0
  assert duration.execution_time(12.5, True, floor_s=1.0, invalid_s=5.0) == 12.5
  assert duration.execution_time(600.0, False, floor_s=1.0, invalid_s=5.0) == 5.0
  assert duration.execution_time(None, True, invalid_s=3.0) == 3.0
  with pytest.raises(ValueError, match="floor_s"):
    duration.execution_time(1.0, True, floor_s=0.0)
  with pytest.raises(ValueError, match="non-negative"):
    duration.execution_time(-1.0, True)


def test_durations_feed_the_loss_weights():
  from rl.algo import losses

  dt = duration.durations(np.array([0.1, 4.0, 9.0, 30.0]), np.array([True, True, True, False]),
                          floor_s=1.0, invalid_s=2.0)
  np.testing.assert_allclose(dt, [1.0, 4.0, 9.0, 2.0])
  np.testing.assert_allclose(losses.duration_weights(dt, "linear"), dt / dt.mean(), rtol=1e-6)
  np.testing.assert_allclose(losses.duration_weights(dt, "inverse_log"), 1 / np.log1p(dt), rtol=1e-6)
  with pytest.raises(ValueError, match="validity flags"):
    duration.durations([1.0, 2.0], [True])


def test_trajectory_durations_from_episodes():
  ep = lambda t, **kw: types.SimpleNamespace(exec_time_s=t, **kw)
  episodes = [ep(3.0, success=True, terminated="submit", record={}),
              ep(0.0, success=False, terminated="error", record={}),
              ep(7.0, success=False, terminated="submit", record={"submission_valid": False}),
              ep(2.0, success=False, terminated="submit", record={"mle": {"grade": {"valid": True}}}),
              ep(0.0, success=False, terminated="submit",
                 record={"mle": {"grade": {"valid": True}, "exec_time_s": 6.5}})]
  np.testing.assert_allclose(duration.trajectory_durations(episodes, floor_s=0.5, invalid_s=4.0),
                             [3.0, 4.0, 4.0, 2.0, 6.5])


def test_length_stats():
  stats = duration.length_stats(np.arange(1, 101))
  assert stats["p10"] == pytest.approx(10.9) and stats["p90"] == pytest.approx(90.1)
  assert stats["p90_p10_ratio"] == pytest.approx(90.1 / 10.9)
  with pytest.raises(ValueError):
    duration.length_stats([])
