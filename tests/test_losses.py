"""Tests of rl.algo.losses: closed forms, a per-token reference, and exact micro-batching."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rl.algo import losses
from rl.registry import DURATION_WEIGHTS, KL_ESTIMATORS, POLICY_LOSSES, VALUE_LOSSES

MASK = np.array([[1, 1, 0, 0], [1, 1, 1, 1], [0, 1, 0, 0]], np.float32)
LOSS = np.array([[1, 2, 9, 9], [3, 4, 5, 6], [9, 7, 9, 9]], np.float32)


@pytest.mark.parametrize("mode, expected", [
    ("token-mean", (1 + 2 + 3 + 4 + 5 + 6 + 7) / 7),
    ("token-sum", 28.0),
    ("seq-mean-token-sum", (3 + 18 + 7) / 3),
    ("seq-mean-token-mean", (1.5 + 4.5 + 7) / 3),
    ("seq-mean-token-sum-norm", (3 + 18 + 7) / 4 / 3),
])
def test_aggregate_hand_computed(mode, expected):
  assert float(losses.aggregate(LOSS, MASK, mode)) == pytest.approx(expected, rel=1e-6)


def test_aggregate_norm_constant_and_empty_rows():
  got = losses.aggregate(LOSS, MASK, "seq-mean-token-sum-norm", norm_constant=2.0)
  assert float(got) == pytest.approx(28 / 2 / 3)
  mask = MASK.copy()
  mask[2] = 0  # a row without action tokens is not a sequence to average over
  assert float(losses.aggregate(LOSS, mask, "seq-mean-token-sum")) == pytest.approx(21 / 2)


def test_aggregate_bad_input():
  with pytest.raises(ValueError, match="unknown mode 'mean'"):
    losses.aggregate(LOSS, MASK, "mean")
  with pytest.raises(ValueError, match="'mask' has shape"):
    losses.aggregate(LOSS, MASK[:, :3], "token-mean")
  with pytest.raises(ValueError, match="'mask' must contain only 0 and 1"):
    losses.aggregate(LOSS, MASK * 2, "token-mean")
  with pytest.raises(ValueError, match="no valid tokens"):
    losses.aggregate(LOSS, MASK * 0, "token-mean")
  with pytest.raises(ValueError, match="'loss' contains NaN"):
    losses.aggregate(LOSS * np.nan, MASK, "token-mean")


# --- PPO ---------------------------------------------------------------------------------


def reference_ppo_token(log_prob, old_log_prob, advantage, clip_low, clip_high, clip_c):
  """Per-token PPO-clip (Schulman et al. 2017) with dual clip (Ye et al. 2020)."""
  ratio = math.exp(max(-20.0, min(20.0, log_prob - old_log_prob)))
  surrogate = min(ratio * advantage, max(1 - clip_low, min(1 + clip_high, ratio)) * advantage)
  if advantage < 0 and clip_c is not None:
    surrogate = max(surrogate, clip_c * advantage)
  return -surrogate


def test_ppo_closed_form_cases():
  # ratio = e^{0.5} ~ 1.65: positive advantage is clipped at 1 + clip_high = 1.3.
  lp, olp = np.array([[0.5, 0.5, 3.0, -0.5]]), np.zeros((1, 4))
  a = np.array([[2.0, -1.0, -1.0, 1.0]])
  mask = np.ones((1, 4))
  loss, metrics = losses.ppo_policy_loss(lp, olp, a, mask, clip_low=0.2, clip_high=0.3, clip_c=3.0,
                                         agg="token-sum")
  # token 0: -2 * 1.3; token 1: A<0, -(-1) * e^0.5 (unclipped, larger); token 2: ratio e^3 = 20
  # capped by the dual clip at 3; token 3: ratio e^-0.5 = 0.607 < 0.8 -> A>0 keeps 0.607.
  expected = -2.6 + math.exp(0.5) + 3.0 - math.exp(-0.5)
  assert float(loss) == pytest.approx(expected, rel=1e-5)
  assert float(metrics["clipfrac"]) == pytest.approx(1 / 4)
  assert float(metrics["clipfrac_lower"]) == pytest.approx(1 / 4)
  assert float(metrics["approx_kl"]) == pytest.approx(-(0.5 + 0.5 + 3.0 - 0.5) / 4, rel=1e-5)


def test_ppo_gradient_vanishes_when_clipped_and_log_ratio_is_clamped():
  mask = np.ones((1, 2), np.float32)
  grad = jax.grad(lambda lp: losses.ppo_policy_loss(lp, jnp.zeros((1, 2)), jnp.array([[1.0, 1.0]]),
                                                    mask)[0])(jnp.array([[0.5, 0.0]]))
  assert float(grad[0, 0]) == 0.0  # clipped: no gradient pushes the ratio further
  assert float(grad[0, 1]) == pytest.approx(-0.5)  # -A ratio / 2 tokens
  loss, metrics = losses.ppo_policy_loss(np.array([[80.0]]), np.array([[0.0]]), np.array([[-1.0]]),
                                         np.ones((1, 1)), clip_c=None)
  assert float(loss) == pytest.approx(math.exp(20.0), rel=1e-5)
  assert np.isfinite(float(metrics["ratio_mean"]))


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_ppo_matches_per_token_reference(data):
  floats = st.floats(-3, 3, allow_nan=False, width=32)
  lp = np.array(data.draw(st.lists(floats, min_size=12, max_size=12)), np.float32).reshape(3, 4)
  olp = np.array(data.draw(st.lists(floats, min_size=12, max_size=12)), np.float32).reshape(3, 4)
  a = np.array(data.draw(st.lists(floats, min_size=12, max_size=12)), np.float32).reshape(3, 4)
  clip_low = data.draw(st.floats(0.0, 0.5))
  clip_high = data.draw(st.floats(0.0, 0.5))
  clip_c = data.draw(st.sampled_from([None, 1.5, 3.0]))
  loss, _ = losses.ppo_policy_loss(lp, olp, a, MASK, clip_low=clip_low, clip_high=clip_high,
                                   clip_c=clip_c, agg="token-sum")
  expected = sum(reference_ppo_token(float(lp[i, j]), float(olp[i, j]), float(a[i, j]), clip_low,
                                     clip_high, clip_c)
                 for i in range(3) for j in range(4) if MASK[i, j])
  assert float(loss) == pytest.approx(expected, rel=1e-4, abs=1e-3)


def test_value_loss_closed_form():
  v, old, ret = np.array([[1.0, 0.0]]), np.array([[0.0, 0.0]]), np.array([[0.0, 1.0]])
  loss, metrics = losses.value_loss(v, old, ret, np.ones((1, 2)), clip=0.5)
  # token 0: max(1, (0.5 - 0)^2) = 1, unclipped wins; token 1: max(1, 1) = 1.
  assert float(loss) == pytest.approx(0.5 * (1 + 1) / 2)
  loss, metrics = losses.value_loss(np.array([[1.0]]), np.array([[0.0]]), np.array([[2.0]]),
                                    np.ones((1, 1)), clip=0.5)
  # clipped prediction 0.5 is farther from 2 than 1 is: 0.5 * (1.5)^2.
  assert float(loss) == pytest.approx(0.5 * 2.25)
  assert float(metrics["vf_clipfrac"]) == 1.0
  loss, _ = losses.value_loss(np.array([[1.0]]), np.array([[0.0]]), np.array([[2.0]]),
                              np.ones((1, 1)), clip=None)
  assert float(loss) == pytest.approx(0.5)


# --- KL and entropy -------------------------------------------------------------------------


def test_kl_kinds_closed_form_and_straight_through():
  lp, ref = np.array([[0.0, -1.0]]), np.array([[-1.0, 0.0]])
  np.testing.assert_allclose(losses.kl_penalty(lp, ref, "k1"), [[1.0, -1.0]])
  np.testing.assert_allclose(losses.kl_penalty(lp, ref, "abs"), [[1.0, 1.0]])
  np.testing.assert_allclose(losses.kl_penalty(lp, ref, "k2"), [[0.5, 0.5]])
  k3 = [[math.exp(-1) + 1 - 1, math.exp(1) - 1 - 1]]
  np.testing.assert_allclose(losses.kl_penalty(lp, ref, "k3"), k3, rtol=1e-6)
  np.testing.assert_allclose(losses.kl_penalty(lp, ref, "k3+"), k3, rtol=1e-6)
  # k3 clamps: r = ref - logp = 30 -> clamped to 20, and the value to 10.
  assert float(losses.kl_penalty(np.array([[-30.0]]), np.array([[0.0]]), "k3")[0, 0]) == 10.0
  grad = lambda kind: jax.grad(lambda x: losses.kl_penalty(x, jnp.asarray(ref), kind).sum())(
      jnp.asarray(lp, jnp.float32))
  np.testing.assert_allclose(grad("k3+"), grad("k2"), rtol=1e-6)
  np.testing.assert_allclose(grad("k2"), lp - ref, rtol=1e-6)
  assert set(KL_ESTIMATORS.names()) >= {"k1", "abs", "k2", "k3", "k3+"}
  with pytest.raises(ValueError, match="unknown kind 'k4'"):
    losses.kl_penalty(lp, ref, "k4")


def test_entropy_from_logits():
  logits = np.zeros((2, 3, 5), np.float32)
  logits[1, 0] = [100, 0, 0, 0, 0]
  ent = np.asarray(losses.entropy_from_logits(logits))
  assert ent[0, 0] == pytest.approx(math.log(5), rel=1e-6)
  assert ent[1, 0] == pytest.approx(0.0, abs=1e-6)
  rng = np.random.default_rng(0)
  x = rng.normal(size=(2, 3, 7))
  p = np.exp(x) / np.exp(x).sum(-1, keepdims=True)
  np.testing.assert_allclose(losses.entropy_from_logits(x), -(p * np.log(p)).sum(-1), rtol=1e-5)


# --- micro-batch exactness -----------------------------------------------------------------


def _micro_problem(seed=0, batch=6, length=9):
  rng = np.random.default_rng(seed)
  mask = (rng.random((batch, length)) < 0.6).astype(np.float32)
  mask[0] = 0  # a row without tokens must not break the denominators
  arrays = {name: rng.normal(size=(batch, length)).astype(np.float32)
            for name in ("log_prob", "old_log_prob", "advantages", "values", "old_values", "returns")}
  weights = losses.duration_weights(rng.uniform(1, 60, size=batch), "linear")
  return mask, arrays, weights


@pytest.mark.parametrize("mode", losses.AGG_MODES)
def test_micro_batches_sum_to_the_full_batch_loss_and_gradient(mode):
  mask, arr, weights = _micro_problem()
  denominators = losses.loss_denominators(mask)

  def total_loss(log_prob, values, rows):
    policy, _ = losses.ppo_policy_loss(log_prob, arr["old_log_prob"][rows], arr["advantages"][rows],
                                       mask[rows], agg=mode, norm_constant=9.0,
                                       sample_weights=weights[rows], **denominators)
    value, _ = losses.value_loss(values, arr["old_values"][rows], arr["returns"][rows], mask[rows],
                                 agg=mode, norm_constant=9.0, **denominators)
    return policy + value

  grad_fn = jax.value_and_grad(total_loss, argnums=(0, 1))
  full_rows = np.arange(6)
  full, (full_g_lp, full_g_v) = grad_fn(jnp.asarray(arr["log_prob"]), jnp.asarray(arr["values"]),
                                        full_rows)
  parts, g_lp, g_v = 0.0, [], []
  for rows in (np.arange(0, 2), np.arange(2, 5), np.arange(5, 6)):
    loss, (a, b) = grad_fn(jnp.asarray(arr["log_prob"][rows]), jnp.asarray(arr["values"][rows]), rows)
    parts += float(loss)
    g_lp.append(a)
    g_v.append(b)
  assert parts == pytest.approx(float(full), rel=1e-5)
  np.testing.assert_allclose(np.concatenate(g_lp), full_g_lp, rtol=1e-5, atol=1e-7)
  np.testing.assert_allclose(np.concatenate(g_v), full_g_v, rtol=1e-5, atol=1e-7)
  # The default (local) denominators match the global ones on the full batch.
  local = losses.ppo_policy_loss(arr["log_prob"], arr["old_log_prob"], arr["advantages"], mask,
                                 agg=mode, norm_constant=9.0, sample_weights=weights)[0]
  glob = losses.ppo_policy_loss(arr["log_prob"], arr["old_log_prob"], arr["advantages"], mask,
                                agg=mode, norm_constant=9.0, sample_weights=weights,
                                **denominators)[0]
  assert float(local) == pytest.approx(float(glob), rel=1e-6)


def test_micro_batch_metrics_are_additive():
  mask, arr, _ = _micro_problem(1)
  den = losses.loss_denominators(mask)
  full = losses.ppo_policy_loss(arr["log_prob"], arr["old_log_prob"], arr["advantages"], mask,
                                **den)[1]
  halves = [losses.ppo_policy_loss(arr["log_prob"][s], arr["old_log_prob"][s], arr["advantages"][s],
                                   mask[s], **den)[1] for s in (slice(0, 3), slice(3, 6))]
  for key in full:
    assert float(halves[0][key] + halves[1][key]) == pytest.approx(float(full[key]), rel=1e-5)


# --- duration weights and registries --------------------------------------------------------


def test_duration_weights():
  d = np.array([1.0, 3.0])
  np.testing.assert_allclose(losses.duration_weights(d, "linear"), [0.5, 1.5])
  np.testing.assert_allclose(losses.duration_weights(d, "inverse_log"),
                             [1 / math.log(2), 1 / math.log(4)], rtol=1e-6)
  np.testing.assert_allclose(losses.duration_weights(d, "none"), [1.0, 1.0])
  assert set(DURATION_WEIGHTS.names()) >= {"none", "linear", "inverse_log"}
  with pytest.raises(ValueError, match="'durations' contains NaN"):
    losses.duration_weights(np.array([1.0, np.nan]), "linear")
  with pytest.raises(ValueError, match="every duration > 0"):
    losses.duration_weights(np.array([0.0, 1.0]), "inverse_log")
  with pytest.raises(ValueError, match="'durations' must be >= 0"):
    losses.duration_weights(np.array([-1.0, 1.0]), "linear")


def test_registered_losses_read_the_update_settings():
  from rl.algo.update import UpdateSettings
  mask, arr, _ = _micro_problem(2)
  algo = UpdateSettings(clip_low=0.1, clip_high=0.28, clip_c=3.0, loss_agg="seq-mean-token-mean",
                        value_clip=0.2, gspo_clip_low=3e-4, gspo_clip_high=4e-4,
                        gspo_loss_agg="seq-mean-token-mean")
  got, _ = POLICY_LOSSES.get("ppo")(arr["log_prob"], arr["old_log_prob"], arr["advantages"], mask, algo)
  want, _ = losses.ppo_policy_loss(arr["log_prob"], arr["old_log_prob"], arr["advantages"], mask,
                                   clip_low=0.1, clip_high=0.28, agg="seq-mean-token-mean")
  assert float(got) == pytest.approx(float(want))
  got, _ = VALUE_LOSSES.get("clipped")(arr["values"], arr["old_values"], arr["returns"], mask, algo)
  want, _ = losses.value_loss(arr["values"], arr["old_values"], arr["returns"], mask, clip=0.2,
                              agg="seq-mean-token-mean")
  assert float(got) == pytest.approx(float(want))
  for name in ("gspo", "cispo"):
    loss, metrics = POLICY_LOSSES.get(name)(arr["log_prob"], arr["old_log_prob"], arr["advantages"],
                                            mask, algo)
    assert np.isfinite(float(loss)) and "clipfrac" in metrics
  assert "mse" in VALUE_LOSSES


def test_gspo_and_cispo_at_ratio_one_are_policy_gradient():
  # With log_prob == old_log_prob both reduce to -A * (gradient of log_prob).
  mask = np.ones((2, 3), np.float32)
  a = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]], np.float32)
  lp = jnp.full((2, 3), -1.0)
  for fn in (losses.gspo_policy_loss, losses.cispo_policy_loss):
    grad = jax.grad(lambda x: fn(x, lp, a, mask, agg="token-sum")[0])(lp)
    np.testing.assert_allclose(grad, -a, rtol=1e-6)


def test_policy_loss_bad_input():
  ok = np.zeros((2, 3), np.float32)
  with pytest.raises(ValueError, match="'advantages' has shape"):
    losses.ppo_policy_loss(ok, ok, np.zeros((2, 1)), np.ones((2, 3)))
  with pytest.raises(ValueError, match="'sample_weights' has shape"):
    losses.ppo_policy_loss(ok, ok, ok, np.ones((2, 3)), sample_weights=np.ones(3))
  with pytest.raises(ValueError, match="'old_log_prob' contains NaN"):
    losses.ppo_policy_loss(ok, ok + np.nan, ok, np.ones((2, 3)))
  with pytest.raises(ValueError, match="'clip_c' must be > 1"):
    losses.ppo_policy_loss(ok, ok, ok, np.ones((2, 3)), clip_c=0.5)
  with pytest.raises(ValueError, match="'returns' has shape"):
    losses.value_loss(ok, ok, np.zeros((3, 3)), np.ones((2, 3)))


def test_topk_kl_is_exact_over_the_whole_vocabulary_and_a_lower_bound_otherwise():
  rng = np.random.default_rng(0)
  lp = jax.nn.log_softmax(jnp.asarray(rng.normal(size=(3, 4, 30)) * 2, jnp.float32), -1)
  lq = jax.nn.log_softmax(jnp.asarray(rng.normal(size=(3, 4, 30)) * 2, jnp.float32), -1)
  full = (jnp.exp(lp) * (lp - lq)).sum(-1)
  on = lambda x, ids: jnp.take_along_axis(x, ids, -1)
  every = jax.lax.top_k(lq, 30)[1]
  np.testing.assert_allclose(losses.topk_kl(on(lp, every), on(lq, every)), full, atol=1e-5)
  top5 = jax.lax.top_k(lq, 5)[1]
  part = np.asarray(losses.topk_kl(on(lp, top5), on(lq, top5)))
  assert (part <= np.asarray(full) + 1e-6).all() and part.min() > 0
  assert np.abs(np.asarray(losses.topk_kl(on(lq, top5), on(lq, top5)))).max() < 1e-6
