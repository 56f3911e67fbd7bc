"""Policy, value, KL and entropy losses, their aggregation, and duration-aware weights.

Everything is a pure, differentiable JAX function of `[B, T]` arrays, safe under jit and
grad. Aggregation takes optional global denominators (`num_tokens`, `num_sequences`,
`norm_constant`), so the sum of micro-batch losses equals the mini-batch loss and gradient
exactly; `loss_denominators(mask)` computes them once per mini-batch. Losses are registered
by name in rl.registry (POLICY_LOSSES, VALUE_LOSSES, KL_ESTIMATORS, DURATION_WEIGHTS).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rl.algo.arrays import Array, as_float32, check_array, is_concrete, shape_of
from rl.registry import DURATION_WEIGHTS, KL_ESTIMATORS, POLICY_LOSSES, VALUE_LOSSES

AGG_MODES = ("token-mean", "token-sum", "seq-mean-token-sum", "seq-mean-token-mean",
             "seq-mean-token-sum-norm")

LOG_RATIO_CLAMP = 20.0


def _check_weights(fn: str, shape: tuple[int, ...], sample_weights: Array | None,
                   token_weights: Array | None) -> None:
  if sample_weights is not None:
    check_array(fn, "sample_weights", sample_weights, ndim=1, shape=(shape[0],))
  if token_weights is not None:
    check_array(fn, "token_weights", token_weights, ndim=2, shape=shape)


def _apply_weights(per_token: jax.Array, sample_weights: Array | None,
                   token_weights: Array | None) -> jax.Array:
  if sample_weights is not None:
    per_token = per_token * as_float32(sample_weights)[:, None]
  if token_weights is not None:
    per_token = per_token * as_float32(token_weights)
  return per_token


# --------------------------------------------------------------------------------------
# Aggregation.
# --------------------------------------------------------------------------------------


def loss_denominators(mask: Array) -> dict[str, float]:
  """Global denominators of a (mini-)batch for exact micro-batching.

  Pass them to every micro-batch's loss call (with the mini-batch's padded length as
  `norm_constant` for seq-mean-token-sum-norm) and sum the micro-batch losses.
  """
  check_array("loss_denominators", "mask", mask, ndim=2, binary=True)
  m = np.asarray(mask, np.float64)
  return {"num_tokens": float(m.sum()), "num_sequences": float((m.sum(axis=1) > 0).sum())}


def aggregate(loss: Array, mask: Array, mode: str, *, norm_constant: float | None = None,
              num_tokens: float | Array | None = None, num_sequences: float | Array | None = None
              ) -> jax.Array:
  """Reduces a [B, T] per-token loss to a scalar over the mask=1 tokens.

  Modes (n_b = valid tokens of row b, S = rows with at least one valid token):
    token-mean              sum_bt l m / sum n_b            (DAPO; global token count)
    token-sum               sum_bt l m
    seq-mean-token-sum      (1/S) sum_b sum_t l m
    seq-mean-token-mean     (1/S) sum_b (sum_t l m) / n_b   (original GRPO)
    seq-mean-token-sum-norm (1/S) sum_b (sum_t l m) / norm_constant  (Dr.GRPO; default T)

  `num_tokens` replaces sum n_b and `num_sequences` replaces S: pass the values of the
  whole mini-batch to make a sum over micro-batches exact.
  """
  fn = "aggregate"
  if mode not in AGG_MODES:
    raise ValueError(f"aggregate: unknown mode {mode!r}; known modes: {', '.join(AGG_MODES)}")
  check_array(fn, "loss", loss, ndim=2)
  check_array(fn, "mask", mask, ndim=2, shape=shape_of(loss), binary=True)
  if norm_constant is not None and not (np.ndim(norm_constant) == 0 and
                                        (not is_concrete(norm_constant) or norm_constant > 0)):
    raise ValueError(f"aggregate: 'norm_constant' must be a positive scalar, got {norm_constant!r}")
  for name, value in (("num_tokens", num_tokens), ("num_sequences", num_sequences)):
    if value is not None and np.ndim(value) != 0:
      raise ValueError(f"aggregate: {name!r} must be a scalar, got shape {np.shape(value)}")
  needs_local = ((mode == "token-mean" and num_tokens is None) or
                 (mode.startswith("seq-mean") and num_sequences is None))
  if needs_local and is_concrete(mask) and not np.any(np.asarray(mask)):
    raise ValueError("aggregate: 'mask' has no valid tokens (empty batch)")
  return _aggregate(as_float32(loss), as_float32(mask), mode, norm_constant, num_tokens, num_sequences)


def _aggregate(loss, mask, mode, norm_constant, num_tokens, num_sequences):
  masked = loss * mask
  if mode == "token-sum":
    return masked.sum()
  if mode == "token-mean":
    denominator = mask.sum() if num_tokens is None else num_tokens
    return masked.sum() / jnp.maximum(denominator, 1.0)
  row_tokens = mask.sum(axis=1)
  if num_sequences is None:
    num_sequences = (row_tokens > 0).sum()
  num_sequences = jnp.maximum(jnp.asarray(num_sequences, jnp.float32), 1.0)
  row_sums = masked.sum(axis=1)
  if mode == "seq-mean-token-sum":
    return row_sums.sum() / num_sequences
  if mode == "seq-mean-token-mean":
    return (row_sums / jnp.maximum(row_tokens, 1.0)).sum() / num_sequences
  constant = loss.shape[1] if norm_constant is None else norm_constant
  return row_sums.sum() / constant / num_sequences


def _masked_mean_metric(x: jax.Array, mask: jax.Array, num_tokens) -> jax.Array:
  # Metrics use the same (possibly global) token count, so they too sum over micro-batches.
  denominator = mask.sum() if num_tokens is None else num_tokens
  return (x * mask).sum() / jnp.maximum(denominator, 1.0)


# --------------------------------------------------------------------------------------
# Policy losses.
# --------------------------------------------------------------------------------------


def ppo_policy_loss(log_prob: Array, old_log_prob: Array, advantages: Array, mask: Array, *,
                    clip_low: float = 0.2, clip_high: float = 0.2, clip_c: float | None = 3.0,
                    agg: str = "token-mean", norm_constant: float | None = None,
                    num_tokens: float | None = None, num_sequences: float | None = None,
                    sample_weights: Array | None = None, token_weights: Array | None = None
                    ) -> tuple[jax.Array, dict[str, jax.Array]]:
  """PPO clipped surrogate with asymmetric clip range and dual clip.

  ratio = exp(clamp(log_prob - old_log_prob, -20, 20));
  l = max(-A ratio, -A clip(ratio, 1 - clip_low, 1 + clip_high)), and where A < 0 also
  l = min(l, -clip_c A) (dual clip, Ye et al. 2020; `clip_c=None` turns it off).
  Per-row `sample_weights` [B] (e.g. duration weights) and per-token `token_weights`
  [B, T] (e.g. truncated importance weights) multiply l before aggregation.

  Returns (loss, metrics) with metrics clipfrac (upper or lower clip active),
  clipfrac_lower (dual clip active), approx_kl (mean old_log_prob - log_prob), ratio_mean.
  """
  fn = "ppo_policy_loss"
  check_array(fn, "log_prob", log_prob, ndim=2)
  shape = shape_of(log_prob)
  check_array(fn, "old_log_prob", old_log_prob, ndim=2, shape=shape)
  check_array(fn, "advantages", advantages, ndim=2, shape=shape)
  check_array(fn, "mask", mask, ndim=2, shape=shape, binary=True)
  _check_weights(fn, shape, sample_weights, token_weights)
  if not 0.0 <= clip_low < 1.0 or not clip_high >= 0.0:
    raise ValueError(f"{fn}: need 0 <= clip_low < 1 and clip_high >= 0, got {clip_low}, {clip_high}")
  if clip_c is not None and not clip_c > 1.0:
    raise ValueError(f"{fn}: 'clip_c' must be > 1 (or None to disable dual clip), got {clip_c}")

  log_prob, old_log_prob = as_float32(log_prob), as_float32(old_log_prob)
  advantages, mask_f = as_float32(advantages), as_float32(mask)
  log_ratio = jnp.clip(log_prob - old_log_prob, -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP)
  ratio = jnp.exp(log_ratio)
  unclipped = -advantages * ratio
  clipped = -advantages * jnp.clip(ratio, 1.0 - clip_low, 1.0 + clip_high)
  per_token = jnp.maximum(unclipped, clipped)
  clip_active = (clipped > unclipped).astype(jnp.float32)
  if clip_c is not None:
    dual = -advantages * clip_c
    dual_active = ((per_token > dual) & (advantages < 0)).astype(jnp.float32)
    per_token = jnp.where(advantages < 0, jnp.minimum(per_token, dual), per_token)
  else:
    dual_active = jnp.zeros_like(per_token)
  per_token = _apply_weights(per_token, sample_weights, token_weights)
  loss = aggregate(per_token, mask_f, agg, norm_constant=norm_constant, num_tokens=num_tokens,
                   num_sequences=num_sequences)
  metrics = {
      "clipfrac": _masked_mean_metric(clip_active, mask_f, num_tokens),
      "clipfrac_lower": _masked_mean_metric(dual_active, mask_f, num_tokens),
      "approx_kl": _masked_mean_metric(-log_ratio, mask_f, num_tokens),
      "ratio_mean": _masked_mean_metric(ratio, mask_f, num_tokens),
  }
  return loss, jax.tree.map(jax.lax.stop_gradient, metrics)


def gspo_policy_loss(log_prob: Array, old_log_prob: Array, advantages: Array, mask: Array, *,
                     clip_low: float = 3e-4, clip_high: float = 4e-4,
                     agg: str = "seq-mean-token-mean", norm_constant: float | None = None,
                     num_tokens: float | None = None, num_sequences: float | None = None,
                     sample_weights: Array | None = None, token_weights: Array | None = None
                     ) -> tuple[jax.Array, dict[str, jax.Array]]:
  """GSPO-token (Zheng et al. 2025): a sequence-level, length-normalised ratio.

  s_b = exp(mean_t (log_prob - old_log_prob)) over row b's valid tokens; the token ratio is
  sg(s_b) * pi / sg(pi), clipped to [1 - clip_low, 1 + clip_high] (the paper uses 3e-4, 4e-4).
  """
  fn = "gspo_policy_loss"
  check_array(fn, "log_prob", log_prob, ndim=2)
  shape = shape_of(log_prob)
  check_array(fn, "old_log_prob", old_log_prob, ndim=2, shape=shape)
  check_array(fn, "advantages", advantages, ndim=2, shape=shape)
  check_array(fn, "mask", mask, ndim=2, shape=shape, binary=True)
  _check_weights(fn, shape, sample_weights, token_weights)
  log_prob, old_log_prob = as_float32(log_prob), as_float32(old_log_prob)
  advantages, mask_f = as_float32(advantages), as_float32(mask)
  row_tokens = jnp.maximum(mask_f.sum(axis=1, keepdims=True), 1.0)
  seq_log_ratio = ((log_prob - old_log_prob) * mask_f).sum(axis=1, keepdims=True) / row_tokens
  seq_log_ratio = jnp.clip(seq_log_ratio, -LOG_RATIO_CLAMP, 10.0)
  token_log_ratio = jax.lax.stop_gradient(seq_log_ratio) + log_prob - jax.lax.stop_gradient(log_prob)
  ratio = jnp.exp(token_log_ratio)
  unclipped = -advantages * ratio
  clipped = -advantages * jnp.clip(ratio, 1.0 - clip_low, 1.0 + clip_high)
  per_token = _apply_weights(jnp.maximum(unclipped, clipped), sample_weights, token_weights)
  loss = aggregate(per_token, mask_f, agg, norm_constant=norm_constant, num_tokens=num_tokens,
                   num_sequences=num_sequences)
  metrics = {
      "clipfrac": _masked_mean_metric((clipped > unclipped).astype(jnp.float32), mask_f, num_tokens),
      "approx_kl": _masked_mean_metric(old_log_prob - log_prob, mask_f, num_tokens),
      "ratio_mean": _masked_mean_metric(ratio, mask_f, num_tokens),
  }
  return loss, jax.tree.map(jax.lax.stop_gradient, metrics)


def cispo_policy_loss(log_prob: Array, old_log_prob: Array, advantages: Array, mask: Array, *,
                      clip_high: float = 0.2, agg: str = "token-mean",
                      norm_constant: float | None = None, num_tokens: float | None = None,
                      num_sequences: float | None = None, sample_weights: Array | None = None,
                      token_weights: Array | None = None) -> tuple[jax.Array, dict[str, jax.Array]]:
  """CISPO (MiniMax-M1): -sg(min(ratio, 1 + clip_high)) * A * log_prob.

  The importance weight is clipped and detached instead of the update, so every token
  keeps a gradient (no lower clip, as in the paper).
  """
  fn = "cispo_policy_loss"
  check_array(fn, "log_prob", log_prob, ndim=2)
  shape = shape_of(log_prob)
  check_array(fn, "old_log_prob", old_log_prob, ndim=2, shape=shape)
  check_array(fn, "advantages", advantages, ndim=2, shape=shape)
  check_array(fn, "mask", mask, ndim=2, shape=shape, binary=True)
  _check_weights(fn, shape, sample_weights, token_weights)
  log_prob, old_log_prob = as_float32(log_prob), as_float32(old_log_prob)
  advantages, mask_f = as_float32(advantages), as_float32(mask)
  log_ratio = jnp.clip(log_prob - old_log_prob, -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP)
  ratio = jnp.exp(log_ratio)
  weight = jax.lax.stop_gradient(jnp.minimum(ratio, 1.0 + clip_high))
  per_token = _apply_weights(-weight * advantages * log_prob, sample_weights, token_weights)
  loss = aggregate(per_token, mask_f, agg, norm_constant=norm_constant, num_tokens=num_tokens,
                   num_sequences=num_sequences)
  metrics = {
      "clipfrac": _masked_mean_metric((ratio > 1.0 + clip_high).astype(jnp.float32), mask_f,
                                      num_tokens),
      "approx_kl": _masked_mean_metric(-log_ratio, mask_f, num_tokens),
      "ratio_mean": _masked_mean_metric(ratio, mask_f, num_tokens),
  }
  return loss, jax.tree.map(jax.lax.stop_gradient, metrics)


# --------------------------------------------------------------------------------------
# Value loss.
# --------------------------------------------------------------------------------------


def value_loss(values: Array, old_values: Array, returns: Array, mask: Array, *,
               clip: float | None = 0.5, agg: str = "token-mean",
               norm_constant: float | None = None, num_tokens: float | None = None,
               num_sequences: float | None = None, sample_weights: Array | None = None
               ) -> tuple[jax.Array, dict[str, jax.Array]]:
  """0.5 * agg(max((v - R)^2, (clip(v, v_old - clip, v_old + clip) - R)^2)).

  `clip=None` gives the plain 0.5 * agg((v - R)^2). Metrics: vf_clipfrac (clipped term is
  the larger), vf_explained_var is left to the caller (it needs the whole batch).
  """
  fn = "value_loss"
  check_array(fn, "values", values, ndim=2)
  shape = shape_of(values)
  check_array(fn, "old_values", old_values, ndim=2, shape=shape)
  check_array(fn, "returns", returns, ndim=2, shape=shape)
  check_array(fn, "mask", mask, ndim=2, shape=shape, binary=True)
  _check_weights(fn, shape, sample_weights, None)
  if clip is not None and not clip > 0:
    raise ValueError(f"{fn}: 'clip' must be > 0 (or None for no clipping), got {clip!r}")
  values, old_values, returns, mask_f = map(as_float32, (values, old_values, returns, mask))
  unclipped = (values - returns) ** 2
  if clip is None:
    per_token = unclipped
    clip_active = jnp.zeros_like(unclipped)
  else:
    clipped_values = jnp.clip(values, old_values - clip, old_values + clip)
    clipped = (clipped_values - returns) ** 2
    per_token = jnp.maximum(unclipped, clipped)
    clip_active = (clipped > unclipped).astype(jnp.float32)
  per_token = _apply_weights(per_token, sample_weights, None)
  loss = 0.5 * aggregate(per_token, mask_f, agg, norm_constant=norm_constant,
                         num_tokens=num_tokens, num_sequences=num_sequences)
  metrics = {"vf_clipfrac": _masked_mean_metric(clip_active, mask_f, num_tokens),
             "vf_mean": _masked_mean_metric(values, mask_f, num_tokens)}
  return loss, jax.tree.map(jax.lax.stop_gradient, metrics)


# --------------------------------------------------------------------------------------
# KL estimators and entropy.
# --------------------------------------------------------------------------------------


def _kl_k1(log_prob, ref_log_prob):
  return log_prob - ref_log_prob


def _kl_abs(log_prob, ref_log_prob):
  return jnp.abs(log_prob - ref_log_prob)


def _kl_k2(log_prob, ref_log_prob):
  return 0.5 * (log_prob - ref_log_prob) ** 2


def _kl_k3(log_prob, ref_log_prob):
  # Schulman's unbiased, non-negative estimator; clamps keep exp() finite.
  log_ratio = jnp.clip(ref_log_prob - log_prob, -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP)
  return jnp.clip(jnp.exp(log_ratio) - log_ratio - 1.0, -10.0, 10.0)


def _kl_k3_plus(log_prob, ref_log_prob):
  # Straight-through: the value of k3, the gradient of k2 (an unbiased KL gradient).
  k2 = _kl_k2(log_prob, ref_log_prob)
  return k2 + jax.lax.stop_gradient(_kl_k3(log_prob, ref_log_prob) - k2)


_KL_KINDS = {"k1": _kl_k1, "abs": _kl_abs, "k2": _kl_k2, "k3": _kl_k3, "k3+": _kl_k3_plus}
for _name, _fn in _KL_KINDS.items():
  KL_ESTIMATORS.register(_name, _fn)


def kl_penalty(log_prob: Array, ref_log_prob: Array, kind: str) -> jax.Array:
  """[B, T] per-token KL(pi || ref) estimate.

  k1: logp - ref; abs: |logp - ref|; k2: 0.5 (logp - ref)^2; k3: exp(r) - r - 1 with
  r = ref - logp clamped to [-20, 20] and the result clamped to [-10, 10];
  k3+: the k3 value with the k2 gradient (straight-through).
  """
  if kind not in _KL_KINDS:
    raise ValueError(f"kl_penalty: unknown kind {kind!r}; known kinds: {', '.join(_KL_KINDS)}")
  check_array("kl_penalty", "log_prob", log_prob, ndim=2)
  check_array("kl_penalty", "ref_log_prob", ref_log_prob, ndim=2, shape=shape_of(log_prob))
  return _KL_KINDS[kind](as_float32(log_prob), as_float32(ref_log_prob))


def topk_kl(logp: jax.Array, ref_logp: jax.Array) -> jax.Array:
  """KL(p || ref) [B, T] between two distributions coarsened to the reference's top-k tokens
  ([B, T, k] full-softmax log-probs of the same ids under each) and one bucket for the rest of
  the vocabulary. By the data-processing inequality it is at most the full KL, and it counts
  any mass that moves from the reference's likely tokens into the tail."""
  p, q = jnp.exp(logp), jnp.exp(ref_logp)
  p_rest = jnp.clip(1.0 - p.sum(-1), 1e-12, 1.0)
  q_rest = jnp.clip(1.0 - q.sum(-1), 1e-12, 1.0)
  return (p * (logp - ref_logp)).sum(-1) + p_rest * (jnp.log(p_rest) - jnp.log(q_rest))


def entropy_from_logits(logits: Array) -> jax.Array:
  """[B, T] entropy of softmax(logits) for [B, T, V] logits (stable: logsumexp form)."""
  check_array("entropy_from_logits", "logits", logits, ndim=3)
  logits = jnp.asarray(logits)
  logits = logits.astype(jnp.promote_types(logits.dtype, jnp.float32))
  log_z = jax.nn.logsumexp(logits, axis=-1)
  probs = jax.nn.softmax(logits, axis=-1)
  return log_z - (probs * logits).sum(axis=-1)


# --------------------------------------------------------------------------------------
# Duration-aware per-trajectory weights.
# --------------------------------------------------------------------------------------


def _check_durations(fn: str, durations: Array) -> np.ndarray:
  check_array(fn, "durations", durations, ndim=1)
  d = np.asarray(durations, np.float64)
  if np.any(d < 0):
    raise ValueError(f"{fn}: 'durations' must be >= 0 seconds")
  return d


@DURATION_WEIGHTS.register("none")
def duration_weights_none(durations: Array) -> np.ndarray:
  """All ones: every trajectory counts the same."""
  return np.ones(_check_durations("duration_weights", durations).shape, np.float32)


@DURATION_WEIGHTS.register("linear")
def duration_weights_linear(durations: Array) -> np.ndarray:
  """dt / mean(dt) over the batch: long (slow) trajectories weigh more; mean weight 1."""
  d = _check_durations("duration_weights", durations)
  if not d.mean() > 0:
    raise ValueError("duration_weights: 'durations' are all 0; 'linear' needs a positive mean")
  return (d / d.mean()).astype(np.float32)


@DURATION_WEIGHTS.register("inverse_log")
def duration_weights_inverse_log(durations: Array) -> np.ndarray:
  """1 / log(1 + dt): damps long trajectories (dt in seconds, must be > 0)."""
  d = _check_durations("duration_weights", durations)
  if np.any(d <= 0):
    raise ValueError("duration_weights: 'inverse_log' needs every duration > 0 seconds")
  return (1.0 / np.log1p(d)).astype(np.float32)


def duration_weights(durations: Array, kind: str) -> np.ndarray:
  """[B] per-trajectory loss weights from wall-clock durations; `kind` in DURATION_WEIGHTS.

  Compute them over the whole rollout batch before splitting it into micro-batches.
  """
  return DURATION_WEIGHTS.get(kind)(durations)


# --------------------------------------------------------------------------------------
# Registered losses: one calling convention each, options read from the update's frozen
# settings (rl.algo.update.UpdateSettings: clip_low, clip_high, clip_c, gspo_*, value_clip,
# loss_agg), never from the config.
#   policy: fn(log_prob, old_log_prob, advantages, mask, settings, **kw) -> (loss, metrics)
#   value:  fn(values, old_values, returns, mask, settings, **kw) -> (loss, metrics)
# `kw` are norm_constant, num_tokens, num_sequences, sample_weights (and token_weights for
# policy losses).
# --------------------------------------------------------------------------------------


@POLICY_LOSSES.register("ppo")
def ppo_from_config(log_prob, old_log_prob, advantages, mask, settings: Any, **kw):
  return ppo_policy_loss(log_prob, old_log_prob, advantages, mask,
                         clip_low=float(settings.clip_low),
                         clip_high=float(settings.clip_high),
                         clip_c=settings.clip_c or None,
                         agg=settings.loss_agg, **kw)


@POLICY_LOSSES.register("gspo")
def gspo_from_config(log_prob, old_log_prob, advantages, mask, settings: Any, **kw):
  return gspo_policy_loss(log_prob, old_log_prob, advantages, mask,
                          clip_low=float(settings.gspo_clip_low),
                          clip_high=float(settings.gspo_clip_high),
                          agg=settings.gspo_loss_agg, **kw)


@POLICY_LOSSES.register("cispo")
def cispo_from_config(log_prob, old_log_prob, advantages, mask, settings: Any, **kw):
  return cispo_policy_loss(log_prob, old_log_prob, advantages, mask,
                           clip_high=float(settings.clip_high),
                           agg=settings.loss_agg, **kw)


@VALUE_LOSSES.register("clipped")
def clipped_value_loss_from_config(values, old_values, returns, mask, settings: Any, **kw):
  return value_loss(values, old_values, returns, mask, clip=float(settings.value_clip),
                    agg=settings.loss_agg, **kw)


@VALUE_LOSSES.register("mse")
def mse_value_loss_from_config(values, old_values, returns, mask, settings: Any, **kw):
  return value_loss(values, old_values, returns, mask, clip=None,
                    agg=settings.loss_agg, **kw)
