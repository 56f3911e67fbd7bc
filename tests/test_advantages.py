"""Tests of rl.algo.advantages: hand-computed cases, invariances, and a plain-loop reference."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rl.algo import advantages as adv
from rl.algo.batch import AlgoSettings
from rl.registry import ADVANTAGE_ESTIMATORS

IMPLEMENTATIONS = sorted(adv.GAE_IMPLEMENTATIONS)


def reference_gae(rewards, values, mask, gamma, lam, bootstrap=None, turn_ends=None):
  """GAE written from the published definition, one row and one action token at a time.

  Schulman et al. (2016): A_i = sum_k (gamma lam)^k delta_{i+k}, delta_i = r_i + gamma
  V(s_{i+1}) - V(s_i), over the sequence of action tokens only (observation tokens are
  part of the environment, so the "next state" of an action token is the next action
  token). Per-turn discounting applies gamma and lam only when the next action token
  starts a new turn. A masked position reports the advantage of the next action token
  (zero past the last one), as verl's carry-forward loop does.
  """
  rewards, values, mask = (np.asarray(x, np.float64) for x in (rewards, values, mask))
  batch, length = rewards.shape
  gamma = np.broadcast_to(np.asarray(gamma, np.float64), (batch,))
  lam = np.broadcast_to(np.asarray(lam, np.float64), (batch,))
  out = np.zeros((batch, length))
  for b in range(batch):
    actions = [t for t in range(length) if mask[b, t] == 1]
    adv_at = {}
    following = 0.0
    for i in reversed(range(len(actions))):
      t = actions[i]
      if i + 1 < len(actions):
        next_value = values[b, actions[i + 1]]
      else:
        next_value = 0.0 if bootstrap is None else float(bootstrap[b])
      decays = turn_ends is None or turn_ends[b, t] == 1
      g = gamma[b] if decays else 1.0
      gl = gamma[b] * lam[b] if decays else 1.0
      delta = rewards[b, t] + g * next_value - values[b, t]
      following = delta + gl * following
      adv_at[t] = following
    carried = 0.0
    for t in reversed(range(length)):
      if t in adv_at:
        carried = adv_at[t]
      out[b, t] = carried
  return out, out + values


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_gae_hand_computed_all_actions(impl):
  # gamma=0.9, lam=0.8, V = [1, 2, 3], r = [0, 0, 1]:
  # delta2 = 1 - 3 = -2; delta1 = 0 + 0.9*3 - 2 = 0.7; delta0 = 0 + 0.9*2 - 1 = 0.8
  # A2 = -2; A1 = 0.7 + 0.72*(-2) = -0.74; A0 = 0.8 + 0.72*(-0.74) = 0.2672
  a, r = adv.gae([[0.0, 0.0, 1.0]], [[1.0, 2.0, 3.0]], [[1.0, 1.0, 1.0]], gamma=0.9, lam=0.8,
                 implementation=impl)
  np.testing.assert_allclose(a, [[0.2672, -0.74, -2.0]], atol=1e-6)
  np.testing.assert_allclose(r, [[1.2672, 1.26, 1.0]], atol=1e-6)


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_gae_hand_computed_observation_span(impl):
  # Tokens: prompt, a, a, obs, obs, a, pad. gamma=0.5, lam=1.
  mask = [[0, 1, 1, 0, 0, 1, 0]]
  values = [[9.0, 1.0, 2.0, 7.0, 8.0, 4.0, 5.0]]  # 9, 7, 8, 5 sit on masked tokens
  rewards = [[3.0, 0.0, 0.0, 6.0, 6.0, 1.0, 2.0]]  # rewards on masked tokens are ignored
  # Action chain V = 1, 2, 4 and r = 0, 0, 1:
  # delta(t5) = 1 - 4 = -3; delta(t2) = 0.5*4 - 2 = 0; delta(t1) = 0.5*2 - 1 = 0
  # A(t5) = -3, A(t2) = 0 + 0.5*(-3) = -1.5, A(t1) = 0 + 0.5*(-1.5) = -0.75
  a, _ = adv.gae(rewards, values, mask, gamma=0.5, lam=1.0, implementation=impl)
  np.testing.assert_allclose(a, [[-0.75, -0.75, -1.5, -3.0, -3.0, -3.0, 0.0]], atol=1e-6)


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_gae_per_turn_discount_hand_computed(impl):
  # Two turns of two tokens; gamma=0.5, lam=1 applied only between turns.
  mask = [[1, 1, 0, 1, 1]]
  ends = [[0, 1, 0, 0, 1]]
  values = [[0.0, 0.0, 0.0, 0.0, 0.0]]
  rewards = [[0.0, 0.0, 0.0, 0.0, 8.0]]
  a, _ = adv.gae(rewards, values, mask, gamma=0.5, lam=1.0, turn_ends=ends, implementation=impl)
  # Turn 2 tokens see 8 undiscounted; turn 1 tokens see 8 discounted once.
  np.testing.assert_allclose(a, [[4.0, 4.0, 8.0, 8.0, 8.0]], atol=1e-6)
  per_token, _ = adv.gae(rewards, values, mask, gamma=0.5, lam=1.0, implementation=impl)
  np.testing.assert_allclose(per_token, [[1.0, 2.0, 4.0, 4.0, 8.0]], atol=1e-6)


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_gae_bootstrap(impl):
  # A truncated row bootstraps from the value after its last token: delta = r + gamma V' - V.
  a, _ = adv.gae([[0.0, 0.0]], [[1.0, 2.0]], [[1.0, 1.0]], gamma=1.0, lam=1.0,
                 bootstrap_values=[2.0], implementation=impl)
  np.testing.assert_allclose(a, [[1.0, 0.0]], atol=1e-6)


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_gamma_lam_one_is_reward_to_go_minus_value(impl):
  rng = np.random.default_rng(0)
  mask = (rng.random((4, 40)) < 0.6).astype(np.float32)
  rewards = rng.normal(size=(4, 40)).astype(np.float32)
  values = rng.normal(size=(4, 40)).astype(np.float32)
  a, r = adv.gae(rewards, values, mask, gamma=1.0, lam=1.0, implementation=impl)
  to_go = np.cumsum((rewards * mask)[:, ::-1], axis=1)[:, ::-1]
  on = mask > 0
  np.testing.assert_allclose(np.asarray(a)[on], (to_go - values)[on], atol=1e-4)
  np.testing.assert_allclose(np.asarray(r)[on], to_go[on], atol=1e-4)


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_masked_values_and_rewards_do_not_change_action_advantages(impl):
  rng = np.random.default_rng(1)
  mask = (rng.random((3, 50)) < 0.5).astype(np.float32)
  rewards = rng.normal(size=(3, 50)).astype(np.float32)
  values = rng.normal(size=(3, 50)).astype(np.float32)
  noise = rng.normal(size=(3, 50)).astype(np.float32) * 100 * (1 - mask)
  a1, _ = adv.gae(rewards, values, mask, gamma=0.95, lam=0.9, implementation=impl)
  a2, _ = adv.gae(rewards + noise, values + noise, mask, gamma=0.95, lam=0.9, implementation=impl)
  np.testing.assert_allclose(np.asarray(a1)[mask > 0], np.asarray(a2)[mask > 0], atol=1e-4)


def test_implementations_agree_on_long_rows():
  rng = np.random.default_rng(2)
  shape = (3, 300)  # not a multiple of the chunk size
  mask = (rng.random(shape) < 0.7).astype(np.float32)
  rewards, values = rng.normal(size=shape), rng.normal(size=shape)
  ends = adv.turn_ends_from_mask(mask)
  outs = [adv.gae(rewards, values, mask, gamma=0.99, lam=0.95, turn_ends=ends, implementation=i)[0]
          for i in IMPLEMENTATIONS]
  expected, _ = reference_gae(rewards, values, mask, 0.99, 0.95, turn_ends=ends)
  for out in outs:
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


# A few fixed shapes keep the number of compilations (and the test time) small.
SHAPES = [(1, 1), (2, 7), (3, 24), (2, 130)]


@st.composite
def gae_problem(draw):
  batch, length = draw(st.sampled_from(SHAPES))
  floats = st.floats(-5, 5, allow_nan=False, width=32)
  unit = st.floats(0, 1, width=32)
  arr = lambda elements: np.array(draw(st.lists(elements, min_size=batch * length,
                                                max_size=batch * length)),
                                  np.float32).reshape(batch, length)
  mask = arr(st.sampled_from([0.0, 1.0]))
  rewards, values = arr(floats), arr(floats)
  gamma = np.array(draw(st.lists(unit, min_size=batch, max_size=batch)), np.float32)
  lam = np.array(draw(st.lists(unit, min_size=batch, max_size=batch)), np.float32)
  bootstrap = np.array(draw(st.lists(floats, min_size=batch, max_size=batch)), np.float32)
  per_turn = draw(st.booleans())
  ends = arr(st.sampled_from([0.0, 1.0])) * mask if per_turn else None
  return rewards, values, mask, gamma, lam, bootstrap, ends


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=gae_problem(), impl=st.sampled_from(IMPLEMENTATIONS))
def test_gae_matches_plain_loop_reference(problem, impl):
  rewards, values, mask, gamma, lam, bootstrap, ends = problem
  a, r = adv.gae(rewards, values, mask, gamma=gamma, lam=lam, bootstrap_values=bootstrap,
                 turn_ends=ends, implementation=impl)
  expected_a, expected_r = reference_gae(rewards, values, mask, gamma, lam, bootstrap, ends)
  np.testing.assert_allclose(a, expected_a, rtol=1e-4, atol=1e-3)
  np.testing.assert_allclose(r, expected_r, rtol=1e-4, atol=1e-3)


def test_gae_under_jit():
  fn = jax.jit(lambda r, v, m: adv.gae(r, v, m, gamma=1.0, lam=0.95)[0])
  a = fn(jnp.zeros((2, 5)), jnp.ones((2, 5)), jnp.ones((2, 5)))
  np.testing.assert_allclose(a[:, -1], [-1.0, -1.0], atol=1e-6)


# --- helpers -------------------------------------------------------------------------


def test_place_terminal_reward_and_turn_helpers():
  mask = np.array([[0, 1, 1, 0, 1, 0], [1, 0, 0, 1, 1, 1]], np.float32)
  np.testing.assert_array_equal(adv.last_action_index(mask), [4, 5])
  rewards = adv.place_terminal_reward(np.array([2.0, -1.0]), mask)
  np.testing.assert_array_equal(rewards, [[0, 0, 0, 0, 2, 0], [0, 0, 0, 0, 0, -1]])
  ends = adv.turn_ends_from_mask(mask)
  np.testing.assert_array_equal(ends, [[0, 0, 1, 0, 1, 0], [1, 0, 0, 0, 0, 1]])
  turn_ids = np.array([[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2]])
  np.testing.assert_array_equal(adv.turn_ends_from_turn_ids(turn_ids, mask),
                                [[0, 0, 1, 0, 1, 0], [1, 0, 0, 1, 0, 1]])
  np.testing.assert_array_equal(adv.turn_ends_from_indices([[2, 4], [0, 5]], 6), ends)
  step = adv.place_turn_rewards([[0.5, 1.0], [0.25, 0.0]], ends)
  np.testing.assert_array_equal(step, [[0, 0, 0.5, 0, 1.0, 0], [0.25, 0, 0, 0, 0, 0]])
  with pytest.raises(ValueError, match="row 0 has 1 turn rewards but 2 turn ends"):
    adv.place_turn_rewards([[1.0], [0.0, 0.0]], ends)
  with pytest.raises(ValueError, match="no action token"):
    adv.place_terminal_reward(np.array([1.0]), np.zeros((1, 3)))


def test_adaptive_lambda():
  mask = np.zeros((3, 200), np.float32)
  mask[0, :100] = 1
  mask[1, :10] = 1
  mask[2, :1] = 1
  np.testing.assert_allclose(adv.adaptive_lambda(mask, 0.05), [1 - 1 / 5, 0.0, 0.0], atol=1e-6)
  np.testing.assert_allclose(adv.adaptive_lambda(mask, 1.0), [0.99, 0.9, 0.0], atol=1e-6)


def test_masked_whiten():
  rng = np.random.default_rng(3)
  x = rng.normal(size=(3, 9)).astype(np.float32)
  mask = (rng.random((3, 9)) < 0.6).astype(np.float32)
  mask[0, :2] = 1
  valid = x[mask > 0]
  expected = (x - valid.mean()) / np.sqrt(valid.var(ddof=1) + 1e-8)
  np.testing.assert_allclose(adv.masked_whiten(x, mask), expected, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(adv.masked_whiten(x, mask, shift_mean=False), expected + valid.mean(),
                             rtol=1e-5, atol=1e-5)
  with pytest.raises(ValueError, match="at least 2"):
    adv.masked_whiten(x, np.eye(3, 9, dtype=np.float32)[:1].repeat(3, 0) * [[1], [0], [0]])


def test_grpo_and_drgrpo_hand_computed():
  scores = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 5.0], np.float32)
  groups = np.array([0, 0, 0, 1, 1, 2])
  # Group 0: mean 1/3, std (N-1) = sqrt(1/3); group 1: std 0; group 2 (one member): mean 0, std 1.
  std0 = np.sqrt(((2 / 3) ** 2 + 2 * (1 / 3) ** 2) / 2)
  expected = [(2 / 3) / (std0 + 1e-6), (-1 / 3) / (std0 + 1e-6), (-1 / 3) / (std0 + 1e-6),
              0.0, 0.0, 5.0 / (1 + 1e-6)]
  np.testing.assert_allclose(adv.grpo(scores, groups), expected, rtol=1e-5)
  np.testing.assert_allclose(adv.grpo(scores, groups, normalize_std=False),
                             [2 / 3, -1 / 3, -1 / 3, 0.0, 0.0, 5.0], rtol=1e-5)


def test_rloo_hand_computed():
  scores = np.array([1.0, 0.0, 0.0, 3.0, 1.0, 5.0], np.float32)
  groups = np.array([7, 7, 7, 9, 9, 4])
  np.testing.assert_allclose(adv.rloo(scores, groups), [1.0, -0.5, -0.5, 2.0, -2.0, 5.0], rtol=1e-6)


def test_reinforce_pp_is_whitened_reward_to_go():
  mask = np.array([[1, 1, 0, 1], [1, 1, 1, 0]], np.float32)
  rewards = np.array([[0, 0, 0, 1], [0, 0, 2, 0]], np.float32)
  out = np.asarray(adv.reinforce_pp(rewards, mask, gamma=0.5))
  to_go = np.array([[0.25, 0.5, 0.5, 1.0], [0.5, 1.0, 2.0, 0.0]])
  valid = to_go[mask > 0]
  expected = (to_go - valid.mean()) / np.sqrt(valid.var(ddof=1) + 1e-8) * mask
  np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


# --- registered estimators ---------------------------------------------------------------


def _batch(seed=0, batch=4, length=12):
  rng = np.random.default_rng(seed)
  mask = (rng.random((batch, length)) < 0.7).astype(np.float32)
  mask[:, 0] = 1
  mask[:, -1] = 0  # a truncated row bootstraps from the position after its last action token
  return {
      "mask": mask,
      "values": rng.normal(size=(batch, length)).astype(np.float32),
      "scores": rng.random(batch).astype(np.float32),
      "group_ids": np.arange(batch) // 2,
      "truncated": np.array([False, True] + [False] * (batch - 2)),
  }


ALGO = {"gamma": 1.0, "lam": 0.95, "value_lam": 1.0, "adaptive_lam_alpha": 0.0,
        "discount_per": "token", "truncation": "bootstrap", "whiten_advantages": False}


def estimate(name, batch, algo=ALGO):
  """Estimator `name` called as make_train_batch calls it: its declared options from the frozen
  AlgoSettings."""
  settings = AlgoSettings(advantage_estimator=name, **algo)
  return ADVANTAGE_ESTIMATORS.get(name)(batch, **settings.estimator_options())


def test_registry_has_all_estimators():
  assert {"gae", "grpo", "drgrpo", "rloo", "reinforce_pp"} <= set(ADVANTAGE_ESTIMATORS.names())


def test_gae_estimator_decoupled_lambda_and_bootstrap():
  batch = _batch()
  a, r = estimate("gae", batch)
  rewards = adv.place_terminal_reward(batch["scores"], batch["mask"])
  last = adv.last_action_index(batch["mask"])
  boot = np.where(batch["truncated"], batch["values"][np.arange(4), last + 1], 0.0)
  expected_a, _ = reference_gae(rewards, batch["values"], batch["mask"], 1.0, 0.95, boot)
  _, expected_r = reference_gae(rewards, batch["values"], batch["mask"], 1.0, 1.0, boot)
  np.testing.assert_allclose(a, expected_a * batch["mask"], atol=1e-5)
  np.testing.assert_allclose(r, expected_r * batch["mask"], atol=1e-5)
  terminal, _ = estimate("gae", batch, dict(ALGO, truncation="terminal"))
  expected_t, _ = reference_gae(rewards, batch["values"], batch["mask"], 1.0, 0.95)
  np.testing.assert_allclose(terminal, expected_t * batch["mask"], atol=1e-5)
  metrics = adv.truncation_metrics(batch["truncated"], advantage_estimator="gae", truncation="bootstrap")
  assert metrics == {"adv/truncated_frac": 0.25, "adv/truncation_bootstrapped": 1.0}


def test_gae_estimator_whitening_adaptive_lambda_and_turns():
  batch = _batch(1)
  batch["token_rewards"] = np.full(batch["mask"].shape, 0.1, np.float32)
  algo = dict(ALGO, whiten_advantages=True, adaptive_lam_alpha=0.5, discount_per="turn",
              gamma=0.9)
  a, _ = estimate("gae", batch, algo)
  mask = batch["mask"]
  rewards = adv.place_terminal_reward(batch["scores"], mask) + 0.1
  last = adv.last_action_index(mask)
  boot = np.where(batch["truncated"], batch["values"][np.arange(4), last + 1], 0.0)
  raw, _ = reference_gae(rewards, batch["values"], mask, 0.9, adv.adaptive_lambda(mask, 0.5), boot,
                         adv.turn_ends_from_mask(mask))
  valid = raw[mask > 0]
  expected = (raw - valid.mean()) / np.sqrt(valid.var(ddof=1) + 1e-8) * mask
  np.testing.assert_allclose(a, expected, atol=1e-4)


def test_group_estimators_broadcast_over_action_tokens():
  batch = _batch(2)
  for name, fn in (("grpo", lambda s, g: adv.grpo(s, g)),
                   ("drgrpo", lambda s, g: adv.grpo(s, g, normalize_std=False)),
                   ("rloo", adv.rloo)):
    a, r = estimate(name, batch, ALGO)
    assert r is None
    expected = np.asarray(fn(batch["scores"], batch["group_ids"]))[:, None] * batch["mask"]
    np.testing.assert_allclose(a, expected, atol=1e-6)


def test_reinforce_pp_estimator_uses_group_baseline():
  batch = _batch(3)
  a, r = estimate("reinforce_pp", batch, ALGO)
  assert r is None
  baseline = np.asarray(adv.group_mean_baseline(batch["scores"], batch["group_ids"]))
  rewards = adv.place_terminal_reward(baseline, batch["mask"])
  np.testing.assert_allclose(a, adv.reinforce_pp(rewards, batch["mask"]), atol=1e-6)
  assert abs(float(np.asarray(a)[batch["mask"] > 0].mean())) < 1e-5


@pytest.mark.parametrize("name", ["gae", "grpo", "drgrpo", "rloo", "reinforce_pp"])
@pytest.mark.parametrize("discount_per", ["token", "turn"])
def test_estimators_drop_rows_without_action_tokens(name, discount_per):
  """A row with prompt tokens only (its sandbox failed to open, its prompt left no budget) gets
  zero advantages and returns and leaves the other rows as if it were not in the batch: not in
  the whitening, not in its group's baseline, no crash looking for its last action token."""
  full = _batch(4, batch=5)
  full["mask"][2] = 0.0
  full["scores"][2] = 5.0  # far from its group's scores: it would move their baseline
  full["group_ids"] = np.array([0, 0, 1, 1, 1])
  full["token_rewards"] = np.full(full["mask"].shape, 0.1, np.float32) * full["mask"]
  algo = dict(ALGO, discount_per=discount_per, whiten_advantages=True)
  a, r = estimate(name, full, algo)
  keep = np.array([0, 1, 3, 4])
  want_a, want_r = estimate(name, {k: v[keep] for k, v in full.items()}, algo)
  np.testing.assert_array_equal(np.asarray(a)[2], 0.0)
  np.testing.assert_allclose(np.asarray(a)[keep], want_a, atol=1e-6)
  if want_r is None:
    assert r is None
  else:
    np.testing.assert_array_equal(np.asarray(r)[2], 0.0)
    np.testing.assert_allclose(np.asarray(r)[keep], want_r, atol=1e-6)


def test_estimator_missing_key_names_it():
  batch = _batch()
  del batch["values"]
  with pytest.raises(KeyError, match="values"):
    estimate("gae", batch, ALGO)
  with pytest.raises(KeyError, match="group_ids"):
    estimate("grpo", {"mask": batch["mask"], "scores": batch["scores"]}, ALGO)


# --- bad input -----------------------------------------------------------------------------


def test_bad_input_errors_name_the_argument():
  ok = np.zeros((2, 3), np.float32)
  with pytest.raises(ValueError, match="'values' has shape \\(2, 4\\)"):
    adv.gae(ok, np.zeros((2, 4)), ok, gamma=1.0, lam=1.0)
  with pytest.raises(ValueError, match="'values' has shape \\(2, 1\\)"):  # no broadcasting
    adv.gae(ok, np.zeros((2, 1)), ok, gamma=1.0, lam=1.0)
  with pytest.raises(ValueError, match="'mask' must contain only 0 and 1"):
    adv.gae(ok, ok, ok + 0.5, gamma=1.0, lam=1.0)
  with pytest.raises(ValueError, match="'rewards' contains NaN"):
    adv.gae(ok + np.nan, ok, ok, gamma=1.0, lam=1.0)
  with pytest.raises(ValueError, match="'rewards' is empty"):
    adv.gae(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)), gamma=1.0, lam=1.0)
  with pytest.raises(ValueError, match="'rewards' must be 2-D"):
    adv.gae(np.zeros(3), np.zeros(3), np.zeros(3), gamma=1.0, lam=1.0)
  with pytest.raises(ValueError, match="'lam' must be in"):
    adv.gae(ok, ok, ok, gamma=1.0, lam=1.5)
  with pytest.raises(ValueError, match="'gamma' has shape"):
    adv.gae(ok, ok, ok, gamma=np.ones(3), lam=1.0)
  with pytest.raises(ValueError, match="'mask' must contain only 0 and 1"):
    adv.gae(jnp.asarray(ok), jnp.asarray(ok), jnp.asarray(ok) - 1, gamma=1.0, lam=1.0)
  with pytest.raises(ValueError, match="'scores' contains NaN"):
    adv.grpo(np.array([1.0, np.nan]), np.array([0, 0]))
  with pytest.raises(ValueError, match="'group_ids' has shape"):
    adv.rloo(np.array([1.0, 0.0]), np.array([0, 0, 1]))
  with pytest.raises(ValueError, match="'scores' is empty"):
    adv.grpo(np.zeros(0), np.zeros(0, int))


def test_scale_advantages_by_sign_scales_each_sign_of_the_masked_entries():
  a = np.array([[1.5, -2.0, 0.0, -1.0], [-0.5, 0.25, 3.0, -4.0]], np.float32)
  mask = np.array([[1, 1, 1, 0], [1, 1, 0, 0]], np.float32)
  out = np.asarray(adv.scale_advantages_by_sign(a, mask, negative=0.25))
  np.testing.assert_allclose(out, [[1.5, -0.5, 0.0, 0.0], [-0.125, 0.25, 0.0, 0.0]])
  out = np.asarray(adv.scale_advantages_by_sign(a, mask, positive=0.5, negative=0.0))
  np.testing.assert_allclose(out, [[0.75, 0.0, 0.0, 0.0], [0.0, 0.125, 0.0, 0.0]])
  np.testing.assert_allclose(np.asarray(adv.scale_advantages_by_sign(a, mask)), a * mask)
  assert np.all(np.asarray(adv.scale_advantages_by_sign(a, mask, positive=0.0)) <= 0)
  with pytest.raises(ValueError, match="'negative' must be in \\[0, 1\\]"):
    adv.scale_advantages_by_sign(a, mask, negative=1.5)
  with pytest.raises(ValueError, match="'positive' must be in \\[0, 1\\]"):
    adv.scale_advantages_by_sign(a, mask, positive=-0.1)


def test_high_entropy_token_weights_keep_the_top_fraction_of_action_tokens():
  rng = np.random.default_rng(0)
  entropy = rng.random((4, 50)).astype(np.float32)
  mask = (rng.random((4, 50)) < 0.7).astype(np.float32)
  entropy[mask == 0] = 10.0  # prompt/observation tokens never count towards the quantile
  w = adv.high_entropy_token_weights(entropy, mask, 0.2)
  kept = (w > 0) & (mask > 0)
  assert abs(kept.sum() - 0.2 * mask.sum()) <= 1
  # Every kept action token has a higher entropy than every dropped one.
  assert entropy[kept].min() > entropy[(mask > 0) & ~kept].max()
  # The kept tokens carry the whole weight of the action tokens: a token-mean loss keeps its size.
  np.testing.assert_allclose((w * mask).sum(), mask.sum(), rtol=1e-5)
  np.testing.assert_array_equal(w[mask == 0], 1.0)
  np.testing.assert_array_equal(adv.high_entropy_token_weights(entropy, mask, 1.0), 1.0)
  with pytest.raises(ValueError, match="'fraction' must be in \\(0, 1\\]"):
    adv.high_entropy_token_weights(entropy, mask, 0.0)


def test_truncation_bootstraps_from_the_state_after_the_last_action_token():
  """values[:, t] is V(s_t), the state that predicts token t (read from the hidden state at t-1,
  rl.models.transformer.token_values). A cut-off row's future is worth the value of the state
  after its last action token L, values[:, L + 1], not values[:, L]: the state before L was
  sampled, which still has L's own reward and step ahead of it."""
  mask = np.array([[0, 1, 1, 0, 0]], np.float32)
  values = np.array([[0.0, 1.0, 2.0, 5.0, 0.0]], np.float32)  # V(after the last action token) = 5
  batch = {"mask": mask, "values": values, "scores": np.array([1.0], np.float32),
           "truncated": np.array([True])}
  algo = dict(ALGO, lam=1.0, value_lam=1.0)
  np.testing.assert_allclose(adv.truncation_bootstrap(batch, "bootstrap"), [5.0])
  a, r = estimate("gae", batch, algo)
  # delta(t2) = 1 + 5 - 2 = 4; delta(t1) = 0 + 2 - 1 = 1; lam 1: A = 5, 4; returns = A + V = 6, 6.
  np.testing.assert_allclose(a, [[0.0, 5.0, 4.0, 0.0, 0.0]], atol=1e-6)
  np.testing.assert_allclose(r, [[0.0, 6.0, 6.0, 0.0, 0.0]], atol=1e-6)
  with pytest.raises(ValueError, match="after its last action token"):
    adv.truncation_bootstrap({**batch, "mask": np.array([[0, 1, 1, 1, 1]], np.float32)}, "bootstrap")


def test_estimators_take_their_options_without_fallbacks():
  """An option an estimator declares and is not given is an error naming it, not a second
  default (lam once fell back to 0.95 where the default config says 0.5); a config missing an
  algo field fails when AlgoSettings reads it."""
  batch = _batch()
  algo = {k: v for k, v in ALGO.items() if k != "lam"}
  with pytest.raises(TypeError, match="lam"):
    ADVANTAGE_ESTIMATORS.get("gae")(batch, **algo)
  with pytest.raises(TypeError, match="discount_per"):
    ADVANTAGE_ESTIMATORS.get("reinforce_pp")(batch, gamma=1.0)
  assert AlgoSettings(advantage_estimator="grpo").estimator_options() == {}
  assert AlgoSettings(advantage_estimator="reinforce_pp", gamma=0.9).estimator_options() == {
      "gamma": 0.9, "discount_per": "token"}
  from configs import default
  config = default.get_config()
  with config.unlocked():
    del config.algo["lam"]
  with pytest.raises(AttributeError, match="lam"):
    AlgoSettings.from_config(config)
