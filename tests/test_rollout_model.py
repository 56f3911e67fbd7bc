"""The model policy inside the rollout engine: the sampler's cache holds exactly the episode tokens."""

from __future__ import annotations

import numpy as np
import pytest

from rl.env import actors
from rl.env import tools as tools_lib
from rl.models import init_model, tiny_config
from rl.tokenizer import load_tokenizer, stop_token_ids
from test_rollout_helpers import make_config, make_engine, make_task


def _sampler_and_renderer():
  """A sampler over a random tiny model, stopping at the end of a turn or a tool call."""
  Sampler = pytest.importorskip("rl.env.sampling").Sampler  # pylint: disable=invalid-name
  tokenizer = load_tokenizer()
  model = init_model(tiny_config("test", vocab_size=len(tokenizer)), seed=0)
  sampler = Sampler(model, max_cache_len=512, stop_token_ids=stop_token_ids(tokenizer),
                    stop_sequences=[tokenizer.encode("</tool_call>", add_special_tokens=False)])
  return sampler, tools_lib.ChatRenderer(tokenizer, tool_prompt="compact")


@pytest.mark.slow
def test_model_policy_multi_turn_bookkeeping(tmp_path):
  sampler, renderer = _sampler_and_renderer()

  class RecordingPolicy(actors.ModelPolicy):
    rows_seen: dict[int, int] = {}

    def _row(self, episode_id):
      row = super()._row(episode_id)
      self.rows_seen[episode_id] = row
      return row

  policy = RecordingPolicy(sampler, batch_size=2, temperature=1.0, seed=1)
  tasks = [make_task(tmp_path, i) for i in range(2)]
  config = make_config(max_turns=3, max_tokens_per_turn=12, max_tokens_per_trajectory=512)
  engine = make_engine(config, policy, renderer)
  episodes, metrics = engine.run(tasks, group_size=2)
  assert policy.conv.batch_size == 4 and not policy._rows, "rows grow to the batch and are released"
  for ep in episodes:
    assert ep.terminated in ("max_steps", "max_tokens", "submit"), ep.record
    row = policy.rows_seen[ep.record["episode_id"]]
    history = policy.conv.history[row]
    # The cache saw exactly the episode's tokens (closing tokens of the last turn aside).
    assert ep.tokens[:len(history)] == history
    assert len(history) >= sum(ep.action_mask) + ep.action_mask.index(1)
    lp = np.array(ep.sampler_logprobs)
    mask = np.array(ep.action_mask, bool)
    assert (lp[mask] < 0).all() and (lp[~mask] == 0).all()
    assert all(s["tokens"]["action"] <= 12 for s in ep.record["steps"])
  assert metrics["rollout/policy_calls"] >= 3


@pytest.mark.slow
def test_model_policy_reuses_rows_under_a_live_episode_limit(tmp_path):
  """With agent.max_live_episodes = 2 the sampler keeps two rows; an episode that starts in a
  row freed by a finished one sees only its own tokens in the cache."""
  sampler, renderer = _sampler_and_renderer()

  class SnapshotPolicy(actors.ModelPolicy):
    histories: dict[int, list[int]] = {}

    def release(self, episode_ids):
      for i in episode_ids:
        if i in self._rows:
          self.histories[i] = list(self.conv.history[self._rows[i]])
      super().release(episode_ids)

  policy = SnapshotPolicy(sampler, batch_size=1, temperature=1.0, seed=1)
  tasks = [make_task(tmp_path, i) for i in range(3)]
  config = make_config(max_turns=2, max_tokens_per_turn=12, max_tokens_per_trajectory=512,
                       max_live_episodes=2)
  episodes, _ = make_engine(config, policy, renderer).run(tasks, group_size=2)
  assert len(episodes) == 6 and policy.conv.batch_size == 2 and not policy._rows
  for ep in episodes:
    history = policy.histories[ep.record["episode_id"]]
    assert history and ep.tokens[:len(history)] == history


def test_what_an_episode_samples_does_not_depend_on_which_episodes_share_its_call():
  """Which episodes ask for an action together depends on sandbox timing: each episode's turn
  samples with its own key (seed, rollout, episode id, turn), so grouping changes no token."""
  sampler, _ = _sampler_and_renderer()
  rng = np.random.default_rng(0)
  prompts = {e: rng.integers(5, 4000, size=6 + e).tolist() for e in range(4)}

  def request(e):
    return actors.ActRequest(episode_id=e, task=None, new_tokens=prompts[e], context=prompts[e],
                               messages=[], turn=0, max_new_tokens=10, turns_left=1)

  def sample(groups):
    policy = actors.ModelPolicy(sampler, batch_size=4, temperature=1.0, seed=3)
    policy.begin(4)
    out = {}
    for group in groups:
      for e, result in zip(group, policy.act([request(e) for e in group])):
        out[e] = result.tokens
    return out

  together = sample([[0, 1, 2, 3]])
  assert sample([[2], [3, 0], [1]]) == together
  assert sample([[3, 2, 1, 0]]) == together
  assert len({tuple(t) for t in together.values()}) == 4  # the episodes draw differently
