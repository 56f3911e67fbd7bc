"""The scripted expert's minimal edits: shortest unique `old` strings that make the same fix."""

from __future__ import annotations

import pytest

from rl.env import actors
from rl.env import tools as tools_lib
from rl.env.actors import minimal_edit
from rl.tasks.synthetic.library import LIBRARY
from rl.tasks.synthetic.mutate import enumerate_mutations
from rl.tokenizer import load_tokenizer
from test_rollout_helpers import make_config, make_engine, make_task


def _expert_episodes(tasks, group_size: int, **expert_kwargs):
  """Episodes of a ScriptedExpert (minimal edits, no thoughts, no writes) on `tasks`."""
  renderer = tools_lib.ChatRenderer(load_tokenizer(), tool_prompt="compact")
  config = make_config(max_turns=8, max_tokens_per_turn=256, max_tokens_per_trajectory=4096)
  kwargs = dict(minimal_edits=True, write_prob=0.0, thought_prob=0.0) | expert_kwargs
  expert = actors.ScriptedExpert(renderer, **kwargs)
  episodes, _ = make_engine(config, expert, renderer).run(tasks, group_size=group_size)
  return episodes


@pytest.mark.parametrize("text,old,new,want", [
    ("def f(n):\n    a = 0\n    return n\n", "    return n\n", "    return a\n", ("return n", "return a")),
    ("x = a < b\ny = a < c\n", "x = a < b\n", "x = a <= b\n", ("a < b", "a <= b")),
    ("for i in range(n - 1):\n  pass\n", "for i in range(n - 1):\n", "for i in range(n):\n", ("n - 1", "n")),
    # an insertion: the empty changed span grows to a unique word
    ("    if stack.pop() != p:\n        stack = 1\n", "    if stack.pop() != p:\n",
     "    if not stack or stack.pop() != p:\n", ("if stack", "if not stack or stack")),
])
def test_minimal_edit_examples(text, old, new, want):
  assert minimal_edit(text, old, new) == want


def test_minimal_edit_falls_back_when_old_is_not_unique():
  text = "a = 1\na = 1\n"
  assert minimal_edit(text, "a = 1\n", "a = 2\n") == ("a = 1\n", "a = 2\n")


def test_minimal_edit_fixes_every_planted_bug_of_the_library():
  """For every single-line mutant of every library function, the minimal edit is unique in the
  buggy file, no longer than the full line, and restores exactly the original code."""
  checked = 0
  for fn in LIBRARY:
    for m in enumerate_mutations(fn.code):
      buggy = m.apply(fn.code)
      old, new = m.new_line + "\n", m.old_line + "\n"
      if buggy.count(old) != 1:
        continue
      short_old, short_new = minimal_edit(buggy, old, new)
      assert buggy.count(short_old) == 1, (fn.name, m, short_old)
      assert len(short_old) <= len(old)
      assert buggy.replace(short_old, short_new, 1) == fn.code, (fn.name, m, short_old, short_new)
      checked += 1
  assert checked > 200


def test_expert_with_minimal_edits_solves_tasks(tmp_path):
  tasks = [make_task(tmp_path, i) for i in range(3)]
  episodes = _expert_episodes(tasks, 2, seed=4, explore_prob=0.0, run_prob=0.0)
  assert all(e.success for e in episodes), [e.record["steps"] for e in episodes if not e.success]
  for e in episodes:
    assert [s["action_type"] for s in e.record["steps"]] == ["edit_file", "submit"]


def test_expert_gives_up_in_the_configured_share_of_episodes(tmp_path):
  """`give_up_prob`: the expert still explores, then submits without an edit and fails; the
  other episodes solve their task. 0 (the default) draws nothing, so old plans are unchanged."""
  tasks = [make_task(tmp_path, i) for i in range(4)]
  episodes = _expert_episodes(tasks, 6, seed=1, explore_prob=1.0, run_prob=0.0, give_up_prob=0.5)
  gave_up = [e for e in episodes if "edit_file" not in [s["action_type"] for s in e.record["steps"]]]
  assert 4 <= len(gave_up) <= 20, len(gave_up)  # 24 draws at p = 0.5
  for e in episodes:
    actions = [s["action_type"] for s in e.record["steps"]]
    assert actions[:2] == ["list_files", "read_file"] and actions[-1] == "submit", actions
    assert e.success == ("edit_file" in actions), actions
  episodes = _expert_episodes(tasks, 6, seed=1, explore_prob=1.0, run_prob=0.0)
  assert all(e.success for e in episodes)


def test_expert_mistakes_are_recovered_and_left_out_of_the_sft_loss(tmp_path):
  """`mistake_prob`: every kind of mistake (wrong path, `old` not in the file, broken JSON) fails
  its turn, the episode still solves its task, and the demonstration batch drops exactly the
  failed turn's tokens from the loss while keeping the recovery."""
  from rl.algo import batching
  tasks = [make_task(tmp_path, i) for i in range(4)]
  episodes = _expert_episodes(tasks, 6, seed=2, explore_prob=0.0, run_prob=0.0, mistake_prob=1.0)
  assert all(e.success for e in episodes), [e.record["steps"] for e in episodes if not e.success]
  seen = set()
  for e in episodes:
    actions = [s["action_type"] for s in e.record["steps"]]
    assert e.turn_errors.count(True) == 1 and e.turn_errors[0], (actions, e.turn_errors)
    if actions[:2] == ["read_file", "list_files"]:
      seen.add("wrong_path")
    elif actions[:2] == ["edit_file", "read_file"]:
      seen.add("old_not_found")
    elif actions[0] is None:
      seen.add("malformed")
    assert actions[-2:] == ["edit_file", "submit"], actions
  assert seen == set(actors.MISTAKES), seen
  batch = batching.episodes_to_batch(episodes, pad_multiple=64)
  keep = batching.error_turn_keep(episodes, batch.turn_ids, "error_turns")
  for i in range(len(episodes)):
    acts = batch.action_mask[i] > 0
    first_turn = acts & (batch.turn_ids[i] == 0)
    assert first_turn.any() and (keep[i][first_turn] == 0).all()
    assert (keep[i][acts & (batch.turn_ids[i] > 0)] == 1).all()
  episodes = _expert_episodes(tasks, 2, seed=2, explore_prob=0.0, run_prob=0.0)
  assert all(not any(e.turn_errors) for e in episodes)


def test_expert_read_prob_overrides_explore_prob_for_reading(tmp_path):
  """`read_prob`: the expert reads the file it edits in that share of episodes, whatever
  `explore_prob` says about listing; unset, reading follows `explore_prob`."""
  tasks = [make_task(tmp_path, i) for i in range(3)]
  for explore, read, want in [(0.0, 1.0, ["read_file", "edit_file", "submit"]),
                              (1.0, 0.0, ["list_files", "edit_file", "submit"]),
                              (1.0, None, ["list_files", "read_file", "edit_file", "submit"])]:
    episodes = _expert_episodes(tasks, 2, seed=5, explore_prob=explore, run_prob=0.0, read_prob=read)
    assert all(e.success for e in episodes)
    assert all([s["action_type"] for s in e.record["steps"]] == want for e in episodes), (explore, read)
