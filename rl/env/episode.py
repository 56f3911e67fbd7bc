"""An episode as the trainer sees it: token bookkeeping (tokens, action mask, turn ends, the
sampler's log-probs), rewards, its trajectory record and why it failed when the failure was not
the policy's; the rollout metrics over a batch of them; and Episodes rebuilt from logged records
(SFT on demonstrations)."""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Literal, Mapping, Sequence, get_args

import numpy as np

from rl.env import tools as tools_lib
from rl.env.tools import ChatRenderer


# Why an episode failed for a reason outside the policy (docs/algorithms.md, "Failed episodes"):
# its sandbox did not start ("open"), its sandbox broke under a tool call ("exec"), grading
# raised ("grade"), or the judge could not answer and judge_on_error is "pass" ("judge").
InfraFailure = Literal["open", "exec", "grade", "judge"]
INFRA_FAILURES: tuple[str, ...] = get_args(InfraFailure)


@dataclasses.dataclass
class Episode:
  """One finished trajectory, ready for the trainer (docs/INTERFACES.md)."""
  task_id: str
  group_id: int
  tokens: list[int]
  action_mask: list[int]
  sampler_logprobs: list[float]
  turn_ends: list[int]
  turn_rewards: list[float]
  final_reward: float
  success: bool
  terminated: str
  truncated: bool
  duration_s: float
  exec_time_s: float
  record: dict[str, Any]
  # Per agent turn: the message had no usable tool call, or the tool reported an error (a
  # command that ran and exited non-zero is not an error). Empty when unknown (demonstrations).
  turn_errors: list[bool] = dataclasses.field(default_factory=list)
  # Set when the episode failed for an infrastructure reason: its reward says nothing about
  # the policy, so the trainer leaves it out of the losses and group baselines. None: the
  # outcome (success or failure, timeouts and crashes of the agent's own code included) is the
  # policy's. The record's `infra_failure` field holds the same value.
  infra_failure: InfraFailure | None = None
  # antihack.judge_async: the judge's verdict is still out. Until `Evaluator.resolve_judge`
  # applies it, reward, success and record lack the judge stage; nothing may train on it.
  pending_judge: "PendingJudge | None" = None


@dataclasses.dataclass(frozen=True)
class PendingJudge:
  """What reward synthesis needs once an asynchronous verdict arrives (antihack.judge_async).

  Holding the inputs of `rl.outcome.rewards.synthesize` rather than its output lets the late verdict
  be folded in exactly as the synchronous judge's is, so both paths give the same rewards.
  """
  key: int  # the episode's key in the Evaluator's JudgeQueue
  raw_reward: float  # the scheme's reward before any verdict
  verdicts: tuple[Any, ...]  # the rule stages' verdicts (rl.antihack.Verdict)
  turn_rewards: tuple[float, ...]  # per-turn rewards before synthesis
  passed: bool  # every hidden test passed


def infra_metrics(episodes: Sequence[Episode]) -> dict[str, float]:
  """`infra/failed_episodes`, `infra/failed_fraction` and `infra/failed_<cause>` counts."""
  causes = [e.infra_failure for e in episodes]
  failed = sum(c is not None for c in causes)
  out = {"infra/failed_episodes": float(failed),
         "infra/failed_fraction": failed / len(episodes) if episodes else 0.0}
  for cause in INFRA_FAILURES:
    out[f"infra/failed_{cause}"] = float(causes.count(cause))
  return out


def verdict_metrics(episodes: Sequence[Episode]) -> dict[str, float]:
  """The rollout metrics a late (asynchronous) judge verdict can change: reward, success,
  flag rate and the infrastructure failures; recomputed once the verdicts are in."""
  if not episodes:
    return infra_metrics(episodes)
  out = {"rollout/reward_mean": float(np.mean([e.final_reward for e in episodes])),
         "rollout/success_rate": float(np.mean([e.success for e in episodes])),
         "antihack/flag_rate": float(np.mean([bool(e.record["hack"]["flagged"]) for e in episodes]))}
  out.update(infra_metrics(episodes))
  return out


def episode_metrics(episodes: Sequence[Episode]) -> dict[str, float]:
  """The rollout metrics that the episodes alone determine (counts, means, terminations,
  `verdict_metrics`); the engine adds its timings. Several processes compute these from
  everyone's episodes."""
  m = {
      "rollout/episodes": float(len(episodes)),
      "rollout/turns_mean": float(np.mean([len(e.turn_ends) for e in episodes])),
      "rollout/tokens_mean": float(np.mean([len(e.tokens) for e in episodes])),
      "rollout/action_tokens_mean": float(np.mean([sum(e.action_mask) for e in episodes])),
      # Episodes whose final workspace had been graded before (sandbox.grading.GradeCache).
      "rollout/grade_cached_frac": float(np.mean([bool(e.record.get("grade_cached")) for e in episodes])),
  }
  checked = [e.record["oracle"] for e in episodes if isinstance(e.record.get("oracle"), dict)]
  if checked:  # the differential oracle (rl/outcome/oracle.py) on episodes that passed a test
    m["antihack/oracle_checks"] = float(len(checked))
    m["antihack/oracle_flag_rate"] = float(np.mean([bool(o.get("flagged")) for o in checked]))
    m["antihack/oracle_cached_frac"] = float(np.mean([bool(o.get("cached")) for o in checked]))
    m["time/oracle_s_per_check"] = float(np.mean([float(o.get("duration_s") or 0.0) for o in checked]))
  for reason in ("submit", "max_steps", "max_tokens", "timeout", "error"):
    m[f"rollout/terminated_{reason}"] = float(sum(e.terminated == reason for e in episodes))
  m.update(verdict_metrics(episodes))
  m.update(mle_metrics(episodes))
  return m


def mle_metrics(episodes: Sequence[Episode]) -> dict[str, float]:
  """Over the episodes of MLE tasks (their record's `mle` field, rl.tasks.mle.runner): the share
  whose final program wrote a valid submission, the mean normalised score of the valid ones
  (higher is better), the mean number of instrumentation stages reached and the mean execution
  time of the final program. With improve-previous prompts (rl.train.self_improve) the valid rate
  and score also split by prompt kind (`_improve`, `_scratch`). Empty when no episode is an MLE
  task's."""
  records = [getattr(e, "record", None) or {} for e in episodes]  # evaluate() also takes bare results
  runs = [(r["mle"], bool(r.get("prompt_origin"))) for r in records if r.get("mle")]
  if not runs:
    return {}

  def rate_and_score(subset: list, suffix: str) -> dict[str, float]:
    return {f"mle/{k}{suffix}": v for k, v in _grade_summary([r["grade"] for r, _ in subset]).items()}

  m = {"mle/episodes": float(len(runs)),
       "mle/stage_mean": float(np.mean([r["stages"]["count"] for r, _ in runs])),
       "mle/exec_time_s": float(np.mean([r["exec_time_s"] for r, _ in runs])),
       **rate_and_score(runs, "")}
  improve = [x for x in runs if x[1]]
  if improve:
    m["mle/improve_episodes"] = float(len(improve))
    m.update(rate_and_score(improve, "_improve"))
    if len(improve) < len(runs):
      m.update(rate_and_score([x for x in runs if not x[1]], "_scratch"))
  return m


def mle_task_scores(episodes: Sequence[Episode]) -> dict[str, dict[str, float]]:
  """Per MLE task: its episodes, the share with a valid submission and the mean normalised score
  of the valid ones (absent when none was valid). Empty when no episode is an MLE task's."""
  by_task: dict[str, list] = {}
  for e in episodes:
    record = getattr(e, "record", None) or {}
    if record.get("mle"):
      by_task.setdefault(e.task_id, []).append(record["mle"]["grade"])
  return {task_id: {"episodes": float(len(grades)), **_grade_summary(grades)}
          for task_id, grades in sorted(by_task.items())}


def _grade_summary(grades: Sequence[Mapping[str, Any]]) -> dict[str, float]:
  """valid_rate of MLE grades, and score_mean of the valid ones (absent when none is valid)."""
  scores = [g["normalized_score"] for g in grades if g["valid"]]
  return {"valid_rate": len(scores) / len(grades), **({"score_mean": float(np.mean(scores))} if scores else {})}


def episodes_from_records(records: Any, tasks: Sequence[Any] | None, renderer: ChatRenderer, *,
                          observation_max_chars: int = 1024, only_successful: bool = True,
                          mode: str = "multi_turn") -> list[Episode]:
  """Rebuilds trainable Episodes (tokens, masks, turn ends) from logged trajectory records.

  For SFT on demonstrations (config.sft.demonstrations). Each action is its logged text plus the
  end-of-turn token (all policy tokens); observations are re-rendered with the chat template as
  the model saw them (cut to `observation_max_chars`). Log-probs are 0 (unknown).

  Args:
    records: a trajectory JSONL file or directory, or an iterable of record dicts.
    tasks: keep only records of these tasks (None keeps all).
    only_successful: drop failed records. Hack-flagged ones are always dropped: a demonstration
      never teaches a cheat.
  """
  from rl.env import trajectory as trajectory_lib  # pylint: disable=import-outside-toplevel
  from rl.env.actors import tool_call_text  # pylint: disable=import-outside-toplevel
  if isinstance(records, (str, os.PathLike)):
    records = trajectory_lib.read_trajectories(records)
  by_id = {t.id: t for t in tasks} if tasks is not None else None
  episodes = []
  eot = list(renderer.end_of_turn_ids)
  for record in records:
    if by_id is not None and record["task_id"] not in by_id:
      continue
    if (only_successful and not record.get("success")) or (record.get("hack") or {}).get("flagged"):
      continue
    task = by_id.get(record["task_id"]) if by_id is not None else None
    record_mode = record.get("mode", mode)
    messages = (tools_lib.initial_messages(task, record_mode) if task is not None
                else [{"role": "system", "content": ""}, {"role": "user", "content": ""}])
    # A record written without a renderer (rl.tasks.mle.build.demonstration_records) holds the
    # bare statement; the policy sees the chat-rendered opening, so that is what SFT clones.
    prompt = record["prompt"]
    if task is not None and prompt == task.statement:
      prompt = renderer.render(messages, generation_prompt=True)
    tokens = renderer.encode(prompt)
    mask = [0] * len(tokens)
    turn_ends: list[int] = []
    steps = record.get("steps", [])
    for i, step in enumerate(steps):
      text = step.get("text")
      if not text:
        if step.get("action_type") is None:
          continue
        call = tool_call_text(step["action_type"], step.get("action_input") or {})
        text = f"{step.get('thought')}\n{call}" if step.get("thought") else call
      action = renderer.encode(text) + eot
      tokens += action
      mask += [1] * len(action)
      turn_ends.append(len(tokens) - 1)
      messages.append({"role": "assistant", "content": text})
      if i + 1 < len(steps):
        observation = tools_lib.truncate_observation(step.get("observation", ""), observation_max_chars)
        obs = renderer.observation_ids(messages, observation)
        messages.append({"role": "tool", "content": observation})
        tokens += obs
        mask += [0] * len(obs)
    turn_rewards = [float(s.get("reward", 0.0)) for s in steps if s.get("text") or s.get("action_type")]
    turn_rewards = (turn_rewards + [0.0] * len(turn_ends))[:len(turn_ends)]
    episodes.append(Episode(
        task_id=record["task_id"], group_id=int(record.get("group_id", len(episodes))), tokens=tokens,
        action_mask=mask, sampler_logprobs=[0.0] * len(tokens), turn_ends=turn_ends,
        turn_rewards=turn_rewards, final_reward=float(record.get("final_reward", 0.0)),
        success=bool(record.get("success")), terminated=record.get("terminated", "submit"),
        truncated=record.get("terminated") in ("max_steps", "max_tokens", "timeout"),
        duration_s=float(record.get("duration_s", 0.0)), exec_time_s=float(record.get("exec_time_s", 0.0)),
        record=dict(record), infra_failure=record.get("infra_failure")))
  return episodes
