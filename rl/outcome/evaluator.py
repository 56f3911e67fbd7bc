"""What an episode earned, decided in one place: the online anti-hack check of each action, grading
in a fresh sandbox with pristine hidden tests, the final-diff rules, the judge (stage 2), and reward
synthesis (the cheat verdict always wins over the test result). Rollouts, scripts/grade.py and
replay all go through `Evaluator` and `run_action`."""

from __future__ import annotations

import dataclasses
import itertools
import logging
import os
import shutil
import tempfile
import threading
import time
from typing import Any, Callable, Mapping, Sequence


from rl.env import tools as tools_lib
from rl.env.episode import Episode, PendingJudge
from rl.env.tools import Action, ToolExecutor, ToolOutcome


def sandbox_config_from(config: Any) -> Any:
  from sandbox import SandboxConfig  # sandbox never imports rl; rl reaches it only here
  return SandboxConfig.from_mapping(config.sandbox)


def default_open_session(workspace_dir: str, sandbox_config: Any) -> Any:
  from sandbox import open_session
  return open_session(workspace_dir, sandbox_config)


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


class Evaluator:
  """Online action checks, grading in a fresh sandbox, final checks, judge and reward synthesis.

  Uses rl.antihack (stage 1), rl.antihack.judge (stage 2, when `config.antihack.judge` is not "none")
  and rl.outcome.rewards; the cheat verdict always wins over the test result.
  """

  def __init__(self, config: Any, *, sandbox_config: Any = None,
               grade_fn: Callable[..., Any] | None = None, judge_async: bool = False):
    from rl import antihack
    from rl.outcome import rewards  # pylint: disable=import-outside-toplevel
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
      from rl.antihack import judge as judge_lib  # pylint: disable=import-outside-toplevel
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
    self.oracle = None
    if grade_fn is None and bool(config.antihack.get("oracle", False)):
      from rl.outcome.oracle import Oracle  # pylint: disable=import-outside-toplevel
      self.oracle = Oracle(self.sandbox_config, inputs=int(config.antihack.get("oracle_inputs", 24)),
                           tolerance=float(config.antihack.get("oracle_tolerance", 0.0)),
                           timeout_s=float(config.antihack.get("oracle_timeout_s", 30.0)),
                           task_config=self.task_config,
                           replay=str(config.antihack.get("oracle_replay", "auto")),
                           replay_variants=int(config.antihack.get("oracle_replay_variants", 31)))

  def _make_judge(self) -> Any:
    if str(self.config.antihack.judge) == "none":
      return None
    from rl.antihack import judge as judge_lib  # pylint: disable=import-outside-toplevel
    return judge_lib.make_judge(self.config.antihack)

  def initial_process_state(self) -> Any:
    # The initial repo is assumed to compile; the first turn that breaks it is penalised.
    return self._rewards.ProcessState(compile_ok=True)

  def process_reward(self, state: Any, action: Action, outcome: ToolOutcome, *,
                     compile_ok: bool) -> tuple[float, Any]:
    """(this turn's process reward, the process state after it): the reward scheme's step reward
    (rl.outcome.rewards; 0 unless config.reward.process_rewards) plus its tool-call penalty."""
    changes: dict[str, Any] = {"compile_ok": compile_ok}
    if action.type == "run":
      changes.update(last_command=action.input.get("command", ""), last_output=outcome.observation)
    new_state = state.after(**changes)
    # `after()` with no changes is the previous state with every earlier command in its history,
    # which is what the repeat-command check compares against.
    reward = float(self.scheme.step(state.after(), new_state))
    tool_ok = outcome.ok or outcome.exit_code is not None  # a non-zero exit is not a tool error
    return reward + self.scheme.call_penalty(action.error is None, tool_ok), new_state

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
    editable = getattr(task, "grading_editable", ())
    if editable:
      extra["editable"] = editable
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

  def check_oracle(self, task: Any, workspace_dir: str, report: Any) -> Any:
    """The differential oracle on an episode that passed every hidden test; None when the
    oracle is off or the episode failed a test (a partial fix disagrees with the reference by
    nature, and a partial-credit reward must not become a cheat verdict)."""
    if self.oracle is None or not self._rewards.all_passed(report):
      return None
    return self.oracle.check(task, workspace_dir)

  def _oracle_verdict(self, oracle: Any) -> Any:
    hit = self._antihack.RuleHit("O001-oracle-disagreement", "high", "oracle", oracle.reason, "held-out inputs")
    return self._antihack.Verdict(flagged=True, stage="oracle", rules=(hit.rule_id,), severity="high",
                                  reason=f"[{hit.rule_id}] {oracle.reason}", hits=(hit,),
                                  flagging_rules=(hit.rule_id,))

  def grade_mle(self, task: Any, workspace_dir: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Runs an MLE task's program in a fresh sandbox and grades its submission on the host.

    Returns a report-shaped dict (one "test": a valid submission) and the `mle` reward context.
    """
    from rl.env import instrumentation  # pylint: disable=import-outside-toplevel
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
    oracle_record = None
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
        oracle = self.check_oracle(task, workspace_dir, report)
        if oracle is not None and oracle.applicable:
          oracle_record = oracle.to_dict()
          if oracle.flagged:
            verdicts.append(self._oracle_verdict(oracle))
      # Every entry of both trees, unreadable ones (symlinks, oversized files) as markers: the
      # rules judge what they cannot read instead of never seeing it.
      initial = self._antihack.diff.read_workspace(str(task.repo_dir))
      final = self._antihack.diff.read_workspace(str(workspace_dir))
      target = tools_lib.solution_file_for(task)
      if isinstance(final.get(target), str) and self._keep_solution(task):  # for the self-improvement buffer
        solution = {"path": target, "code": final[target]}
      if self.rule_engine is not None:
        context = context if context is not None else self.new_context(task)
        verdicts.append(self.rule_engine.check_diff(initial, final, context))
        evidence = (report.get("runtime_evidence") if isinstance(report, Mapping)
                    else getattr(report, "runtime_evidence", None))
        verdicts.append(self.rule_engine.check_runtime(evidence or {}))
      if self.judge is not None:
        from rl.antihack import judge as judge_lib  # pylint: disable=import-outside-toplevel
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
            **({"oracle": oracle_record} if oracle_record else {}),
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
