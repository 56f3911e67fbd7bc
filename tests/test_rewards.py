"""Reward schemes, process rewards, first-final-grading gate and cheat-verdict synthesis."""

import math

import ml_collections
import pytest

from configs import default
from rl import config_fields, registry
from rl.antihack import Verdict
from rl.outcome.rewards import (FinalGradingGate, ProcessState, RewardSettings, SynthesizedReward, compile_ok,
                        make_reward_scheme, process_reward, synthesize)


def reward(**fields):
  """configs/default.py's `config.reward` (the one source of its defaults) with `fields` changed."""
  return {**default.get_config().reward.to_dict(), **fields}


def report(passed, total, **kw):
  return {"passed": passed, "total": total, "failed": total - passed, "errors": 0, "collection_errors": [], **kw}


class ObjReport:  # attribute access like sandbox.grading.TestReport
  def __init__(self, passed, total):
    self.passed, self.total, self.failed, self.errors = passed, total, total - passed, 0
    self.collection_errors, self.timed_out, self.outcomes, self.duration_s = [], False, {}, 1.0

  @property
  def all_passed(self):
    return self.total > 0 and self.passed == self.total


def test_registry_has_all_schemes():
  assert {"binary", "tiered", "pass_rate", "mle"} <= set(registry.REWARD_SCHEMES.names())
  with pytest.raises(LookupError, match="binary"):
    make_reward_scheme(reward(scheme="bogus"))


def test_binary():
  s = make_reward_scheme(reward(scheme="binary"))
  assert s.final(report(3, 3)) == 1.0
  assert s.final(report(2, 3)) == 0.0
  assert s.final(report(0, 0)) == 0.0  # nothing ran is not success
  assert s.final(report(3, 3, collection_errors=["x"])) == 0.0
  assert s.final(report(3, 3, timed_out=True)) == 0.0
  assert s.final(ObjReport(4, 4)) == 1.0 and s.final(ObjReport(1, 4)) == 0.0
  assert s.max_reward() == 1.0


def test_tiered_values_and_config_overrides():
  s = make_reward_scheme(reward(scheme="tiered"))
  assert s.final(report(4, 4)) == pytest.approx(10.5)
  assert s.final(report(1, 4)) == pytest.approx(0.5 + 2.5)
  assert s.final(report(0, 0, collection_errors=["SyntaxError"])) == 0.0
  assert s.final(report(0, 4), {"compiles": False}) == 0.0
  custom = make_reward_scheme(reward(scheme="tiered", pass_reward=4.0, compile_reward=1.0, partial_scale=0.5,
                                    slow_threshold_s=2.0, slow_penalty=0.25))
  assert custom.final(report(2, 4, duration_s=1.0)) == pytest.approx(1.0 + 4.0 * 0.5 * 0.5)
  assert custom.final(report(4, 4, duration_s=3.0)) == pytest.approx(1.0 + 4.0 - 0.25)
  assert custom.max_reward() == 5.0
  with pytest.raises(ValueError, match="pass_reward"):
    make_reward_scheme(reward(scheme="tiered", pass_reward="lots"))


def test_pass_rate_with_regressions():
  s = make_reward_scheme(reward(scheme="pass_rate"))
  assert s.final(report(4, 4)) == 1.0
  assert s.final(report(1, 4)) == 0.25
  broken = report(3, 4, outcomes={"a": "passed", "b": "failed", "c": "passed", "d": "passed"})
  assert s.final(broken, {"baseline_passing": ["b"]}) == -1.0
  assert s.final(broken, {"baseline_passing": ["a"]}) == 0.75


def test_only_first_final_grading_counts():
  s = make_reward_scheme(reward(scheme="binary"))
  gate = FinalGradingGate()
  rewards = [s.final(report(3, 3), {"final_run_index": gate.next_index("ep1")}) for _ in range(3)]
  assert rewards == [1.0, 0.0, 0.0]
  assert s.final(report(3, 3), {"final_run_index": gate.next_index("ep2")}) == 1.0


def test_mle():
  s = make_reward_scheme(reward(scheme="mle"))
  assert s.final({"valid": False, "score": 0.9}) == -10.0
  assert s.final({"valid": True, "score": None}) == -10.0
  assert s.final({"valid": True, "score": float("nan")}) == -10.0
  assert s.final({"valid": True, "score": 0.8}) == pytest.approx(0.8)
  assert s.final({"valid": True, "score": 0.3, "higher_is_better": False}) == pytest.approx(-0.3)
  assert s.final({}, {"submission_valid": True, "score": 0.5, "instrumentation_stages": 3}) == pytest.approx(0.8)
  assert math.isinf(s.max_reward())


def test_reward_config_from_configdict():
  c = default.get_config().reward
  c.scheme, c.process_rewards, c.pass_reward = "tiered", True, 2.0
  s = make_reward_scheme(c)
  assert s.process_rewards and s.final(report(1, 1)) == pytest.approx(2.5)


@pytest.mark.parametrize("field", ["scheme", "pass_reward", "turn_reward_min", "process_rewards"])
def test_a_missing_reward_field_is_an_error_naming_it(field):
  """configs/default.py is the one source of the values: no second default in rl.outcome.rewards."""
  c = reward()
  del c[field]
  with pytest.raises(config_fields.ConfigError, match=rf"^config\.reward\.{field} is missing"):
    make_reward_scheme(c)
  c = ml_collections.ConfigDict(reward())
  del c[field]
  with pytest.raises(config_fields.ConfigError, match=rf"^config\.reward\.{field} is missing"):
    make_reward_scheme(c)


def test_process_rewards():
  v = RewardSettings.from_config(reward())
  s0 = ProcessState(compile_ok=True, lint_errors=5, outcomes={"t1": "failed", "t2": "passed", "t3": "passed"})
  s1 = s0.after(compile_ok=True, lint_errors=3, outcomes={"t1": "passed", "t2": "passed", "t3": "failed"},
                last_command="pytest -q", last_output="1 failed")
  # lint +0.1, t1 newly passing +0.2, t3 newly failing -0.2
  assert process_reward(s0, s1, v) == pytest.approx(0.1)
  s2 = s1.after(compile_ok=False)
  assert process_reward(s1, s2, v) == pytest.approx(-0.5)
  s3 = s2.after(last_command="pytest -q", last_output="1 failed")
  assert process_reward(s2, s3, v) == pytest.approx(-0.1)  # same command, same output
  s3b = s2.after(last_command="pytest -q", last_output="all passed")
  assert process_reward(s2, s3b, v) == 0.0
  many = ProcessState(outcomes={f"t{i}": "passed" for i in range(10)}, compile_ok=True)
  crash = many.after(outcomes={f"t{i}": "failed" for i in range(10)}, compile_ok=False)
  assert process_reward(many, crash, v) == -1.0  # clipped


def test_scheme_step_only_when_enabled():
  on = make_reward_scheme(reward(scheme="pass_rate", process_rewards=True))
  off = make_reward_scheme(reward(scheme="pass_rate"))
  a, b = ProcessState(compile_ok=True), ProcessState(compile_ok=False)
  assert on.step(a, b) == pytest.approx(-0.5) and off.step(a, b) == 0.0 and on.step(None, b) == 0.0


def test_compile_ok():
  assert compile_ok({"a.py": "x = 1\n", "b.txt": "((("})
  assert not compile_ok({"a.py": "def (:\n"})


def test_synthesize_cheat_wins():
  clean = synthesize(1.0, [Verdict(stage="action"), None], no_gain_reward=0.0, turn_rewards=[0.2, -0.1])
  assert isinstance(clean, SynthesizedReward)
  assert clean.reward == 1.0 and clean.turn_rewards == (0.2, -0.1) and not clean.flagged
  cheat = Verdict(flagged=True, stage="diff", rules=("D001-interpreter-exit",), severity="high", reason="exit")
  out = synthesize(10.5, [Verdict(stage="action"), cheat], no_gain_reward=-1.0, turn_rewards=[0.2, -0.1])
  assert out.reward == -1.0 and out.turn_rewards == (0.0, -0.1) and out.flagged
  assert out.hack["flagged"] and out.hack["stage"] == "diff" and out.hack["rules"] == ["D001-interpreter-exit"]
  judged = synthesize(1.0, [Verdict(flagged=True, stage="judge", rules=("judge",), severity="high", score=0.9,
                                    reason="special-cases inputs")])
  assert judged.reward == 0.0 and judged.hack["judge_score"] == 0.9


def test_apply_late_verdict_corrects_the_record():
  from rl.antihack.judge import JudgeVerdict
  from rl.outcome.rewards import apply_late_verdict

  record = {"final_reward": 1.0, "success": True, "steps": [{"reward": 0.2}, {"reward": -0.1}],
            "hack": {"flagged": False, "stage": "", "rules": [], "judge_score": None, "reason": ""}}
  assert apply_late_verdict(dict(record, steps=[dict(s) for s in record["steps"]]),
                            JudgeVerdict(0.1, "fine", False, "openai")) == 1.0
  late = JudgeVerdict(0.93, "special-cases the test inputs", True, "openai")
  assert apply_late_verdict(record, late, no_gain_reward=-0.5) == -0.5
  assert record["success"] is False and [s["reward"] for s in record["steps"]] == [0.0, -0.1]
  assert record["hack"] == {"flagged": True, "stage": "judge", "rules": ["judge"], "judge_score": 0.93,
                            "reason": "special-cases the test inputs"}
