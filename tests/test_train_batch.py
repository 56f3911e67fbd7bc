"""make_train_batch, the typed boundary between a rollout and the update, on arrays alone (no
trainer, no model): each per-token decision it owns, and several processes' rows (threads that
exchange through a barrier, as the processes' collectives do) giving the one-process batch."""

import threading
import types

import numpy as np
import pytest

from rl.algo import advantages as adv
from rl.algo import losses
from rl.algo.batch import AlgoSettings, RowExchange, TrainBatch, make_train_batch
from rl.algo.batching import episodes_to_batch
from rl.registry import ADVANTAGE_ESTIMATORS

GAE = dict(advantage_estimator="gae", gamma=1.0, lam=0.9, value_lam=0.9, whiten_advantages=True,
           discount_per="turn", truncation="terminal", norm_constant=64.0)


def _episode(group, rng, *, success, errors=(False, False), reward=None):
  """A two-turn episode: prompt, action, observation, action (and its end-of-turn token)."""
  mask = [0, 0, 0, 1, 1, 1, 0, 0, 1, 1]
  n = len(mask)
  return types.SimpleNamespace(
      task_id=f"t{group}", group_id=group, tokens=list(rng.integers(5, 50, n)), action_mask=mask,
      sampler_logprobs=list(-rng.random(n)), turn_ends=[5, 9], turn_rewards=[0.0, 0.0],
      final_reward=float(success) if reward is None else reward, success=success, turn_errors=list(errors),
      truncated=False, exec_time_s=0.0)


def _episodes(seed=0):
  rng = np.random.default_rng(seed)
  return [_episode(0, rng, success=True), _episode(0, rng, success=False, errors=(True, False)),
          _episode(1, rng, success=False), _episode(1, rng, success=True, reward=0.5)]


def _scored(batch, seed=1):
  rng = np.random.default_rng(seed)
  B, T = batch.tokens.shape
  logprobs = -rng.random((B, T)).astype(np.float32)
  return {"logprobs": logprobs, "full_logprobs": logprobs - 0.01, "values": rng.random((B, T)).astype(np.float32),
          "ref_logprobs": logprobs - rng.random((B, T)).astype(np.float32) * 0.1,
          "entropy": rng.random((B, T)).astype(np.float32)}


def _make(episodes, settings, *, kl_coef=0.0, durations=None, scored=None):
  batch = episodes_to_batch(episodes, pad_multiple=8)
  scored = _scored(batch) if scored is None else scored
  durations = np.ones(len(episodes), np.float32) if durations is None else durations
  return batch, scored, make_train_batch(batch, scored, settings=settings, kl_coef=kl_coef, episodes=episodes,
                                         durations=durations)


def test_gae_batch_is_the_estimator_on_the_rollout():
  episodes = _episodes()
  batch, scored, (train, metrics) = _make(episodes, AlgoSettings(**GAE))
  settings = AlgoSettings(**GAE)
  want_a, want_r = ADVANTAGE_ESTIMATORS.get("gae")(
      {"mask": batch.action_mask, "scores": batch.scores, "token_rewards": batch.turn_rewards,
       "group_ids": batch.group_ids, "truncated": batch.truncated, "values": scored["values"]},
      **settings.estimator_options())
  np.testing.assert_allclose(train.advantages, want_a, atol=1e-6)
  np.testing.assert_allclose(train.returns, want_r, atol=1e-6)
  mask = batch.action_mask
  np.testing.assert_array_equal(train.old_logprobs, scored["logprobs"] * mask)
  np.testing.assert_array_equal(train.old_values, scored["values"] * mask)
  # The sampler's log-probs moved onto the scorer's (truncated) support.
  np.testing.assert_allclose(train.sampler_logprobs, (batch.sampler_logprobs + 0.01) * mask, atol=1e-6)
  assert train.policy_mask is None and np.all(train.token_weights == 1) and np.all(train.sample_weights == 1)
  assert metrics == {"adv/truncated_frac": 0.0, "adv/truncation_bootstrapped": 0.0}
  assert set(train.arrays()) == {"tokens", "valid", "mask", "advantages", "returns", "old_logprobs", "old_values",
                                 "ref_logprobs", "sampler_logprobs", "token_weights", "sample_weights",
                                 "has_sampler"}


def test_kl_in_the_reward_lowers_every_action_token_reward():
  episodes = _episodes()
  settings = AlgoSettings(**dict(GAE, kl_in="reward", kl_kind="k1", whiten_advantages=False, lam=1.0,
                                 value_lam=1.0))
  batch, scored, (train, metrics) = _make(episodes, settings, kl_coef=0.5)
  kl = np.asarray(losses.kl_penalty(scored["logprobs"], scored["ref_logprobs"], "k1")) * batch.action_mask
  want, _ = ADVANTAGE_ESTIMATORS.get("gae")(
      {"mask": batch.action_mask, "scores": batch.scores, "token_rewards": batch.turn_rewards - 0.5 * kl,
       "group_ids": batch.group_ids, "truncated": batch.truncated, "values": scored["values"]},
      **settings.estimator_options())
  np.testing.assert_allclose(train.advantages, want, atol=1e-6)
  assert metrics["kl/reward_kl_mean"] == pytest.approx(kl.sum() / batch.action_mask.sum(), rel=1e-6)


def test_error_masking_leaves_the_turns_after_a_failed_episodes_first_error_out_of_the_policy():
  episodes = _episodes()
  settings = AlgoSettings(**dict(GAE, error_masking="after_error"))
  batch, _, (train, metrics) = _make(episodes, settings)
  # Episode 1 failed with an error in its first turn: its second turn (turn id 1) leaves the policy loss.
  second_turn = (batch.turn_ids[1] == 1) & (batch.action_mask[1] > 0)
  assert second_turn.any()
  assert np.all(train.policy_mask[1][second_turn] == 0) and np.all(train.advantages[1][second_turn] == 0)
  np.testing.assert_array_equal(train.mask, batch.action_mask)  # the critic keeps every action token
  np.testing.assert_array_equal(train.policy_mask[[0, 2, 3]], batch.action_mask[[0, 2, 3]])
  assert metrics["adv/error_masked_fraction"] == pytest.approx(second_turn.sum() / batch.action_mask.sum())


def test_sign_scaling_importance_weights_entropy_selection_and_duration_weights():
  episodes = _episodes()
  base = AlgoSettings(**dict(GAE, whiten_advantages=False))
  _, _, (plain, _) = _make(episodes, base)
  settings = AlgoSettings(**dict(GAE, whiten_advantages=False, positive_advantage_scale=1.0,
                                 negative_advantage_scale=0.5, tis_cap=1.005, entropy_token_fraction=0.5,
                                 duration_weight="linear"))
  batch, scored, (train, metrics) = _make(episodes, settings, durations=np.array([1.0, 2.0, 3.0, 6.0], np.float32))
  a = plain.advantages
  np.testing.assert_allclose(train.advantages, np.where(a > 0, a, 0.5 * a), atol=1e-6)
  mask = batch.action_mask
  tis = np.minimum(np.exp(np.clip(scored["full_logprobs"] - batch.sampler_logprobs, -20, 20)), 1.005) * mask + (1 - mask)
  keep = adv.high_entropy_token_weights(scored["entropy"], mask, 0.5)
  np.testing.assert_allclose(train.token_weights, tis * keep, atol=1e-6)
  assert metrics["adv/entropy_kept_fraction"] == pytest.approx(((keep > 0) * mask).sum() / mask.sum())
  np.testing.assert_allclose(train.sample_weights, [1 / 3, 2 / 3, 1.0, 2.0], atol=1e-6)  # dt / mean(dt)


def test_padding_rows_weigh_one_and_carry_no_advantage():
  episodes = _episodes()
  batch = episodes_to_batch(episodes, pad_multiple=8)
  padded = batch.select(np.array([0, 1, 2, 3, 0, 0]))
  padded.action_mask[4:] = 0.0
  padded.scores[4:] = 0.0
  padded.group_ids[4:] = [-1, -2]
  train, _ = make_train_batch(padded, _scored(padded), settings=AlgoSettings(**dict(GAE, duration_weight="linear")),
                              kl_coef=0.0, episodes=episodes, durations=np.array([1.0, 2.0, 3.0, 6.0], np.float32))
  assert np.all(train.advantages[4:] == 0) and np.all(train.sample_weights[4:] == 1.0)


def test_shapes_are_checked_once_at_the_boundary():
  episodes = _episodes()
  _, _, (train, _) = _make(episodes, AlgoSettings(**GAE))
  fields = {f: getattr(train, f) for f in train.__dataclass_fields__}
  with pytest.raises(ValueError, match="TrainBatch.advantages has shape"):
    TrainBatch(**{**fields, "advantages": train.advantages[:, :-1]})
  with pytest.raises(ValueError, match="TrainBatch.sample_weights has shape"):
    TrainBatch(**{**fields, "sample_weights": train.sample_weights[:2]})


@pytest.mark.parametrize("estimator", ["gae", "grpo", "rloo"])
def test_two_processes_build_the_one_process_batch(estimator):
  """Each process holds whole groups (tasks p, p + P, ...); whitening, the entropy quantile and the
  duration mean are over every process's rows, so the two halves are the one-process batch."""
  episodes = _episodes()
  settings = AlgoSettings(**dict(GAE, advantage_estimator=estimator, error_masking="after_error",
                                 entropy_token_fraction=0.5, duration_weight="linear", kl_in="reward"))
  durations = np.array([1.0, 2.0, 3.0, 6.0], np.float32)
  full = episodes_to_batch(episodes, pad_multiple=8)
  scored = _scored(full)
  want, want_metrics = make_train_batch(full, scored, settings=settings, kl_coef=0.1, episodes=episodes,
                                        durations=durations)

  shares = [episodes[:2], episodes[2:]]  # whole groups per process, process order = global order
  barrier, slots, results = threading.Barrier(2), [None, None], [None, None]

  def all_gather(p, tree):
    slots[p] = tree
    barrier.wait()
    both = [slots[0], slots[1]]
    barrier.wait()
    if isinstance(tree, dict):
      return {k: np.concatenate([b[k] for b in both]) for k in tree}
    if isinstance(tree, tuple):
      return tuple(np.concatenate([b[i] for b in both]) for i in range(len(tree)))
    return np.concatenate(both)

  def all_sum(p, d):
    slots[p] = d
    barrier.wait()
    out = {k: slots[0][k] + slots[1][k] for k in d}
    barrier.wait()
    return out

  def process(p):
    rows = slice(2 * p, 2 * p + 2)
    batch = episodes_to_batch(shares[p], pad_multiple=8)
    exchange = RowExchange(gather=lambda tree: all_gather(p, tree), local=lambda x: np.asarray(x)[rows],
                           total=lambda d: all_sum(p, d), row_offset=2 * p, process_index=p)
    results[p] = make_train_batch(batch, {k: v[rows] for k, v in scored.items()}, settings=settings, kl_coef=0.1,
                                  episodes=shares[p], durations=durations, exchange=exchange)

  threads = [threading.Thread(target=process, args=(p,)) for p in range(2)]
  for t in threads:
    t.start()
  for t in threads:
    t.join(timeout=60)
  for name in ("advantages", "returns", "token_weights", "sample_weights", "policy_mask"):
    got = np.concatenate([getattr(results[p][0], name) for p in range(2)])
    np.testing.assert_allclose(got, getattr(want, name), atol=1e-6, err_msg=name)
  for p in range(2):
    assert results[p][1] == pytest.approx(want_metrics)
