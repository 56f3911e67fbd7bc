"""Batched multi-environment rollouts: policy decoding, sandboxed tools, grading, rewards, logs.

All episodes that need an action decode together (one batched `policy.act` call per turn); their
tool calls, session start-up and final grading run in a thread pool, so sandbox work overlaps
generation. Each finished episode leaves the batch as an `Episode` (docs/INTERFACES.md) with its
token bookkeeping and its trajectory record (shared/ARCHITECTURE.md).
"""

from __future__ import annotations

import collections
import concurrent.futures as futures
import dataclasses
import hashlib
import itertools
import logging
import os
import re
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Literal, Mapping, Sequence, get_args

import numpy as np

from rl import agent as agent_lib
from rl import killpoints
from rl.agent import Action, ChatRenderer, SandboxCrash, ToolExecutor, ToolOutcome
from rl.policies import ActRequest, ActResult, Policy


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

  Holding the inputs of `rl.rewards.synthesize` rather than its output lets the late verdict
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
  for reason in ("submit", "max_steps", "max_tokens", "timeout", "error"):
    m[f"rollout/terminated_{reason}"] = float(sum(e.terminated == reason for e in episodes))
  m.update(verdict_metrics(episodes))
  return m


@dataclasses.dataclass
class AgentLimits:
  """The episode limits, from `config.agent` and `config.sandbox`."""
  mode: str = "multi_turn"
  max_turns: int = 6
  max_tokens_per_turn: int = 128
  max_tokens_per_trajectory: int = 1536
  observation_max_chars: int = 1024
  command_timeout_s: float = 10.0
  episode_timeout_s: float | None = None
  num_workers: int = 2
  # Decode once this fraction of the episodes waiting for a tool result are ready (1.0: strict
  # turn-synchronous batches; lower values let slow tools lag behind a turn).
  min_ready_fraction: float = 1.0
  # At most this many episodes hold a sandbox (and a sampler row) at once; the rest wait and
  # start as earlier ones finish. 0 = every episode of the rollout at once.
  max_live_episodes: int = 0

  def __post_init__(self):
    if self.mode not in ("multi_turn", "single_turn"):
      raise ValueError(f"agent.mode must be 'multi_turn' or 'single_turn', got {self.mode!r}")
    for name in ("max_turns", "max_tokens_per_turn", "max_tokens_per_trajectory",
                 "observation_max_chars", "num_workers"):
      if int(getattr(self, name)) <= 0:
        raise ValueError(f"agent.{name} must be positive, got {getattr(self, name)!r}")
    if self.command_timeout_s <= 0:
      raise ValueError(f"the per-command timeout must be positive, got {self.command_timeout_s!r}")
    if not 0.0 < self.min_ready_fraction <= 1.0:
      raise ValueError(f"min_ready_fraction must be in (0, 1], got {self.min_ready_fraction!r}")
    if int(self.max_live_episodes) < 0:
      raise ValueError(f"agent.max_live_episodes must be >= 0 (0 = no limit), got {self.max_live_episodes!r}")

  @classmethod
  def from_config(cls, config: Any) -> "AgentLimits":
    a = config.agent  # every field read directly: configs/default.py holds the defaults
    return cls(mode=a.mode, max_turns=int(a.max_turns), max_tokens_per_turn=int(a.max_tokens_per_turn),
               max_tokens_per_trajectory=int(a.max_tokens_per_trajectory),
               observation_max_chars=int(a.observation_max_chars),
               command_timeout_s=float(config.sandbox.exec_timeout_s),
               episode_timeout_s=float(a.episode_timeout_s) if a.episode_timeout_s else None,  # 0: none
               num_workers=int(a.num_workers), min_ready_fraction=float(a.min_ready_fraction),
               max_live_episodes=int(a.max_live_episodes))


def sandbox_config_from(config: Any) -> Any:
  from sandbox import SandboxConfig  # sandbox never imports rl; rl reaches it only here
  return SandboxConfig.from_mapping(config.sandbox)


def default_open_session(workspace_dir: str, sandbox_config: Any) -> Any:
  from sandbox import open_session
  return open_session(workspace_dir, sandbox_config)


def repo_hash(repo_dir: str | os.PathLike) -> str:
  """Content hash of a task's initial repo (paths and bytes), the record's `base_hash`."""
  h = hashlib.sha256()
  root = Path(repo_dir)
  for p in sorted(root.rglob("*")):
    if p.is_file() and "__pycache__" not in p.parts:
      h.update(p.relative_to(root).as_posix().encode() + b"\0")
      h.update(p.read_bytes() + b"\0")
  return h.hexdigest()[:16]


# --------------------------------------------------------------------------------------------
# Anti-hack, grading and reward: one path shared by rollouts, scripts/grade.py and replay.


@dataclasses.dataclass
class ActionCheck:
  """The online anti-hack decision for one action, before it runs."""
  flagged: bool = False
  execute: bool = True
  terminate: bool = False
  observation: str | None = None  # what the agent sees instead of the real result
  record: dict[str, Any] = dataclasses.field(
      default_factory=lambda: {"flagged": False, "stage": "", "rules": [], "response": None})
  verdict: Any = None  # the rl.antihack Verdict, for the episode's combined verdict


def read_text_files(root: str | os.PathLike, max_bytes: int = 1 << 20) -> dict[str, str]:
  """Workspace-relative path -> text of the files under `root` (for the final-diff rules)."""
  out = {}
  root = Path(root)
  for p in sorted(root.rglob("*")):
    if p.is_file() and not p.is_symlink() and "__pycache__" not in p.parts and ".git" not in p.parts:
      if p.stat().st_size <= max_bytes:
        out[p.relative_to(root).as_posix()] = p.read_bytes().decode("utf-8", errors="replace")
  return out


class Evaluator:
  """Online action checks, grading in a fresh sandbox, final checks, judge and reward synthesis.

  Uses rl.antihack (stage 1), rl.judge (stage 2, when `config.antihack.judge` is not "none")
  and rl.rewards; the cheat verdict always wins over the test result.
  """

  def __init__(self, config: Any, *, sandbox_config: Any = None,
               grade_fn: Callable[..., Any] | None = None, judge_async: bool = False):
    from rl import antihack, rewards  # pylint: disable=import-outside-toplevel
    import rl.antihack.diff  # noqa: F401  # pylint: disable=import-outside-toplevel
    self.config = config
    self.sandbox_config = sandbox_config if sandbox_config is not None else sandbox_config_from(config)
    self._grade_fn = grade_fn
    self.no_gain_reward = float(config.antihack.no_gain_reward)
    self.response = str(config.antihack.response)
    self.rule_engine = (None if str(config.antihack.rules) == "none"
                        else antihack.RuleEngine.from_config(config.antihack))
    self.judge = self._make_judge()
    # judge_async (the engine passes antihack.judge_async): verdicts are scored in background
    # threads while the rollout and the trainer's scoring pass go on, and `resolve_judge`
    # collects them before an update. One-shot users (grade, replay) judge synchronously.
    self.judge_queue = None
    if self.judge is not None and judge_async:
      from rl import judge as judge_lib  # pylint: disable=import-outside-toplevel
      self.judge_queue = judge_lib.JudgeQueue(self.judge)
    self._judge_keys = itertools.count()
    self.scheme = rewards.make_reward_scheme(config.reward)
    self._antihack = antihack
    self._rewards = rewards
    self.use_expected_tests = bool(grade_fn is None and config.reward.expected_tests)
    # Identical final workspaces share one grading (sandbox.grading.GradeCache).
    self.grade_cache = None
    if grade_fn is None and config.reward.grade_cache:
      from sandbox.grading import GradeCache  # pylint: disable=import-outside-toplevel
      self.grade_cache = GradeCache()
    self._expected: dict[str, list[str] | None] = {}
    self._expected_lock = threading.Lock()

  def _make_judge(self) -> Any:
    if str(self.config.antihack.judge) == "none":
      return None
    from rl import judge as judge_lib  # pylint: disable=import-outside-toplevel
    return judge_lib.make_judge(self.config.antihack)

  def initial_process_state(self) -> Any:
    # The initial repo is assumed to compile; the first turn that breaks it is penalised.
    return self._rewards.ProcessState(compile_ok=True)

  def new_context(self, task: Any) -> Any:
    """Per-episode facts for the online rules (it remembers the episode's own writes)."""
    return self._antihack.ActionContext.from_task(task)

  # -- online -------------------------------------------------------------------------------
  def check_action(self, task: Any, action: Action, context: Any) -> ActionCheck:
    if self.rule_engine is None or action.type is None:
      return ActionCheck()
    verdict = self.rule_engine.check_action(action.type, action.input, context)
    written = {"write_file": "Wrote {nbytes} bytes to {path}.",
               "edit_file": "Edited {path}: replaced 1 occurrence."}.get(action.type)
    response = self._antihack.respond(verdict, action.type, action.input, policy=self.response,
                                      **({"written_message": written} if written else {}))
    if not verdict.flagged:
      return ActionCheck(record=dict(response.record), verdict=verdict)
    return ActionCheck(flagged=True, execute=response.execute, terminate=response.terminate,
                       observation=response.observation, record=dict(response.record), verdict=verdict)

  # -- after the episode ----------------------------------------------------------------------
  def grade(self, task: Any, workspace_dir: str) -> Any:
    grade_fn = self._grade_fn
    extra = {}
    if grade_fn is None:
      from sandbox.grading import grade as grade_fn  # pylint: disable=import-outside-toplevel
      if self.grade_cache is not None:
        extra["cache"] = self.grade_cache
    if self.use_expected_tests:
      expected = self.expected_tests(task)
      if expected is not None:
        extra["expected_tests"] = expected
    return grade_fn(workspace_dir, str(task.tests_dir), hidden_tests_dest=task.hidden_tests_dest,
                    test_command=task.test_command, timeout_s=float(task.timeout_s),
                    config=self.task_config(task), pristine_dir=str(task.repo_dir), **extra)

  def task_config(self, task: Any) -> Any:
    """The sandbox config of `task`: its import roots, variables, limits and built setup."""
    from rl.tasks.environment import task_sandbox_config  # pylint: disable=import-outside-toplevel
    return task_sandbox_config(task, self.sandbox_config)

  def expected_tests(self, task: Any) -> list[str] | None:
    """The hidden-test node ids that pytest collects on the reference solution, every one of
    which must pass (a test the agent's code makes vanish counts as missing, not as absent).

    Collected once per task version in a sandbox (and cached on disk by content digest); None
    when the task has no `solution.patch` or the collection fails (then the tests that ran
    define the total, as before).
    """
    key = f"{task.id}@{task.version}"
    with self._expected_lock:  # grading threads: one collection per task
      if key in self._expected:
        return self._expected[key]
      ids = None
      patch = getattr(task, "solution_patch", None)
      if patch:
        from rl.tasks.patch import apply_patch  # pylint: disable=import-outside-toplevel
        from sandbox.grading import collect_expected_tests  # pylint: disable=import-outside-toplevel
        cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                             "rlcoder", "expected-tests")
        try:
          with tempfile.TemporaryDirectory(prefix="rlcoder-reference-") as ref:
            shutil.copytree(task.repo_dir, ref, dirs_exist_ok=True, symlinks=True)
            apply_patch(ref, patch)
            ids = collect_expected_tests(ref, str(task.tests_dir), task.hidden_tests_dest, task.test_command,
                                         config=self.task_config(task), cache_dir=cache)
        except Exception as e:  # pylint: disable=broad-except
          logging.warning("task %s: collecting the expected tests failed (%s); grading counts "
                          "the tests that ran", task.id, e)
          ids = None
      self._expected[key] = ids
      return ids

  def grade_mle(self, task: Any, workspace_dir: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Runs an MLE task's program in a fresh sandbox and grades its submission on the host.

    Returns a report-shaped dict (one "test": a valid submission) and the `mle` reward context.
    """
    from rl import instrumentation  # pylint: disable=import-outside-toplevel
    from rl.tasks.mle import runner  # pylint: disable=import-outside-toplevel
    result = runner.run_and_grade(task, workspace_dir,
                                  instrumenter=instrumentation.make_instrumenter(self.config.instrumentation),
                                  sandbox_config=self.sandbox_config)
    valid = bool(result.valid)
    report = {"passed": int(valid), "failed": int(not valid), "errors": 0, "skipped": 0, "total": 1,
              "all_passed": valid, "timed_out": bool(result.timed_out), "runtime_evidence": {},
              "log": result.terminal_output(), "mle": result.to_dict()}
    return report, result.reward_context()

  def evaluate(self, task: Any, workspace_dir: str | None, *, action_checks: Sequence[ActionCheck] = (),
               steps: Sequence[Mapping[str, Any]] = (), turn_rewards: Sequence[float] = (),
               context: Any = None) -> dict[str, Any]:
    """Grades `workspace_dir` in a fresh sandbox and synthesises the reward (verdict wins).

    `workspace_dir` None (the sandbox died) skips grading: the episode earns the no-gain reward.
    Returns {"reward", "turn_rewards", "success", "tests", "hack", "report", "infra_failure"}
    ("judge" when the judge could not answer and did not flag, else None).
    """
    verdicts = [c.verdict for c in action_checks if c.flagged and c.verdict is not None]
    infra_failure = None
    pending_key = None
    report = None
    reward_context: dict[str, Any] = {"final_run_index": 0}
    solution = None
    if workspace_dir is not None:
      if getattr(task, "grader", "pytest") == "mle":
        report, mle_context = self.grade_mle(task, workspace_dir)
        reward_context.update(mle_context)
      else:
        report = self.grade(task, workspace_dir)
      initial, final = read_text_files(task.repo_dir), read_text_files(workspace_dir)
      target = agent_lib.solution_file_for(task)
      if target in final and self._keep_solution(task):  # for the self-improvement buffer
        solution = {"path": target, "code": final[target]}
      if self.rule_engine is not None:
        context = context if context is not None else self.new_context(task)
        verdicts.append(self.rule_engine.check_diff(initial, final, context))
        evidence = (report.get("runtime_evidence") if isinstance(report, Mapping)
                    else getattr(report, "runtime_evidence", None))
        verdicts.append(self.rule_engine.check_runtime(evidence or {}))
      if self.judge is not None:
        from rl import judge as judge_lib  # pylint: disable=import-outside-toplevel
        judge_input = judge_lib.JudgeInput(
            statement=task.statement, steps=list(steps),
            final_diff=self._antihack.diff.unified_diff(initial, final),
            # Grading logs quote hidden-test assertions: the judge never sees the hidden tests.
            execution_log=judge_lib.redact_hidden_tests(
                str((report.get("log") if isinstance(report, Mapping) else getattr(report, "log", ""))
                    or ""), str(task.tests_dir)))
        if self.judge_queue is not None:
          pending_key = next(self._judge_keys)  # itertools.count: atomic under the GIL
          self.judge_queue.submit(pending_key, judge_input)
        else:
          judged = self.judge.score(judge_input)
          verdicts.append(judged.to_verdict())
          # Unjudged, yet passed ("pass"): the reward is not vetted, so it must not train.
          if judged.error is not None and not judged.flagged:
            infra_failure = "judge"
    raw = self.scheme.final(report, reward_context) if report is not None else self.no_gain_reward
    pending = None
    if pending_key is not None:
      pending = PendingJudge(key=pending_key, raw_reward=float(raw), verdicts=tuple(verdicts),
                             turn_rewards=tuple(float(r) for r in turn_rewards),
                             passed=bool(report is not None and self._rewards.all_passed(report)))
    out = self._rewards.synthesize(raw, verdicts, no_gain_reward=self.no_gain_reward,
                                   turn_rewards=turn_rewards)
    passed = bool(report is not None and self._rewards.all_passed(report))
    mle = report.get("mle") if isinstance(report, Mapping) else None
    if solution is not None:  # what an improve-previous prompt may show of the final run
      if mle is not None:  # the program's own terminal output (markers included; clipped by the runner)
        solution["output"] = str(report.get("log") or "")
      else:  # hidden-test logs quote the hidden tests: only the counts
        t = _tests_dict(report)
        solution["output"] = f"hidden tests: {t['passed']} of {t['total']} passed"
    return {"reward": float(out.reward), "turn_rewards": list(out.turn_rewards),
            "success": passed and not out.flagged, "tests": _tests_dict(report), "hack": out.hack,
            "report": report, "infra_failure": infra_failure, **({"mle": mle} if mle else {}),
            **({"solution": solution} if solution else {}), **({"pending_judge": pending} if pending else {})}

  def resolve_judge(self, episodes: Sequence[Episode], timeout: float | None = None) -> dict[str, float]:
    """Waits for the asynchronous verdicts of exactly `episodes` and applies them in place.

    Each episode's reward, per-turn rewards, success, `hack` and `infra_failure` (and the same
    fields of its record) become what the synchronous judge would have given: the verdicts
    are synthesised again with the judge's. A judge error follows `judge_on_error` as there:
    "flag" flags, "pass" marks an infrastructure failure ("judge"), left out of the losses.
    No overall `timeout` by default: each request is bounded by the backend's own timeout and
    retries (judge_timeout_s, judge_max_retries). Returns the `judge/*` metrics.
    """
    todo = [e for e in episodes if e.pending_judge is not None]
    if self.judge_queue is None or not todo:
      return {}
    t0 = time.perf_counter()
    verdicts = self.judge_queue.resolve([e.pending_judge.key for e in todo], timeout=timeout)
    wait_s = time.perf_counter() - t0
    flagged = errors = 0
    for e in todo:
      pending, judged = e.pending_judge, verdicts[e.pending_judge.key]
      out = self._rewards.synthesize(pending.raw_reward, [*pending.verdicts, judged.to_verdict()],
                                     no_gain_reward=self.no_gain_reward, turn_rewards=pending.turn_rewards)
      turn_rewards = list(out.turn_rewards)
      if len(turn_rewards) != len(e.turn_ends):  # as RolloutEngine._finish
        turn_rewards = [0.0] * len(e.turn_ends)
      e.final_reward, e.success = float(out.reward), pending.passed and not out.flagged
      e.turn_rewards = turn_rewards
      if judged.error is not None and not judged.flagged and e.infra_failure is None:
        e.infra_failure = "judge"
      flagged += int(judged.flagged)
      errors += int(judged.error is not None)
      for step, r in zip(e.record.get("steps") or (), turn_rewards):
        step["reward"] = float(r)
      e.record.update(final_reward=e.final_reward, success=e.success, hack=out.hack,
                      infra_failure=e.infra_failure)
      e.pending_judge = None
    return {"judge/resolved": float(len(todo)), "judge/flagged": float(flagged),
            "judge/errors": float(errors), "judge/wait_s": wait_s}

  def close(self) -> None:
    if self.judge_queue is not None:
      self.judge_queue.close()

  def _keep_solution(self, task: Any) -> bool:
    """Final programs go into the record for MLE tasks and whenever self-improvement is on."""
    return getattr(task, "grader", "pytest") == "mle" or bool(self.config.self_improve.enabled)


def _tests_dict(report: Any) -> dict[str, int]:
  keys = ("passed", "failed", "errors", "skipped", "total")
  if report is None:
    return {k: 0 for k in keys}
  get = report.get if isinstance(report, Mapping) else lambda k: getattr(report, k, 0)
  return {k: int(get(k) or 0) for k in keys}


def run_action(executor: ToolExecutor, evaluator: Evaluator, task: Any, action: Action,
               context: Any) -> tuple[ToolOutcome, ActionCheck]:
  """Checks an action online and executes it unless the anti-hack response replaces it.

  The one path for rollouts, scripts/grade.py and scripts/replay.py, so replays see the same
  observations (fake outputs are deterministic in the action).
  """
  check = evaluator.check_action(task, action, context)
  if not check.execute:
    return ToolOutcome(check.observation or "", ok=not check.terminate), check
  return executor.execute(action), check


# --------------------------------------------------------------------------------------------
# The engine.


@dataclasses.dataclass
class _Run:
  """Mutable state of one episode inside the engine (main-thread only)."""
  id: int
  task: Any
  group_id: int
  messages: list[dict[str, str]]
  tokens: list[int]
  mask: list[int]
  logprobs: list[float]
  new_tokens: list[int]
  prompt: str
  start: float
  turn_ends: list[int] = dataclasses.field(default_factory=list)
  steps: list[dict[str, Any]] = dataclasses.field(default_factory=list)
  checks: list[ActionCheck] = dataclasses.field(default_factory=list)
  context: Any = None  # rl.antihack.ActionContext of this episode
  process_state: Any = None  # rl.rewards.ProcessState after the latest turn
  file_compiles: dict[str, bool] = dataclasses.field(default_factory=dict)
  turn_rewards: list[float] = dataclasses.field(default_factory=list)
  turn_errors: list[bool] = dataclasses.field(default_factory=list)
  session: Any = None
  executor: ToolExecutor | None = None
  exec_time_s: float = 0.0
  terminated: str = ""
  error: str = ""
  infra_failure: InfraFailure | None = None
  pending_action: Action | None = None
  pending_tokens: int = 0
  dispatched_at: float = 0.0


class RolloutEngine:
  """Runs groups of episodes with a policy, sandbox sessions and the evaluator.

  Args:
    config: the experiment config (agent, sandbox, antihack, reward sections).
    policy: a `rl.policies.Policy`.
    renderer: the `ChatRenderer` of the policy's tokenizer.
    open_session: `(workspace_dir, sandbox_config) -> session`; default `sandbox.open_session`.
    evaluator: grading, anti-hack and reward; default `Evaluator(config)`.
    writer: an optional `rl.trajectory.TrajectoryWriter` that receives every record.
    model_info: the record's `model` field ({"checkpoint", "step"}).

  `on_episode_end`, when set, is called once per finished (graded) episode: a progress bar's
  `advance`.
  """

  def __init__(self, config: Any, policy: Policy, renderer: ChatRenderer, *,
               open_session: Callable[[str, Any], Any] | None = None,
               evaluator: Evaluator | None = None, writer: Any = None,
               model_info: Mapping[str, Any] | None = None,
               limits: AgentLimits | None = None):
    self.config = config
    self.policy = policy
    self.renderer = renderer
    self.limits = limits or AgentLimits.from_config(config)
    self.evaluator = evaluator or Evaluator(
        config, judge_async=bool(config.antihack.judge_async))
    self.open_session = open_session or default_open_session
    self.writer = writer
    self.model_info = dict(model_info or {"checkpoint": "", "step": 0})
    self.sampling_info = {"temperature": float(config.sampling.temperature),
                          "top_p": float(config.sampling.top_p)}
    self._base_hashes: dict[str, str] = {}
    self._next_id = 0
    self.on_episode_end: Callable[[], None] | None = None
    # antihack.judge_async: True leaves the verdicts out when `run` returns (the caller
    # overlaps them with other work and calls `resolve_judge` before training on the
    # episodes); False resolves them at the end of `run`, so its episodes are final.
    self.defer_judge = False

  def set_model_info(self, checkpoint: str, step: int, temperature: float | None = None) -> None:
    self.model_info = {"checkpoint": checkpoint, "step": int(step)}
    if temperature is not None:
      self.sampling_info["temperature"] = float(temperature)

  # -- public -----------------------------------------------------------------------------------
  def run(self, tasks: Sequence[Any], group_size: int = 1, group_ids: Sequence[int] | None = None
          ) -> tuple[list[Episode], dict[str, float]]:
    """Runs `group_size` episodes of every task; returns episodes (task order) and metrics.
    `group_ids`: each task's group id (default its index; a process running its share of a
    larger task list passes the tasks' indices in that list)."""
    if group_size < 1:
      raise ValueError(f"group_size must be >= 1, got {group_size}")
    if not tasks:
      return [], {}
    if group_ids is None:
      group_ids = range(len(tasks))
    elif len(group_ids) != len(tasks):
      raise ValueError(f"{len(group_ids)} group ids for {len(tasks)} tasks")
    t0 = time.perf_counter()
    # Episode ids are per rollout (0..N-1), so a policy that keys state or randomness on them
    # behaves the same in a resumed run as in an uninterrupted one.
    self._next_id = 0
    runs = [self._new_run(task, int(gi)) for gi, task in zip(group_ids, tasks) for _ in range(group_size)]
    live = self.limits.max_live_episodes or len(runs)
    begin = getattr(self.policy, "begin", None)
    if begin is not None:
      begin(min(live, len(runs)))
    by_id = {r.id: r for r in runs}
    done: dict[int, Episode] = {}
    self._gen_intervals: list[tuple[float, float]] = []
    self._job_intervals: list[tuple[float, float]] = []
    tool_latencies: list[float] = []
    grade_latencies: list[float] = []
    batch_sizes: list[int] = []
    ready: collections.deque[int] = collections.deque()
    pending: dict[futures.Future, tuple[str, int, float]] = {}
    waiting_tool = 0  # episodes whose session is opening or whose tool call is running

    # Tool calls sit on generation's critical path; final grading is background work. Separate
    # pools keep a queue of gradings from delaying the next turn's observations.
    with futures.ThreadPoolExecutor(max_workers=self.limits.num_workers,
                                    thread_name_prefix="rollout-tools") as tool_pool, \
         futures.ThreadPoolExecutor(max_workers=self.limits.num_workers,
                                    thread_name_prefix="rollout-grading") as grading_pool:
      def submit(kind: str, run: _Run, fn: Callable[[], Any]) -> None:
        pool = grading_pool if kind == "final" else tool_pool
        pending[pool.submit(self._timed, fn)] = (kind, run.id, time.perf_counter())

      # Episodes past the live limit wait here; each finished one lets the next open.
      queued = collections.deque(runs)

      def admit() -> int:
        started = 0
        while queued and len(queued) > len(runs) - len(done) - live:
          run = queued.popleft()
          submit("open", run, lambda run=run: self._open(run))
          started += 1
        return started

      waiting_tool += admit()

      try:
        self._loop(runs, by_id, done, ready, pending, submit, waiting_tool, tool_latencies,
                   grade_latencies, batch_sizes, admit)
      except BaseException:
        # A policy failure (or an interrupt) aborts the rollout: free every sandbox first.
        for fut in pending:
          fut.cancel()
        futures.wait(list(pending))
        for run in runs:
          if run.session is not None:
            try:
              run.session.close()
            except Exception:  # pylint: disable=broad-except
              pass
        raise

    wall = time.perf_counter() - t0
    episodes = [done[r.id] for r in runs]
    judge_metrics = {} if self.defer_judge else self.resolve_judge(episodes)
    metrics = self._metrics(episodes, wall, tool_latencies, grade_latencies, batch_sizes)
    metrics.update(judge_metrics)
    return episodes, metrics

  def resolve_judge(self, episodes: Sequence[Episode]) -> dict[str, float]:
    """Applies the asynchronous judge's verdicts to `episodes` (`Evaluator.resolve_judge`)
    and logs their records, which wait for the verdict; returns the `judge/*` metrics."""
    pending = [e for e in episodes if e.pending_judge is not None]
    metrics = self.evaluator.resolve_judge(pending)
    if self.writer is not None:
      for e in pending:
        self.writer.write(e.record)
    return metrics

  def _loop(self, runs: list[_Run], by_id: dict[int, _Run], done: dict[int, Episode],
            ready: collections.deque, pending: dict, submit: Callable[..., None], waiting_tool: int,
            tool_latencies: list[float], grade_latencies: list[float], batch_sizes: list[int],
            admit: Callable[[], int]) -> None:
    """The scheduling loop: decode ready episodes, dispatch their tools, collect sandbox results;
    `admit()` opens the sandboxes of waiting episodes as others finish (returns how many)."""
    while len(done) < len(runs):
      # 1. Decode for the ready episodes when enough of the batch has caught up.
      if ready and len(ready) >= self.limits.min_ready_fraction * (len(ready) + waiting_tool):
        batch = [by_id[i] for i in ready]
        ready.clear()
        for run in self._decode(batch, batch_sizes):
          self._start_final(run, submit)
        for run in batch:
          action = run.pending_action
          if run.terminated or action is None:
            continue
          if action.type is None:  # malformed call: the error is the observation, no sandbox work
            self._after_observation(run, action, ToolOutcome(action.error or "Error.", ok=False),
                                    ActionCheck(), 0.0)
            if run.terminated:
              self._start_final(run, submit)
            else:
              ready.append(run.id)
            continue
          run.dispatched_at = time.perf_counter()
          submit("tool", run, lambda run=run, action=action: run_action(
              run.executor, self.evaluator, run.task, action, run.context))
          waiting_tool += 1
        continue

      # 2. Otherwise wait for sandbox work.
      if not pending:
        raise RuntimeError("rollout engine stalled: no pending sandbox work and no ready episode")
      completed, _ = futures.wait(list(pending), return_when=futures.FIRST_COMPLETED)
      for fut in completed:
        kind, run_id, submitted_at = pending.pop(fut)
        run = by_id[run_id]
        (start, end), value, error = fut.result()
        self._job_intervals.append((start, end))
        if kind in ("open", "tool"):
          waiting_tool -= 1
        if kind == "open":
          if error is not None:
            run.terminated, run.error = "error", f"sandbox start failed: {error}"
            run.infra_failure = "open"
            self._start_final(run, submit)
          else:
            run.start = time.perf_counter()  # the episode clock starts with its sandbox
            ready.append(run.id)
        elif kind == "tool":
          tool_latencies.append(end - submitted_at)
          action = run.pending_action
          if error is not None:
            run.terminated, run.error = "error", f"sandbox crashed: {error}"
            run.infra_failure = "exec"
            self._record_step(run, action, ToolOutcome(f"Error: {error}", ok=False), ActionCheck(),
                              end - run.dispatched_at)
          else:
            outcome, check = value
            run.exec_time_s += outcome.exec_time_s
            self._after_observation(run, action, outcome, check, end - run.dispatched_at)
          if run.terminated:
            self._start_final(run, submit)
          else:
            ready.append(run.id)
        elif kind == "final":
          grade_latencies.append(end - submitted_at)
          done[run.id] = self._finish(run, value, error)
          self.policy.release([run.id])
          if self.on_episode_end is not None:
            self.on_episode_end()
          waiting_tool += admit()

  # -- steps ------------------------------------------------------------------------------------
  def _new_run(self, task: Any, group_id: int) -> _Run:
    messages = agent_lib.initial_messages(task, self.limits.mode)
    prompt = self.renderer.render(messages, generation_prompt=True)
    tokens = self.renderer.encode(prompt)
    run = _Run(id=self._next_id, task=task, group_id=group_id, messages=messages, tokens=list(tokens),
               mask=[0] * len(tokens), logprobs=[0.0] * len(tokens), new_tokens=list(tokens),
               prompt=prompt, start=time.perf_counter(), context=self.evaluator.new_context(task),
               process_state=self.evaluator.initial_process_state())
    self._next_id += 1
    return run

  @staticmethod
  def _timed(fn: Callable[[], Any]) -> tuple[tuple[float, float], Any, str | None]:
    start = time.perf_counter()
    try:
      value, error = fn(), None
    except Exception as e:  # pylint: disable=broad-except
      # Any sandbox failure ends only its own episode (reason `error`), never the run.
      value, error = None, f"{type(e).__name__}: {e}"
    return (start, time.perf_counter()), value, error

  def _open(self, run: _Run) -> None:
    session = self.open_session(str(run.task.repo_dir), self.evaluator.task_config(run.task))
    run.session = session
    run.executor = ToolExecutor(session, command_timeout_s=self.limits.command_timeout_s,
                                solution_file=agent_lib.solution_file_for(run.task)
                                if self.limits.mode == "single_turn" else None)

  def _decode(self, batch: list[_Run], batch_sizes: list[int]) -> list[_Run]:
    """One batched policy call; returns the episodes that ended before it (budget, timeout)."""
    requests, out_of_budget = [], []
    for run in batch:
      # Room is kept for closing a cut turn with the end-of-turn tokens.
      budget = min(self.limits.max_tokens_per_turn, self.limits.max_tokens_per_trajectory
                   - len(run.tokens) - len(self.renderer.end_of_turn_ids))
      if budget <= 0:
        run.terminated = "max_tokens"
        out_of_budget.append(run)
        continue
      if self._timed_out(run):
        run.terminated = "timeout"
        out_of_budget.append(run)
        continue
      requests.append(ActRequest(
          episode_id=run.id, task=run.task, new_tokens=run.new_tokens, context=run.tokens,
          messages=run.messages, turn=len(run.turn_ends), max_new_tokens=budget,
          turns_left=self.limits.max_turns - len(run.turn_ends), mode=self.limits.mode))
    if not requests:
      return out_of_budget
    start = time.perf_counter()
    results = self.policy.act(requests)
    self._gen_intervals.append((start, time.perf_counter()))
    batch_sizes.append(len(requests))
    if len(results) != len(requests):
      raise RuntimeError(f"policy returned {len(results)} results for {len(requests)} requests")
    live = [r for r in batch if r not in out_of_budget]
    for run, request, result in zip(live, requests, results):
      self._apply_action(run, request, result)
    return out_of_budget

  def _apply_action(self, run: _Run, request: ActRequest, result: ActResult) -> None:
    tokens = list(result.tokens)
    if len(tokens) > request.max_new_tokens:
      raise RuntimeError(f"policy produced {len(tokens)} tokens over the budget {request.max_new_tokens}")
    if len(result.logprobs) != len(tokens):
      raise RuntimeError("policy returned a log-prob per token mismatch")
    if not tokens:
      raise RuntimeError(f"policy returned no tokens for episode {run.id}")
    content_ids, has_stop = self.renderer.strip_stop(tokens)
    text = self.renderer.decode(content_ids)
    run.tokens.extend(tokens)
    run.mask.extend([1] * len(tokens))
    run.logprobs.extend(float(x) for x in result.logprobs)
    run.turn_ends.append(len(run.tokens) - 1)
    closing: list[int] = []
    if not has_stop:
      # The turn ended without the end-of-turn token (cut at the budget, or stopped at a stop
      # sequence such as </tool_call>): close it the way the template does; not policy tokens.
      closing = list(self.renderer.end_of_turn_ids)
      run.tokens.extend(closing)
      run.mask.extend([0] * len(closing))
      run.logprobs.extend([0.0] * len(closing))
    run.messages.append({"role": "assistant", "content": text})
    # The sampler has not seen the closing tokens yet: they lead the next turn's new tokens.
    run.new_tokens = closing
    action = agent_lib.parse_action(text, mode=self.limits.mode)
    if not result.finished and action.type is None:
      action.error = f"{action.error} (Your message was cut at {len(tokens)} tokens.)"
    run.pending_action = action
    run.pending_tokens = len(tokens)

  def _record_step(self, run: _Run, action: Action | None, outcome: ToolOutcome, check: ActionCheck,
                   duration_s: float, observation_tokens: int = 0) -> None:
    run.steps.append({
        "step": len(run.steps), "action_type": action.type if action else None,
        "action_input": dict(action.input) if action else {},
        "observation": outcome.observation, "thought": action.thought if action else "",
        "reward": 0.0, "timestamp": time.time(), "duration_s": round(duration_s, 6),
        "tokens": {"action": run.pending_tokens, "observation": observation_tokens},
        "hack": dict(check.record), "text": action.raw if action else "",
        **({"error": action.error} if action is not None and action.error else {}),
    })

  def _after_observation(self, run: _Run, action: Action, outcome: ToolOutcome, check: ActionCheck,
                         duration_s: float) -> None:
    run.checks.append(check)
    run.turn_rewards.append(self._process_reward(run, action, outcome))
    turns = len(run.turn_ends)
    if check.terminate:
      run.terminated, run.error = "error", f"anti-hack terminate: {check.verdict.reason}"
    elif outcome.submitted or (self.limits.mode == "single_turn"):
      run.terminated = "submit" if outcome.submitted else "max_steps"
    elif turns >= self.limits.max_turns:
      run.terminated = "max_steps"
    elif self._timed_out(run):
      run.terminated = "timeout"
    obs_ids: list[int] = []
    if not run.terminated:
      observation = agent_lib.truncate_observation(outcome.observation, self.limits.observation_max_chars)
      obs_ids = self.renderer.observation_ids(run.messages, observation)
      # The next turn needs room for at least a few tokens; otherwise stop here.
      if len(run.tokens) + len(obs_ids) + 4 > self.limits.max_tokens_per_trajectory:
        run.terminated = "max_tokens"
        obs_ids = []
      else:
        run.messages.append({"role": "tool", "content": observation})
        run.tokens.extend(obs_ids)
        run.mask.extend([0] * len(obs_ids))
        run.logprobs.extend([0.0] * len(obs_ids))
        run.new_tokens = run.new_tokens + list(obs_ids)
    self._record_step(run, action, outcome, check, duration_s, len(obs_ids))
    run.pending_action = None

  def _process_reward(self, run: _Run, action: Action, outcome: ToolOutcome) -> float:
    """This turn's process reward (rl.rewards; 0 unless config.reward.process_rewards)."""
    if outcome.written_path and outcome.compiles is not None:
      run.file_compiles[outcome.written_path] = outcome.compiles
    changes: dict[str, Any] = {"compile_ok": all(run.file_compiles.values())}
    if action.type == "run":
      changes.update(last_command=action.input.get("command", ""), last_output=outcome.observation)
    new_state = run.process_state.after(**changes)
    # `after()` with no changes is the previous state with every earlier command in its history,
    # which is what the repeat-command check compares against.
    reward = float(self.evaluator.scheme.step(run.process_state.after(), new_state))
    run.process_state = new_state
    # A command that ran and exited non-zero (failing tests) is not a tool error.
    tool_ok = outcome.ok or outcome.exit_code is not None
    run.turn_errors.append(action.error is not None or not tool_ok)
    return reward + self.evaluator.scheme.call_penalty(action.error is None, tool_ok)

  def _timed_out(self, run: _Run) -> bool:
    return (self.limits.episode_timeout_s is not None
            and time.perf_counter() - run.start > self.limits.episode_timeout_s)

  @staticmethod
  def _turn_rewards(run: _Run) -> list[float]:
    # One per turn; a turn that ended the episode before its observation earns 0.
    return (run.turn_rewards + [0.0] * len(run.turn_ends))[:len(run.turn_ends)]

  def _start_final(self, run: _Run, submit: Callable[..., None]) -> None:
    submit("final", run, lambda run=run: self._final(run))

  def _final(self, run: _Run) -> dict[str, Any]:
    """Worker: export the workspace, close the session, grade in a fresh sandbox, reward."""
    workdir = tempfile.mkdtemp(prefix="rollout-ws-")
    try:
      if run.session is None:
        return self.evaluator.evaluate(run.task, None, action_checks=run.checks,
                                       turn_rewards=self._turn_rewards(run))
      workspace = os.path.join(workdir, "workspace")
      try:
        if run.terminated != "error":
          run.session.export_workspace(workspace)
      finally:
        try:
          run.session.close()
        except Exception:  # pylint: disable=broad-except
          pass
      if run.terminated == "error":
        return self.evaluator.evaluate(run.task, None, action_checks=run.checks,
                                       turn_rewards=self._turn_rewards(run))
      return self.evaluator.evaluate(run.task, workspace, action_checks=run.checks, steps=run.steps,
                                     context=run.context, turn_rewards=self._turn_rewards(run))
    finally:
      shutil.rmtree(workdir, ignore_errors=True)

  def _finish(self, run: _Run, outcome: dict[str, Any] | None, error: str | None) -> Episode:
    if error is not None:
      run.terminated, run.error = "error", f"grading failed: {error}"
      run.infra_failure = run.infra_failure or "grade"
      outcome = self.evaluator.evaluate(run.task, None, action_checks=run.checks,
                                        turn_rewards=self._turn_rewards(run))
    reward, tests, success = outcome["reward"], outcome["tests"], outcome["success"]
    hack, turn_rewards = outcome["hack"], outcome["turn_rewards"]
    infra_failure = run.infra_failure or outcome.get("infra_failure")
    n_turns = len(run.turn_ends)
    if not turn_rewards or len(turn_rewards) != n_turns:
      turn_rewards = [0.0] * n_turns
    for step, r in zip(run.steps, turn_rewards):
      step["reward"] = float(r)
    duration = time.perf_counter() - run.start
    cached = bool(getattr(outcome.get("report"), "cached", False))  # a GradeCache hit
    truncated = run.terminated in ("max_steps", "max_tokens", "timeout")
    record = {
        "task_id": run.task.id, "task_version": str(run.task.version),
        "base_hash": self._base_hash(run.task), "prompt": run.prompt,
        "model": dict(self.model_info), "sampling": dict(self.sampling_info),
        "steps": run.steps, "final_reward": float(reward), "success": bool(success),
        "tests": tests, "hack": hack, "terminated": run.terminated or "error",
        "duration_s": round(duration, 6), "mode": self.limits.mode, "group_id": run.group_id,
        "episode_id": run.id, "exec_time_s": round(run.exec_time_s, 6),
        "infra_failure": infra_failure,
        **({"error": run.error} if run.error else {}),
        **({"grade_cached": True} if cached else {}),
        **{k: outcome[k] for k in ("mle", "solution") if outcome.get(k)},
    }
    pending_judge = outcome.get("pending_judge")
    if self.writer is not None and pending_judge is None:  # else logged once its verdict is in
      self.writer.write(record)
      # A test hook (rl.killpoints): the trainer's rollouts log records of model step n - 1 in
      # iteration n (evaluations log none).
      killpoints.reach("rollout", self.model_info["step"] + 1)
    return Episode(task_id=run.task.id, group_id=run.group_id, tokens=run.tokens,
                   action_mask=run.mask, sampler_logprobs=run.logprobs, turn_ends=run.turn_ends,
                   turn_rewards=[float(r) for r in turn_rewards], final_reward=float(reward),
                   success=bool(success), terminated=record["terminated"], truncated=truncated,
                   duration_s=duration, exec_time_s=run.exec_time_s, record=record,
                   turn_errors=list(run.turn_errors), infra_failure=infra_failure,
                   pending_judge=pending_judge)

  def _base_hash(self, task: Any) -> str:
    key = f"{task.id}@{task.version}"
    if key not in self._base_hashes:
      self._base_hashes[key] = repo_hash(task.repo_dir)
    return self._base_hashes[key]

  # -- metrics ----------------------------------------------------------------------------------
  def _metrics(self, episodes: list[Episode], wall: float, tool_latencies: list[float],
               grade_latencies: list[float], batch_sizes: list[int]) -> dict[str, float]:
    gen = _union(self._gen_intervals)
    sandbox = _union(self._job_intervals)
    overlap = _intersection_length(gen, sandbox)
    gen_s, sandbox_s = _length(gen), _length(sandbox)
    m: dict[str, float] = {
        "rollout/wall_s": wall,
        "rollout/policy_calls": float(len(batch_sizes)),
        "rollout/batch_size_mean": float(np.mean(batch_sizes)) if batch_sizes else 0.0,
        "perf/generate_s": gen_s,
        "perf/sandbox_busy_s": sandbox_s,
        "perf/overlap_s": overlap,
        # Share of the sandbox's busy time hidden behind generation (1.0 = fully overlapped).
        "perf/overlap_frac": overlap / sandbox_s if sandbox_s > 0 else 0.0,
        # Share of generation time during which sandbox work ran concurrently.
        "perf/overlap_gen_frac": overlap / gen_s if gen_s > 0 else 0.0,
        # Total sandbox job time (jobs on parallel workers add up): the serial cost.
        "perf/sandbox_job_s": float(sum(e - s for s, e in self._job_intervals)),
        "perf/generate_idle_frac": 1.0 - gen_s / wall if wall > 0 else 0.0,
    }
    for name, values in (("tool_latency", tool_latencies), ("grade_latency", grade_latencies)):
      if values:
        m[f"perf/{name}_p50_s"] = float(np.percentile(values, 50))
        m[f"perf/{name}_p90_s"] = float(np.percentile(values, 90))
    m.update(episode_metrics(episodes))
    return m


def _union(intervals: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
  merged: list[list[float]] = []
  for s, e in sorted(intervals):
    if merged and s <= merged[-1][1]:
      merged[-1][1] = max(merged[-1][1], e)
    else:
      merged.append([s, e])
  return [(s, e) for s, e in merged]


def _length(intervals: Sequence[tuple[float, float]]) -> float:
  return float(sum(e - s for s, e in intervals))


def _intersection_length(a: Sequence[tuple[float, float]], b: Sequence[tuple[float, float]]) -> float:
  total, i, j = 0.0, 0, 0
  while i < len(a) and j < len(b):
    lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
    if hi > lo:
      total += hi - lo
    if a[i][1] < b[j][1]:
      i += 1
    else:
      j += 1
  return total


# --------------------------------------------------------------------------------------------
# Replay and grading of logged trajectories (scripts/grade.py, scripts/replay.py).

_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:s|sec|seconds|ms)\b")
_HEX_ADDR = re.compile(r"0x[0-9a-f]{6,}")


def normalize_observation(text: str) -> str:
  """Masks run-to-run noise (durations, object addresses) before comparing observations."""
  return _HEX_ADDR.sub("0x?", _DURATION.sub("<t>", text))


def logged_form(observation: str, step: Mapping[str, Any]) -> str:
  """`observation` cut the way the trajectory log cut the step's original one."""
  limit = step.get("observation_log_max_chars")
  return agent_lib.truncate_observation(observation, int(limit)) if limit else observation


def replay_record(record: Mapping[str, Any], task: Any, evaluator: Evaluator, *,
                  open_session: Callable[[str, Any], Any] | None = None,
                  command_timeout_s: float | None = None, mode: str | None = None,
                  strict: bool = False) -> dict[str, Any]:
  """Re-runs a record's actions in a fresh sandbox, grades the result and compares.

  Returns {"task_id", "reward", "logged_reward", "tests", "hack", "success",
  "differences": [{"step", "field", "logged", "replayed"}]}; `strict` compares observations
  without masking durations.
  """
  if record.get("task_id") != task.id:
    raise ValueError(f"record is for task {record.get('task_id')!r}, not {task.id!r}")
  open_session = open_session or default_open_session
  mode = mode or record.get("mode", "multi_turn")
  timeout = command_timeout_s or float(evaluator.sandbox_config.exec_timeout_s)
  context = evaluator.new_context(task)
  checks: list[ActionCheck] = []
  differences: list[dict[str, Any]] = []
  with tempfile.TemporaryDirectory(prefix="replay-") as tmp:
    workspace = os.path.join(tmp, "workspace")
    crashed = ""
    session = open_session(str(task.repo_dir), evaluator.task_config(task))
    try:
      executor = ToolExecutor(session, command_timeout_s=timeout,
                              solution_file=agent_lib.solution_file_for(task) if mode == "single_turn" else None)
      for step in record.get("steps", []):
        action_type = step.get("action_type")
        if action_type is None:
          continue  # a malformed call: nothing ran, the error text is not sandbox output
        action = Action(action_type, dict(step.get("action_input") or {}), step.get("thought", ""), "")
        try:
          outcome, check = run_action(executor, evaluator, task, action, context)
        except SandboxCrash as e:
          crashed = str(e)
          break
        checks.append(check)
        observation = outcome.observation
        logged = step.get("observation", "")
        a, b = logged_form(observation, step), logged
        if not strict:
          a, b = normalize_observation(a), normalize_observation(b)
        if a != b:
          differences.append({"step": step.get("step"), "field": "observation", "logged": logged,
                              "replayed": logged_form(observation, step)})
        logged_hack = bool((step.get("hack") or {}).get("flagged"))
        if logged_hack != check.flagged:
          differences.append({"step": step.get("step"), "field": "hack", "logged": logged_hack,
                              "replayed": check.flagged})
        if check.terminate:
          break
      if not crashed and not any(c.terminate for c in checks):
        session.export_workspace(workspace)
    finally:
      session.close()
    graded = os.path.isdir(workspace) and record.get("terminated") != "error"
    outcome = evaluator.evaluate(task, workspace if graded else None, action_checks=checks,
                                 steps=record.get("steps", []), context=context)
  logged_reward = float(record.get("final_reward", 0.0))
  if abs(outcome["reward"] - logged_reward) > 1e-9:
    differences.append({"step": None, "field": "final_reward", "logged": logged_reward,
                        "replayed": outcome["reward"]})
  return {"task_id": task.id, "reward": outcome["reward"], "logged_reward": logged_reward,
          "tests": outcome["tests"], "hack": outcome["hack"], "success": outcome["success"],
          "differences": differences, **({"error": crashed} if crashed else {})}


def grade_workspace(task: Any, workspace_dir: str | os.PathLike, evaluator: Evaluator) -> dict[str, Any]:
  """Grades a directory as is (fresh sandbox, pristine hidden tests, final-diff rules)."""
  if not os.path.isdir(workspace_dir):
    raise FileNotFoundError(f"workspace directory {str(workspace_dir)!r} does not exist")
  outcome = evaluator.evaluate(task, str(workspace_dir))
  return {"task_id": task.id, "reward": outcome["reward"], "tests": outcome["tests"],
          "hack": outcome["hack"], "success": outcome["success"]}


def load_config(spec: str | None = None) -> Any:
  """A config from `path/to/config.py[:arg]` (its get_config(arg)), or the default config."""
  import importlib.util  # pylint: disable=import-outside-toplevel
  if not spec:
    from configs import default  # pylint: disable=import-outside-toplevel
    return default.get_config()
  path, _, arg = spec.partition(":")
  if not os.path.isfile(path):
    raise FileNotFoundError(f"config file {path!r} does not exist")
  module_spec = importlib.util.spec_from_file_location("_rollout_config", path)
  module = importlib.util.module_from_spec(module_spec)
  module_spec.loader.exec_module(module)
  return module.get_config(arg or None)


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
    only_successful: drop failed or hack-flagged records.
  """
  from rl import trajectory as trajectory_lib  # pylint: disable=import-outside-toplevel
  from rl.policies import tool_call_text  # pylint: disable=import-outside-toplevel
  if isinstance(records, (str, os.PathLike)):
    records = trajectory_lib.read_trajectories(records)
  by_id = {t.id: t for t in tasks} if tasks is not None else None
  episodes = []
  eot = list(renderer.end_of_turn_ids)
  for record in records:
    if by_id is not None and record["task_id"] not in by_id:
      continue
    if only_successful and (not record.get("success") or (record.get("hack") or {}).get("flagged")):
      continue
    task = by_id.get(record["task_id"]) if by_id is not None else None
    record_mode = record.get("mode", mode)
    messages = (agent_lib.initial_messages(task, record_mode) if task is not None
                else [{"role": "system", "content": ""}, {"role": "user", "content": ""}])
    tokens = renderer.encode(record["prompt"])
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
        observation = agent_lib.truncate_observation(step.get("observation", ""), observation_max_chars)
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
