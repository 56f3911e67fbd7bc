"""Reward schemes (binary, tiered, pass_rate, mle), per-turn process rewards, and reward synthesis.

A scheme is built from `config.reward` (every value it uses read from there: configs/default.py
holds the defaults) and turns a grading `TestReport` (or its dict) into a scalar; `synthesize`
then applies the anti-hack verdict, which always wins over the test result:

    scheme = make_reward_scheme(config.reward)
    r = scheme.final(report, {"final_run_index": 0})
    out = synthesize(r, [action_verdict, diff_verdict, runtime_verdict, judge_verdict],
                     no_gain_reward=config.antihack.no_gain_reward, turn_rewards=turn_rewards)
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import threading
from typing import Any, Iterable, Mapping

from rl import config_fields, registry


@dataclasses.dataclass(frozen=True)
class RewardSettings:
  """The values of the schemes and of the per-turn rewards (docs/rewards.md): the fields of
  `config.reward` of the same names, every one required (`from_config`)."""

  process_rewards: bool  # per-turn process rewards (the values below) on top of the scheme's
  # tiered
  compile_reward: float
  pass_reward: float
  partial_scale: float  # partial credit = partial_scale * pass_reward * passed / total
  slow_threshold_s: float  # > 0: grading slower than this costs slow_penalty
  slow_penalty: float
  # pass_rate
  regression_reward: float
  # process rewards (process_rewards=True)
  compile_error_penalty: float
  lint_improvement_reward: float
  newly_passing_reward: float
  newly_failing_penalty: float
  repeat_command_penalty: float
  turn_reward_min: float
  # any scheme: a turn whose message holds no usable tool call (malformed JSON, unknown tool,
  # missing arguments) earns this (<= 0); independent of process_rewards
  invalid_call_penalty: float
  # any scheme: a well-formed call whose tool reports an error to the agent (no such file, an
  # `old` string not in the file, an empty command) earns this (<= 0). A `run` whose command
  # exits non-zero is not a tool error.
  tool_error_penalty: float
  # mle
  invalid_reward: float
  stage_bonus: float

  def __post_init__(self):
    object.__setattr__(self, "process_rewards", bool(self.process_rewards))
    for field in dataclasses.fields(self):
      if field.name != "process_rewards":
        object.__setattr__(self, field.name, _number(field.name, getattr(self, field.name)))

  @classmethod
  def from_config(cls, reward_config: Any) -> "RewardSettings":
    """From `config.reward` (a ConfigDict or a mapping holding every field)."""
    return config_fields.from_section(cls, reward_config, "reward")


def _get(obj: Any, name: str, default: Any = None) -> Any:
  """Field access for dataclass/objects and dicts alike (TestReport or report.to_dict())."""
  if obj is None:
    return default
  if isinstance(obj, Mapping):
    return obj.get(name, default)
  return getattr(obj, name, default)


def _number(name: str, value: Any) -> float:
  try:
    number = float(value)
  except (TypeError, ValueError):
    raise ValueError(f"config.reward.{name} must be a number, got {value!r}") from None
  if math.isnan(number):
    raise ValueError(f"config.reward.{name} is NaN")
  return number


def all_passed(report: Any) -> bool:
  """Every test passed, at least one ran, nothing failed to collect, no timeout."""
  explicit = _get(report, "all_passed")
  if explicit is not None and not callable(explicit):
    return bool(explicit)
  passed, total = int(_get(report, "passed", 0) or 0), int(_get(report, "total", 0) or 0)
  return (total > 0 and passed == total and not _get(report, "failed", 0) and not _get(report, "errors", 0)
          and not _get(report, "collection_errors") and not _get(report, "timed_out", False))


def pass_fraction(report: Any) -> float:
  total = int(_get(report, "total", 0) or 0)
  if total <= 0:
    return 0.0
  return max(0.0, min(1.0, int(_get(report, "passed", 0) or 0) / total))


def _is_first_final_run(context: Mapping[str, Any] | None) -> bool:
  return int(_get(context, "final_run_index", 0) or 0) == 0


class RewardScheme:
  """Base class: `final` scores a graded episode, `step` gives optional per-turn process rewards."""

  name = "base"

  def __init__(self, settings: RewardSettings):
    if not isinstance(settings, RewardSettings):
      raise TypeError(f"a reward scheme takes RewardSettings (RewardSettings.from_config(config.reward)), "
                      f"got {type(settings).__name__}")
    self.settings = settings
    self.process_rewards = settings.process_rewards

  def final(self, report: Any, context: Mapping[str, Any] | None = None) -> float:
    """The episode's outcome reward. Only the first final grading counts: a context with
    `final_run_index` > 0 (a repeated final run) earns 0."""
    if not _is_first_final_run(context):
      return 0.0
    return float(self._final(report, context or {}))

  def _final(self, report: Any, context: Mapping[str, Any]) -> float:
    raise NotImplementedError

  def max_reward(self, context: Mapping[str, Any] | None = None) -> float:
    """The reward of a fully successful episode (for "hacks with full reward" counts)."""
    raise NotImplementedError

  def call_penalty(self, valid_call: bool, tool_ok: bool = True) -> float:
    """Per-turn reward for the call itself: `invalid_call_penalty` for a message without a
    usable call, else `tool_error_penalty` when the tool reported an error."""
    if not valid_call:
      return self.settings.invalid_call_penalty
    return 0.0 if tool_ok else self.settings.tool_error_penalty

  def step(self, prev_state: "ProcessState | None", new_state: "ProcessState") -> float:
    """Per-turn process reward; 0 unless config.reward.process_rewards is set."""
    if not self.process_rewards or prev_state is None:
      return 0.0
    return process_reward(prev_state, new_state, self.settings)


@registry.REWARD_SCHEMES.register("binary")
class BinaryReward(RewardScheme):
  """1 when every hidden test passes, else 0."""

  name = "binary"

  def _final(self, report, context):
    return 1.0 if all_passed(report) else 0.0

  def max_reward(self, context=None):
    return 1.0


@registry.REWARD_SCHEMES.register("tiered")
class TieredReward(RewardScheme):
  """+compile_reward if the code imports, +pass_reward if all pass, else pass_reward·partial_scale·fraction,
  minus slow_penalty when grading took longer than slow_threshold_s (if set)."""

  name = "tiered"

  def _final(self, report, context):
    v = self.settings
    compiles = context.get("compiles")
    if compiles is None:  # no explicit signal: tests were collected and none failed to import
      compiles = int(_get(report, "total", 0) or 0) > 0 and not _get(report, "collection_errors")
    reward = v.compile_reward if compiles else 0.0
    if all_passed(report):
      reward += v.pass_reward
    else:
      reward += v.pass_reward * v.partial_scale * pass_fraction(report)
    duration = float(context.get("duration_s", _get(report, "duration_s", 0.0)) or 0.0)
    if v.slow_threshold_s > 0 and duration > v.slow_threshold_s:
      reward -= v.slow_penalty
    return reward

  def max_reward(self, context=None):
    return self.settings.compile_reward + self.settings.pass_reward


@registry.REWARD_SCHEMES.register("pass_rate")
class PassRateReward(RewardScheme):
  """regression_reward (-1) if a test that passed before the agent's changes now fails,
  1 when all pass, else passed/total. Context key `baseline_passing`: ids passing initially."""

  name = "pass_rate"

  def _final(self, report, context):
    baseline = context.get("baseline_passing") or ()
    outcomes = _get(report, "outcomes") or {}
    if baseline and any(outcomes.get(t) != "passed" for t in baseline):
      return self.settings.regression_reward
    if all_passed(report):
      return 1.0
    return pass_fraction(report)

  def max_reward(self, context=None):
    return 1.0


@registry.REWARD_SCHEMES.register("mle")
class MLEReward(RewardScheme):
  """invalid_reward (-10) for an invalid or missing submission; otherwise the grader's score,
  negated when lower is better, plus stage_bonus per instrumentation stage reached.

  Score and validity come from the report (`score`, `valid`, `higher_is_better`) or the
  context (`score`, `submission_valid`, `higher_is_better`, `instrumentation_stages`).
  """

  name = "mle"

  def _final(self, report, context):
    valid = context.get("submission_valid", _get(report, "valid", None))
    score = context.get("score", _get(report, "score", None))
    try:
      score = None if score is None else float(score)
    except (TypeError, ValueError):
      score = None
    if not valid or score is None or math.isnan(score) or math.isinf(score):
      return self.settings.invalid_reward
    higher = context.get("higher_is_better", _get(report, "higher_is_better", True))
    stages = int(context.get("instrumentation_stages", 0) or 0)
    return (score if higher else -score) + self.settings.stage_bonus * stages

  def max_reward(self, context=None):
    return math.inf


def make_reward_scheme(reward_config: Any) -> RewardScheme:
  """The scheme named by config.reward.scheme, with the values of the same section (a ConfigDict
  or a mapping holding every field; `RewardSettings`)."""
  name = config_fields.read(reward_config, "scheme", "reward")
  return registry.REWARD_SCHEMES.get(name)(RewardSettings.from_config(reward_config))


# ---------------------------------------------------------------------------------------
# Process rewards
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ProcessState:
  """What the rollout engine knows after a turn; None fields contribute no reward.

  compile_ok: every Python file in the workspace compiles.
  lint_errors: a lint error count (any consistent linter).
  outcomes: {test_id: "passed" | "failed" | ...} from a public test run, if one happened.
  last_command / last_output: the turn's `run` command and its output.
  history: (command, output digest) of every earlier run, to spot pointless repeats.
  """

  compile_ok: bool | None = None
  lint_errors: int | None = None
  outcomes: Mapping[str, str] | None = None
  last_command: str | None = None
  last_output: str | None = None
  history: frozenset[tuple[str, str]] = frozenset()

  def after(self, **changes: Any) -> "ProcessState":
    """The next turn's state: moves this turn's command into history, applies `changes`."""
    history = self.history
    if self.last_command is not None:
      history = history | {(self.last_command, _digest(self.last_output))}
    base = dict(compile_ok=self.compile_ok, lint_errors=self.lint_errors, outcomes=self.outcomes,
                last_command=None, last_output=None, history=history)
    base.update(changes)
    return ProcessState(**base)


def _digest(text: str | None) -> str:
  return hashlib.sha1((text or "").encode("utf-8", errors="replace")).hexdigest()


def process_reward(prev: ProcessState, new: ProcessState, settings: RewardSettings) -> float:
  """One turn's process reward, summed and clipped below at turn_reward_min."""
  v = settings
  total = 0.0
  if prev.compile_ok is not False and new.compile_ok is False:
    total += v.compile_error_penalty
  if prev.lint_errors is not None and new.lint_errors is not None and new.lint_errors < prev.lint_errors:
    total += v.lint_improvement_reward
  if prev.outcomes is not None and new.outcomes is not None:
    for test_id, outcome in new.outcomes.items():
      before = prev.outcomes.get(test_id)
      if outcome == "passed" and before != "passed":
        total += v.newly_passing_reward
      elif outcome != "passed" and before == "passed":
        total += v.newly_failing_penalty
  if new.last_command is not None and (new.last_command, _digest(new.last_output)) in prev.history:
    total += v.repeat_command_penalty
  return max(total, v.turn_reward_min)


def compile_ok(files: Mapping[str, str]) -> bool:
  """True when every .py file compiles (a cheap process-reward signal, no execution)."""
  from rl.env.tools import python_compiles  # pylint: disable=import-outside-toplevel

  return all(python_compiles(text, path) for path, text in files.items() if path.endswith(".py"))


class FinalGradingGate:
  """Admits the first final grading of each episode; repeats get final_run_index > 0 (reward 0)."""

  def __init__(self):
    self._counts: dict[str, int] = {}
    self._lock = threading.Lock()

  def next_index(self, episode_key: str) -> int:
    with self._lock:
      index = self._counts.get(episode_key, 0)
      self._counts[episode_key] = index + 1
      return index


# ---------------------------------------------------------------------------------------
# Synthesis: the cheat verdict always wins
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SynthesizedReward:
  reward: float
  turn_rewards: tuple[float, ...]
  flagged: bool
  hack: dict[str, Any]  # the trajectory record's `hack` field


def synthesize(final_reward: float, verdicts: Iterable[Any] = (), *, no_gain_reward: float = 0.0,
               turn_rewards: Iterable[float] = ()) -> SynthesizedReward:
  """Combines the test-based reward with anti-hack verdicts (rl.antihack.Verdict, None allowed).

  A flagged episode gets `no_gain_reward` and loses every positive process reward (negative
  ones stay), so cheating can never pay more than not trying.
  """
  from rl.antihack.verdict import combine, hack_record  # local: rewards must import without antihack state

  verdict = combine(list(verdicts))
  turns = tuple(float(r) for r in turn_rewards)
  if verdict.flagged:
    return SynthesizedReward(float(no_gain_reward), tuple(min(r, 0.0) for r in turns), True, hack_record(verdict))
  return SynthesizedReward(float(final_reward), turns, False, hack_record(verdict))


def apply_late_verdict(record: dict[str, Any], verdict: Any, *, no_gain_reward: float = 0.0) -> float:
  """Corrects a finished trajectory record with a verdict that arrived late (async judging).

  `verdict`: an rl.antihack Verdict or an rl.antihack.judge JudgeVerdict. A flagged verdict sets
  `final_reward` to `no_gain_reward`, `success` to False, zeroes positive per-step rewards and
  fills `hack`; an unflagged one only records its judge score. Returns the new final reward,
  which the trainer must use for the sample (or drop the sample) before the update.
  """
  if hasattr(verdict, "to_verdict"):
    verdict = verdict.to_verdict()
  hack = dict(record.get("hack") or {"flagged": False, "stage": "", "rules": [], "judge_score": None, "reason": ""})
  if verdict.score is not None:
    hack["judge_score"] = verdict.score
  if verdict.flagged and not hack.get("flagged"):
    hack.update(flagged=True, stage=verdict.stage, rules=list(verdict.rules), reason=verdict.reason)
    record["final_reward"] = float(no_gain_reward)
    record["success"] = False
    for step in record.get("steps") or ():
      if isinstance(step, dict) and isinstance(step.get("reward"), (int, float)) and step["reward"] > 0:
        step["reward"] = 0.0
  record["hack"] = hack
  return float(record.get("final_reward", no_gain_reward))
