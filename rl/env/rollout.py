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
import os
import shutil
import tempfile
import time
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from rl import killpoints
from rl.env import tools as tools_lib
from rl.env.actors import ActRequest, ActResult, Policy
from rl.env.episode import Episode, InfraFailure, episode_metrics
from rl.env.tools import Action, ChatRenderer, ToolExecutor, ToolOutcome
from rl.env.trajectory import repo_hash
from rl.outcome.evaluator import ActionCheck, Evaluator, default_open_session, run_action
from rl.tasks.workspace_git import workspace_source


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
  process_state: Any = None  # rl.outcome.rewards.ProcessState after the latest turn
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
    policy: a `rl.env.actors.Policy`.
    renderer: the `ChatRenderer` of the policy's tokenizer.
    open_session: `(workspace_dir, sandbox_config) -> session`; default `sandbox.open_session`.
    evaluator: grading, anti-hack and reward; default `Evaluator(config)`.
    writer: an optional `rl.env.trajectory.TrajectoryWriter` that receives every record.
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
    messages = tools_lib.initial_messages(task, self.limits.mode)
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
    # workspace_source: repo/, or a cleaned copy when its .git holds more than the base commit.
    session = self.open_session(workspace_source(run.task), self.evaluator.task_config(run.task))
    run.session = session
    run.executor = ToolExecutor(session, command_timeout_s=self.limits.command_timeout_s,
                                solution_file=tools_lib.solution_file_for(run.task)
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
    action = tools_lib.parse_action(text, mode=self.limits.mode)
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
      observation = tools_lib.truncate_observation(outcome.observation, self.limits.observation_max_chars)
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
    """This turn's process reward (the evaluator's; 0 unless config.reward.process_rewards), and
    the episode's bookkeeping: which written files compile, whether the turn was an error."""
    if outcome.written_path and outcome.compiles is not None:
      run.file_compiles[outcome.written_path] = outcome.compiles
    reward, run.process_state = self.evaluator.process_reward(run.process_state, action, outcome,
                                                              compile_ok=all(run.file_compiles.values()))
    # A command that ran and exited non-zero (failing tests) is not a tool error.
    tool_ok = outcome.ok or outcome.exit_code is not None
    run.turn_errors.append(action.error is not None or not tool_ok)
    return reward

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
        **{k: outcome[k] for k in ("mle", "solution", "oracle") if outcome.get(k)},
        **({"prompt_origin": {"kind": run.task.prompt_origin, "parent_score": run.task.parent_score}}
           if getattr(run.task, "prompt_origin", "") else {}),
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
