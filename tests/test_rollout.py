"""Rollout engine tests: scripted expert end to end, token bookkeeping, limits, bad input, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rl.env import actors
from rl.env import episode as episode_lib
from rl.env import rollout
from rl.env import tools as tools_lib
from rl.env import trajectory as trajectory_lib
from rl.tokenizer import load_tokenizer
from sandbox import SandboxError
from test_rollout_helpers import host_session, make_config, make_engine, make_task


@pytest.fixture(scope="module")
def renderer():
  return tools_lib.ChatRenderer(load_tokenizer(), tool_prompt="compact")


@pytest.fixture(scope="module")
def tasks(tmp_path_factory):
  root = tmp_path_factory.mktemp("tasks")
  return [make_task(root, i) for i in range(4)]


def check_bookkeeping(ep: episode_lib.Episode, renderer: tools_lib.ChatRenderer) -> None:
  n = len(ep.tokens)
  assert len(ep.action_mask) == len(ep.sampler_logprobs) == n
  assert all(m in (0, 1) for m in ep.action_mask)
  assert all(lp == 0.0 for lp, m in zip(ep.sampler_logprobs, ep.action_mask) if m == 0)
  assert len(ep.turn_ends) == len(ep.turn_rewards) == len(ep.record["steps"])
  assert ep.turn_ends == sorted(ep.turn_ends) and all(ep.action_mask[i] == 1 for i in ep.turn_ends)
  # Every action span ends at a turn end; tokens after it up to the next action are not policy's.
  for i, end in enumerate(ep.turn_ends):
    nxt = ep.turn_ends[i + 1] if i + 1 < len(ep.turn_ends) else n
    after = ep.action_mask[end + 1:nxt]
    first_action = after.index(1) if 1 in after else len(after)
    assert all(m == 0 for m in after[:first_action])
  assert sum(s["tokens"]["action"] for s in ep.record["steps"]) == sum(ep.action_mask)


def test_scripted_expert_solves_tasks_in_groups(tasks, renderer):
  config = make_config(max_turns=8, max_tokens_per_turn=256, max_tokens_per_trajectory=4096)
  engine = make_engine(config, actors.ScriptedExpert(renderer, seed=1), renderer)
  episodes, metrics = engine.run(tasks, group_size=3)
  assert len(episodes) == 12
  assert [e.group_id for e in episodes] == [g for g in range(4) for _ in range(3)]
  for ep in episodes:
    assert ep.terminated == "submit", (ep.record.get("error"), ep.record["steps"])
    assert ep.success and ep.final_reward == 1.0 and not ep.truncated
    assert ep.record["tests"]["passed"] == 1
    check_bookkeeping(ep, renderer)
  assert metrics["rollout/success_rate"] == 1.0
  assert metrics["rollout/policy_calls"] >= 2 and metrics["rollout/batch_size_mean"] > 1
  assert {"perf/overlap_frac", "perf/grade_latency_p50_s", "perf/tool_latency_p90_s"} <= set(metrics)
  kinds = {tuple(s["action_type"] for s in e.record["steps"]) for e in episodes}
  assert len(kinds) > 2, "the expert's trajectories should vary"


@pytest.mark.parametrize("tool_prompt", ["schema", "compact"])
def test_tokens_are_exactly_the_chat_template_rendering(tasks, tool_prompt):
  renderer = tools_lib.ChatRenderer(load_tokenizer(), tool_prompt=tool_prompt)
  config = make_config(max_turns=8, max_tokens_per_turn=256, max_tokens_per_trajectory=4096)
  engine = make_engine(config, actors.ScriptedExpert(renderer, seed=5), renderer)
  [ep], _ = engine.run(tasks[:1])
  messages = tools_lib.initial_messages(tasks[0], "multi_turn")
  for step in ep.record["steps"][:-1]:
    messages.append({"role": "assistant", "content": step["text"]})
    messages.append({"role": "tool", "content": tools_lib.truncate_observation(
        step["observation"], config.agent.observation_max_chars)})
  messages.append({"role": "assistant", "content": ep.record["steps"][-1]["text"]})
  text = renderer.render(messages, generation_prompt=False)
  # The template ends the last assistant turn with "<|im_end|>\n"; the episode stops at the stop token.
  assert renderer.decode(ep.tokens) == text[:-1]
  assert ep.tokens == renderer.encode(text[:-1])


def test_malformed_calls_give_error_observations_and_the_episode_continues(tasks, renderer):
  bad = ["no tool call at all", "<tool_call>{not json}</tool_call>",
         '<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>',
         '<tool_call>{"name": "read_file", "arguments": {}}</tool_call>',
         '<tool_call>{"name": "write_file", "arguments": {"path": "x.bin", "content": "a\\u0000b"}}</tool_call>',
         '<tool_call>{"name": "read_file", "arguments": {"path": "../../etc/passwd"}}</tool_call>',
         '<tool_call>{"name": "edit_file", "arguments": {"path": "pkg/ops.py", "old": "zzz", "new": "y"}}</tool_call>',
         '<tool_call>{"name": "submit", "arguments": {}}</tool_call>']
  policy = actors.CallbackPolicy(renderer, lambda r: bad[r.turn])
  config = make_config(max_turns=10, max_tokens_per_turn=256, max_tokens_per_trajectory=4096)
  [ep], _ = make_engine(config, policy, renderer).run(tasks[:1])
  steps = ep.record["steps"]
  assert ep.terminated == "submit" and len(steps) == len(bad)
  for step in steps[:-1]:
    assert step["observation"].startswith("Error"), step
  assert "not valid JSON" in steps[1]["observation"]
  assert "unknown tool" in steps[2]["observation"]
  assert "missing the argument(s) path" in steps[3]["observation"]
  assert "binary" in steps[4]["observation"]
  assert "not found" in steps[6]["observation"]
  assert ep.final_reward == 0.0 and not ep.success
  assert ep.turn_rewards == [0.0] * len(bad)  # no format penalty unless configured


def test_invalid_call_penalty_charges_only_unusable_messages(tasks, renderer):
  texts = ["no tool call at all", "<tool_call>{not json}</tool_call>",
           '<tool_call>{"name": "read_file", "arguments": {}}</tool_call>',
           '<tool_call>{"name": "edit_file", "arguments": {"path": "pkg/ops.py", "old": "zzz", "new": "y"}}</tool_call>',
           '<tool_call>{"name": "submit", "arguments": {}}</tool_call>']
  config = make_config(max_turns=10, max_tokens_per_turn=256, max_tokens_per_trajectory=4096).unlock()
  config.reward.invalid_call_penalty = -0.1
  [ep], _ = make_engine(config, actors.CallbackPolicy(renderer, lambda r: texts[r.turn]), renderer).run(tasks[:1])
  # Three messages hold no usable call; a well-formed call whose edit fails is not a format error.
  assert ep.turn_rewards == pytest.approx([-0.1, -0.1, -0.1, 0.0, 0.0])
  assert [s["reward"] for s in ep.record["steps"]] == pytest.approx(ep.turn_rewards)


def test_tool_error_penalty_charges_failed_tool_calls_only(tasks, renderer):
  texts = ["<tool_call>{not json}</tool_call>",
           '<tool_call>{"name": "read_file", "arguments": {"path": "no_such_file.py"}}</tool_call>',
           '<tool_call>{"name": "edit_file", "arguments": {"path": "pkg/ops.py", "old": "zzz", "new": "y"}}</tool_call>',
           '<tool_call>{"name": "run", "arguments": {"command": "exit 3"}}</tool_call>',
           '<tool_call>{"name": "list_files", "arguments": {"path": "."}}</tool_call>',
           '<tool_call>{"name": "submit", "arguments": {}}</tool_call>']
  config = make_config(max_turns=10, max_tokens_per_turn=256, max_tokens_per_trajectory=4096).unlock()
  config.reward.invalid_call_penalty = -0.1
  config.reward.tool_error_penalty = -0.05
  [ep], _ = make_engine(config, actors.CallbackPolicy(renderer, lambda r: texts[r.turn]), renderer).run(tasks[:1])
  # Unparseable: the format penalty; missing file and absent `old`: the tool-error penalty; a
  # command that exits non-zero ran fine as far as the tool is concerned.
  assert ep.turn_rewards == pytest.approx([-0.1, -0.05, -0.05, 0.0, 0.0, 0.0])
  assert [s["reward"] for s in ep.record["steps"]] == pytest.approx(ep.turn_rewards)
  assert ep.turn_errors == [True, True, True, False, False, False]  # whatever the penalties


def test_error_masking_keeps_a_failed_episode_up_to_its_first_error(tasks, renderer):
  from rl.algo import batching
  texts = ['<tool_call>{"name": "list_files", "arguments": {"path": "."}}</tool_call>',
           '<tool_call>{"name": "read_file", "arguments": {"path": "no_such_file.py"}}</tool_call>',
           "<tool_call>{not json}</tool_call>",
           '<tool_call>{"name": "submit", "arguments": {}}</tool_call>']
  config = make_config(max_turns=10, max_tokens_per_turn=256, max_tokens_per_trajectory=4096)
  [bad], _ = make_engine(config, actors.CallbackPolicy(renderer, lambda r: texts[r.turn]), renderer).run(tasks[:1])
  [good], _ = make_engine(config, actors.ScriptedExpert(renderer, seed=1), renderer).run(tasks[1:2])
  assert not bad.success and bad.turn_errors == [False, True, True, False] and good.success
  batch = batching.episodes_to_batch([bad, good], pad_multiple=64)
  mask = batch.action_mask
  keep = batching.error_turn_keep([bad, good], batch.turn_ids, "after_error")
  # The failed episode keeps its first two turns (the second made the error), not the rest.
  kept_turns = sorted(set(batch.turn_ids[0][(mask[0] * keep[0]) > 0].tolist()))
  assert kept_turns == [0, 1]
  assert (mask[0] * (1 - keep[0])).sum() > 0
  np.testing.assert_array_equal(keep[1], 1.0)  # a success is kept whole
  np.testing.assert_array_equal(batching.error_turn_keep([bad, good], batch.turn_ids, "none"), 1.0)
  whole = batching.error_turn_keep([bad, good], batch.turn_ids, "episode")
  np.testing.assert_array_equal(whole[0], 0.0)
  np.testing.assert_array_equal(whole[1], 1.0)
  with pytest.raises(ValueError, match="error masking must be one of"):
    batching.error_turn_keep([bad], batch.turn_ids[:1], "sometimes")


def test_batch_padding_to_an_agreed_shape():
  """What a process pads its rows to when several processes share a batch: a longer length
  (padding neither valid nor an action), and one blank row when it has no episode."""
  from types import SimpleNamespace

  from rl.algo import batching
  episode = SimpleNamespace(task_id="t", group_id=0, tokens=[5, 6, 7, 8], action_mask=[0, 0, 1, 1],
                            sampler_logprobs=[0.0, 0.0, -1.0, -2.0], turn_ends=[3], turn_rewards=[0.5],
                            final_reward=1.0, success=True, exec_time_s=0.1, truncated=False)
  batch = batching.episodes_to_batch([episode], pad_id=1, pad_multiple=8)
  longer = batching.pad_length(batch, 16, pad_id=1)
  assert longer.tokens.shape == (1, 16) and (longer.tokens[0, 8:] == 1).all()
  for name in ("valid", "action_mask", "sampler_logprobs", "turn_rewards", "turn_ids"):
    np.testing.assert_array_equal(getattr(longer, name)[:, :8], getattr(batch, name))
    assert not getattr(longer, name)[:, 8:].any(), name
  assert batching.pad_length(batch, 8) is batch
  with pytest.raises(ValueError, match="more than 4"):
    batching.pad_length(batch, 4)
  blank = batching.blank_batch(8, pad_id=1)
  assert blank.tokens.shape == (1, 8) and blank.valid.sum() == 2 and not blank.action_mask.any()
  assert blank.lengths.tolist() == [2] and blank.group_ids.tolist() == [-1]


def test_run_takes_the_tasks_group_ids(tasks, renderer):
  """A process running its share of an iteration's tasks passes their indices in the whole list."""
  config = make_config(max_turns=3, max_tokens_per_turn=256, max_tokens_per_trajectory=4096)
  engine = make_engine(config, actors.ScriptedExpert(renderer, seed=1), renderer)
  episodes, _ = engine.run(tasks[:2], group_size=2, group_ids=[1, 3])
  assert [e.group_id for e in episodes] == [1, 1, 3, 3]
  assert [e.record["group_id"] for e in episodes] == [1, 1, 3, 3]
  with pytest.raises(ValueError, match="1 group ids for 2 tasks"):
    engine.run(tasks[:2], group_ids=[0])


def test_max_steps_and_max_tokens_limits(tasks, renderer):
  looping = actors.CallbackPolicy(
      renderer, lambda r: '<tool_call>{"name": "list_files", "arguments": {"path": "."}}</tool_call>')
  config = make_config(max_turns=3, max_tokens_per_turn=64, max_tokens_per_trajectory=4096)
  [ep], metrics = make_engine(config, looping, renderer).run(tasks[:1])
  assert ep.terminated == "max_steps" and ep.truncated and len(ep.turn_ends) == 3
  assert metrics["rollout/terminated_max_steps"] == 1

  config = make_config(max_turns=50, max_tokens_per_turn=64, max_tokens_per_trajectory=500)
  [ep], _ = make_engine(config, looping, renderer).run(tasks[:1])
  assert ep.terminated == "max_tokens" and ep.truncated
  assert len(ep.tokens) <= 500 and len(ep.turn_ends) >= 2
  check_bookkeeping(ep, renderer)


def test_turn_cut_at_token_budget_is_closed_and_masked(tasks, renderer):
  rambling = actors.CallbackPolicy(renderer, lambda r: "word " * 500)
  config = make_config(max_turns=2, max_tokens_per_turn=16, max_tokens_per_trajectory=4096)
  [ep], _ = make_engine(config, rambling, renderer).run(tasks[:1])
  assert ep.terminated == "max_steps"
  first_end = ep.turn_ends[0]
  eot = renderer.end_of_turn_ids
  assert ep.tokens[first_end + 1:first_end + 1 + len(eot)] == eot
  assert ep.action_mask[first_end + 1] == 0
  assert "cut at 16 tokens" in ep.record["steps"][0]["observation"]
  assert sum(ep.action_mask) == 32


def test_sandbox_crash_ends_only_that_episode(tasks, renderer):
  class CrashingSession(tools_lib.UnsandboxedSession):
    def exec(self, command, timeout=None):
      raise RuntimeError("sandbox daemon went away")

  def open_session(ws, cfg):
    return CrashingSession(ws) if "add" in ws else host_session(ws, cfg)

  config = make_config(max_turns=8, max_tokens_per_turn=256, max_tokens_per_trajectory=4096)
  engine = make_engine(config, actors.CallbackPolicy(renderer, lambda r: (
      '<tool_call>{"name": "run", "arguments": {"command": "echo hi"}}</tool_call>' if r.turn == 0
      else '<tool_call>{"name": "submit", "arguments": {}}</tool_call>')), renderer)
  engine.open_session = open_session
  episodes, metrics = engine.run(tasks[:2])
  by_task = {e.task_id: e for e in episodes}
  crashed = by_task[tasks[0].id]
  assert crashed.terminated == "error" and "sandbox daemon went away" in crashed.record["error"]
  assert crashed.final_reward == 0.0
  assert by_task[tasks[1].id].terminated == "submit"
  assert metrics["rollout/terminated_error"] == 1
  # The sandbox broke, not the agent: an infrastructure failure, in the episode and its record.
  assert crashed.infra_failure == crashed.record["infra_failure"] == "exec"
  assert by_task[tasks[1].id].infra_failure is None and by_task[tasks[1].id].record["infra_failure"] is None
  assert metrics["infra/failed_episodes"] == metrics["infra/failed_exec"] == 1
  assert metrics["infra/failed_fraction"] == 0.5 and metrics["infra/failed_open"] == 0


def test_failing_session_start_is_an_error_episode(tasks, renderer):
  def broken(ws, cfg):
    raise OSError("no bubblewrap")

  config = make_config()
  engine = make_engine(config, actors.ScriptedExpert(renderer), renderer)
  engine.open_session = broken
  [ep], metrics = engine.run(tasks[:1])
  assert ep.terminated == "error" and "no bubblewrap" in ep.record["error"] and ep.final_reward == 0.0
  assert ep.infra_failure == "open" and sum(ep.action_mask) == 0
  assert metrics["infra/failed_open"] == 1 and metrics["infra/failed_fraction"] == 1.0


def test_grading_failure_is_an_infra_failure_and_the_agents_own_failures_are_not(tasks, renderer):
  """A grading that raises marks the episode "grade"; a command of the agent's that fails or
  times out is an ordinary outcome (a failure with its reward), never an infrastructure one."""
  def failing_grade(*args, **kwargs):
    raise SandboxError("grading sandbox did not start")

  config = make_config(max_turns=8, max_tokens_per_turn=256, max_tokens_per_trajectory=4096)
  engine = make_engine(config, actors.ScriptedExpert(renderer), renderer)
  engine.evaluator._grade_fn = failing_grade  # pylint: disable=protected-access
  [ep], metrics = engine.run(tasks[:1])
  assert ep.terminated == "error" and "grading failed" in ep.record["error"]
  assert ep.infra_failure == ep.record["infra_failure"] == "grade" and metrics["infra/failed_grade"] == 1

  script = ['<tool_call>{"name": "run", "arguments": {"command": "sleep 5"}}</tool_call>',
            '<tool_call>{"name": "run", "arguments": {"command": "exit 3"}}</tool_call>',
            '<tool_call>{"name": "submit", "arguments": {}}</tool_call>']
  config = make_config(max_turns=8, max_tokens_per_turn=256, max_tokens_per_trajectory=4096)
  engine = make_engine(config, actors.CallbackPolicy(renderer, lambda r: script[r.turn]), renderer)
  engine.limits.command_timeout_s = 0.5
  [ep], metrics = engine.run(tasks[:1])
  assert "timed out" in ep.record["steps"][0]["observation"].lower()
  assert ep.terminated == "submit" and not ep.success and ep.infra_failure is None
  assert metrics["infra/failed_episodes"] == 0


def test_online_antihack_fakes_hidden_test_reads_and_zeroes_reward(tasks, renderer):
  script = ['<tool_call>{"name": "run", "arguments": {"command": "cat tests/check_hidden.py"}}</tool_call>',
            '<tool_call>{"name": "edit_file", "arguments": {"path": "pkg/ops.py", "old": "return a - b", '
            '"new": "return a + b"}}</tool_call>',
            '<tool_call>{"name": "submit", "arguments": {}}</tool_call>']
  policy = actors.CallbackPolicy(renderer, lambda r: script[r.turn])
  config = make_config(max_turns=8, max_tokens_per_turn=256, max_tokens_per_trajectory=4096)
  [ep], metrics = make_engine(config, policy, renderer).run(tasks[:1])
  step0 = ep.record["steps"][0]
  assert step0["hack"]["flagged"] and step0["hack"]["response"] == "fake"
  assert ep.record["tests"]["passed"] == 1, "the fix itself passes the hidden test"
  assert ep.record["hack"]["flagged"] and ep.final_reward == 0.0 and not ep.success
  assert metrics["antihack/flag_rate"] == 1.0

  config.antihack.response = "block"
  [ep], _ = make_engine(config, actors.CallbackPolicy(renderer, lambda r: script[r.turn]),
                        renderer).run(tasks[:1])
  step0 = ep.record["steps"][0]
  assert step0["hack"]["response"] == "block" and step0["observation"].startswith("Error")
  assert ep.terminated == "submit" and ep.final_reward == 0.0

  config.antihack.response = "terminate"
  [ep], _ = make_engine(config, actors.CallbackPolicy(renderer, lambda r: script[r.turn]),
                        renderer).run(tasks[:1])
  assert ep.terminated == "error" and len(ep.record["steps"]) == 1 and ep.final_reward == 0.0


def test_single_turn_mode_writes_the_answer_to_the_solution_file(tmp_path, renderer):
  task = make_task(tmp_path, 2)
  task.metadata["solution_file"] = "pkg/ops.py"
  config = make_config(mode="single_turn", max_tokens_per_turn=512, max_tokens_per_trajectory=4096)
  [ep], _ = make_engine(config, actors.ScriptedExpert(renderer), renderer).run([task])
  assert ep.terminated == "submit" and ep.success, ep.record
  assert ep.record["steps"][0]["action_type"] == "answer"
  assert len(ep.turn_ends) == 1


def test_record_is_json_and_has_model_and_sampling(tasks, renderer):
  config = make_config()
  engine = make_engine(config, actors.ScriptedExpert(renderer), renderer,
                       model_info={"checkpoint": "ckpt/7", "step": 7})
  [ep], _ = engine.run(tasks[:1])
  record = json.loads(json.dumps(ep.record))
  assert record["model"] == {"checkpoint": "ckpt/7", "step": 7}
  assert record["sampling"] == {"temperature": config.sampling.temperature, "top_p": config.sampling.top_p}
  assert record["base_hash"] == trajectory_lib.repo_hash(tasks[0].repo_dir)


def test_limits_reject_bad_config():
  with pytest.raises(ValueError, match="max_turns"):
    rollout.AgentLimits(max_turns=0)
  with pytest.raises(ValueError, match="agent.mode"):
    rollout.AgentLimits(mode="chat")
  with pytest.raises(ValueError, match="max_live_episodes"):
    rollout.AgentLimits(max_live_episodes=-1)


def test_process_rewards_per_turn(tasks, renderer):
  script = ['<tool_call>{"name": "edit_file", "arguments": {"path": "pkg/ops.py", "old": "return a - b", '
            '"new": "return a +"}}</tool_call>',
            '<tool_call>{"name": "run", "arguments": {"command": "echo same"}}</tool_call>',
            '<tool_call>{"name": "run", "arguments": {"command": "echo same"}}</tool_call>',
            '<tool_call>{"name": "submit", "arguments": {}}</tool_call>']
  config = make_config(max_turns=8, max_tokens_per_turn=256, max_tokens_per_trajectory=4096)
  config.reward.scheme = "pass_rate"
  config.reward.process_rewards = True
  [ep], _ = make_engine(config, actors.CallbackPolicy(renderer, lambda r: script[r.turn]),
                        renderer).run(tasks[:1])
  assert ep.turn_rewards == pytest.approx([-0.5, 0.0, -0.1, 0.0])
  assert [s["reward"] for s in ep.record["steps"]] == ep.turn_rewards
  config.reward.process_rewards = False
  [ep], _ = make_engine(config, actors.CallbackPolicy(renderer, lambda r: script[r.turn]),
                        renderer).run(tasks[:1])
  assert ep.turn_rewards == [0.0] * 4


def test_episodes_from_records_rebuild_the_engine_tokens(tasks, renderer, tmp_path):
  from rl.env.trajectory import TrajectoryWriter
  config = make_config(max_turns=8, max_tokens_per_turn=256, max_tokens_per_trajectory=4096)
  with TrajectoryWriter(tmp_path) as writer:
    episodes, _ = make_engine(config, actors.ScriptedExpert(renderer, seed=9), renderer,
                              writer=writer).run(tasks, group_size=2)
  rebuilt = episode_lib.episodes_from_records(str(tmp_path), tasks, renderer,
                                          observation_max_chars=config.agent.observation_max_chars)
  assert len(rebuilt) == len(episodes)
  rebuilt.sort(key=lambda e: e.record["episode_id"])  # the log is in completion order
  for a, b in zip(episodes, rebuilt):
    assert a.tokens == b.tokens and a.action_mask == b.action_mask and a.turn_ends == b.turn_ends
  assert episode_lib.episodes_from_records(str(tmp_path), tasks[:1], renderer) != []
  assert len(episode_lib.episodes_from_records(str(tmp_path), tasks[:1], renderer)) == 2


def test_episode_timeout(tasks, renderer):
  config = make_config(max_turns=8, max_tokens_per_turn=256, max_tokens_per_trajectory=4096,
                       episode_timeout_s=0.3)
  slow = actors.CallbackPolicy(
      renderer, lambda r: '<tool_call>{"name": "run", "arguments": {"command": "sleep 0.6"}}</tool_call>')
  [ep], _ = make_engine(config, slow, renderer).run(tasks[:1])
  assert ep.terminated == "timeout" and ep.truncated and len(ep.turn_ends) == 1


def test_partial_batches_let_fast_episodes_run_ahead(tasks, renderer):
  def script(r):
    if r.turn >= 3:
      return '<tool_call>{"name": "submit", "arguments": {}}</tool_call>'
    command = "sleep 0.6" if r.task.id == tasks[0].id else "true"
    return f'<tool_call>{{"name": "run", "arguments": {{"command": "{command}"}}}}</tool_call>'

  sizes = {}
  for fraction in (1.0, 0.5):
    config = make_config(max_turns=8, min_ready_fraction=fraction)
    episodes, metrics = make_engine(config, actors.CallbackPolicy(renderer, script),
                                    renderer).run(tasks[:2])
    assert all(e.terminated == "submit" for e in episodes)
    sizes[fraction] = metrics["rollout/batch_size_mean"]
  assert sizes[1.0] == 2.0 and sizes[0.5] < 2.0


def test_live_episode_limit_bounds_open_sandboxes(tasks, renderer):
  """With max_live_episodes = 2, at most two sessions are open at any time, every episode still
  runs, and the expert's outcomes are those of the unbounded rollout."""
  import threading

  lock = threading.Lock()
  state = {"open": 0, "peak": 0, "opened": 0}

  class CountingSession(tools_lib.UnsandboxedSession):
    def close(self):
      if not self.closed:
        with lock:
          state["open"] -= 1
      super().close()

  def open_session(ws, cfg):
    del cfg
    with lock:
      state["open"] += 1
      state["opened"] += 1
      state["peak"] = max(state["peak"], state["open"])
    return CountingSession(ws)

  outcomes = {}
  for limit in (0, 2):
    state.update(open=0, peak=0, opened=0)
    config = make_config(max_turns=8, max_tokens_per_turn=256, max_tokens_per_trajectory=4096,
                         max_live_episodes=limit)
    engine = make_engine(config, actors.ScriptedExpert(renderer, seed=3), renderer)
    engine.open_session = open_session
    episodes, _ = engine.run(tasks, group_size=2)
    assert state["opened"] == 8 and state["open"] == 0
    outcomes[limit] = [(e.task_id, e.success, e.terminated) for e in episodes]
    if limit:
      assert state["peak"] == 2
    else:
      assert state["peak"] > 2
  assert outcomes[0] == outcomes[2] and all(ok for _, ok, _ in outcomes[2])


def test_policy_failure_closes_every_session(tasks, renderer):
  sessions = []

  def open_session(ws, cfg):
    sessions.append(host_session(ws, cfg))
    return sessions[-1]

  def fn(r):
    if r.turn == 1:
      raise RuntimeError("model exploded")
    return '<tool_call>{"name": "list_files", "arguments": {}}</tool_call>'

  engine = make_engine(make_config(), actors.CallbackPolicy(renderer, fn), renderer)
  engine.open_session = open_session
  with pytest.raises(RuntimeError, match="model exploded"):
    engine.run(tasks[:2], group_size=2)
  assert len(sessions) == 4 and all(s.closed for s in sessions)


def test_judge_verdict_overrides_passing_tests(tasks, renderer):
  from rl.antihack import judge as judge_lib
  seen = []

  class SuspiciousJudge(judge_lib.Judge):
    name = "fake"

    def _probability(self, judge_input):
      seen.append(judge_input)
      return 0.9, "special-cases the inputs"

  config = make_config(max_turns=8, max_tokens_per_turn=256, max_tokens_per_trajectory=4096)
  engine = make_engine(config, actors.ScriptedExpert(renderer), renderer)
  engine.evaluator.judge = SuspiciousJudge(threshold=0.5)
  [ep], _ = engine.run(tasks[:1])
  assert ep.record["tests"]["passed"] == 1 and ep.final_reward == 0.0 and not ep.success
  hack = ep.record["hack"]
  assert hack["flagged"] and hack["stage"] == "judge" and hack["judge_score"] == pytest.approx(0.9)
  [judge_input] = seen
  assert "return a + b" in judge_input.final_diff and "check_hidden" not in judge_input.final_diff
  assert judge_input.statement == tasks[0].statement and judge_input.steps
  assert ep.infra_failure is None  # a verdict, even a damning one, is not an infrastructure failure


@pytest.mark.parametrize("on_error", ["pass", "flag"])
def test_judge_that_cannot_answer(tasks, renderer, on_error):
  """With judge_on_error="pass" an unjudged episode is an infrastructure failure ("judge"): its
  passing reward was never vetted. With "flag" the configured penalty applies, as before."""
  from rl.antihack import judge as judge_lib

  class BrokenJudge(judge_lib.Judge):
    name = "broken"

    def _probability(self, judge_input):
      raise judge_lib.JudgeHTTPError("HTTP 500 from the judge")

  config = make_config(max_turns=8, max_tokens_per_turn=256, max_tokens_per_trajectory=4096)
  engine = make_engine(config, actors.ScriptedExpert(renderer), renderer)
  engine.evaluator.judge = BrokenJudge(on_error=on_error)
  [ep], metrics = engine.run(tasks[:1])
  assert ep.record["tests"]["passed"] == 1
  if on_error == "pass":
    assert ep.infra_failure == "judge" and metrics["infra/failed_judge"] == 1 and ep.final_reward == 1.0
  else:
    assert ep.infra_failure is None and ep.record["hack"]["flagged"] and ep.final_reward == 0.0
