"""Advantage estimators: GAE with a critic, and critic-free GRPO, Dr.GRPO, RLOO, REINFORCE++.

The math is jitted pure functions over `[B, T]` arrays; argument checks run on the host,
on concrete arrays only, before anything is traced. Estimators are registered by name in
`rl.registry.ADVANTAGE_ESTIMATORS` and share one calling convention:

    advantages, returns = ADVANTAGE_ESTIMATORS.get(name)(batch, **options)

`batch` maps names to arrays (`mask` [B, T] always; `scores` [B], `token_rewards` [B, T],
`values` [B, T] (V(s_t), the state that predicts token t; GAE reads them at action tokens and,
for a truncated row it bootstraps, one position after its last), `group_ids` [B], `turn_ends`
[B, T], `truncated` [B] as the estimator needs),
`options` are the keyword-only arguments the estimator declares (gae: gamma, lam, value_lam,
adaptive_lam_alpha, discount_per, truncation, whiten_advantages; reinforce_pp: gamma,
discount_per; the group estimators: none), which `rl.algo.batch.AlgoSettings.estimator_options`
takes from the frozen settings. Both outputs are `[B, T]` and zero where
`mask == 0`; `returns` (value targets) is None for estimators without a critic. A row without
an action token is left out (zeros; not in any whitening or group baseline). See
docs/algorithms.md for the formulas and conventions.
"""

from __future__ import annotations

import functools
from typing import Mapping

import jax
import jax.numpy as jnp
import numpy as np

from rl.algo.arrays import Array, as_float32, check_array, is_concrete, per_sequence, shape_of
from rl.registry import ADVANTAGE_ESTIMATORS

# --------------------------------------------------------------------------------------
# The masked reverse recurrence as an associative scan.
# --------------------------------------------------------------------------------------


def _compose(earlier, later):
  # Each element is the affine map s -> coef * s + offset from the state at t+1 to the
  # state at t. In a reverse scan `earlier` is the map closer to the end of the sequence,
  # so it is applied first.
  c1, o1 = earlier
  c2, o2 = later
  return c2 * c1, c2 * o1 + o2


def reverse_affine_scan(coef: jax.Array, offset: jax.Array, init: jax.Array) -> jax.Array:
  """Solves s[:, t] = coef[:, t] * s[:, t+1] + offset[:, t] with s[:, T] = init, for all t.

  O(log T) depth via `jax.lax.associative_scan`; `init` is [B]. Traceable (use under jit).
  """
  c, o = jax.lax.associative_scan(_compose, (coef, offset), reverse=True, axis=1)
  return c * init[:, None] + o


def _step_discounts(mask, turn_ends, gamma, gamma_lam):
  """[B, T] gamma and gamma*lambda applied when stepping from token t to the next action
  token: per token, or (with turn-end markers) only across turn boundaries."""
  if turn_ends is None:
    return (jnp.broadcast_to(gamma[:, None], mask.shape),
            jnp.broadcast_to(gamma_lam[:, None], mask.shape))
  ends = turn_ends > 0
  return jnp.where(ends, gamma[:, None], 1.0), jnp.where(ends, gamma_lam[:, None], 1.0)


@jax.jit
def _gae_associative(rewards, values, mask, turn_ends, gamma, gamma_lam, bootstrap):
  """Carry-forward GAE as two `associative_scan`s (O(log T) depth).

  rewards, values, mask, turn_ends (or None): [B, T]; gamma, gamma_lam, bootstrap: [B].
  """
  step_gamma, step_gamma_lam = _step_discounts(mask, turn_ends, gamma, gamma_lam)
  # Value of the next action token seen from t (carried over masked tokens, `bootstrap`
  # past the end): nv[t] = m v[t] + (1-m) nv[t+1].
  carried_value = reverse_affine_scan(1.0 - mask, mask * values, bootstrap)
  next_value = jnp.concatenate([carried_value[:, 1:], bootstrap[:, None]], axis=1)
  delta = rewards + step_gamma * next_value - values
  # A[t] = m (delta + gamma lam A[t+1]) + (1-m) A[t+1].
  advantages = reverse_affine_scan(mask * step_gamma_lam + (1.0 - mask), mask * delta,
                                   jnp.zeros_like(bootstrap))
  return advantages, advantages + values


@functools.partial(jax.jit, static_argnames=("chunk",))
def _gae_chunked(rewards, values, mask, turn_ends, gamma, gamma_lam, bootstrap, *, chunk=128):
  """Carry-forward GAE as a three-pass chunked scan (same contract as `_gae_associative`).

  XLA on CPU runs `associative_scan` slowly (strided slices and interleaving pads along
  the minor axis), and a plain `lax.scan` over T pays a loop iteration per token. Here T
  is cut into chunks that are processed side by side: (1) compose each chunk's affine
  step maps, (2) scan the few chunk maps to get the state entering each chunk from the
  right, (3) rerun the plain recurrence in all chunks at once from those states. Depth is
  O(T/chunk + chunk) sequential steps, each over [B, num_chunks] lanes; work is O(T B).
  """
  batch, length = rewards.shape
  pad = (-length) % chunk
  num_chunks = (length + pad) // chunk

  def to_lanes(x):
    # [B, T] -> [chunk, B, num_chunks] with one 2-D transpose; lane (b, j) is chunk j of
    # row b, and each scan step reads one contiguous [B, num_chunks] slab.
    x = jnp.pad(x, ((0, 0), (0, pad))) if pad else x  # mask-0 padding is an identity step
    return x.reshape(batch * num_chunks, chunk).T.reshape(chunk, batch, num_chunks)

  lane_gamma = gamma[:, None]
  lane_gamma_lam = gamma_lam[:, None]
  if turn_ends is None:
    xs = tuple(to_lanes(x) for x in (rewards, values, mask))
    discounts = lambda x: (lane_gamma, lane_gamma_lam)
  else:
    xs = tuple(to_lanes(x) for x in (rewards, values, mask, turn_ends))
    discounts = lambda x: (jnp.where(x[3] > 0, lane_gamma, 1.0),
                           jnp.where(x[3] > 0, lane_gamma_lam, 1.0))

  def compose(maps, x):
    # The step at t maps the state (A, nv) at t+1 to the state at t:
    #   A_t = a A + b nv + c,  nv_t = e nv + f.  Compose it after the maps so far.
    big_a, big_b, big_c, big_e, big_f = maps
    r, v, m = x[:3]
    g, gl = discounts(x)
    a, b, c, e, f = m * gl + (1.0 - m), m * g, m * (r - v), 1.0 - m, m * v
    return (a * big_a, a * big_b + b * big_e, a * big_c + b * big_f + c, e * big_e,
            e * big_f + f), None

  ones = jnp.ones((batch, num_chunks), jnp.float32)
  zeros = jnp.zeros((batch, num_chunks), jnp.float32)
  chunk_maps, _ = jax.lax.scan(compose, (ones, zeros, zeros, ones, zeros), xs, reverse=True)
  chunk_maps = tuple(x.T for x in chunk_maps)  # [num_chunks, B], small

  def across_chunks(state, maps):
    adv, next_value = state
    a, b, c, e, f = maps
    return (a * adv + b * next_value + c, e * next_value + f), state

  _, entering = jax.lax.scan(across_chunks, (jnp.zeros_like(bootstrap), bootstrap), chunk_maps,
                             reverse=True)
  entering = tuple(x.T for x in entering)

  def recurrence(state, x):
    adv, next_value = state
    r, v, m = x[:3]
    g, gl = discounts(x)
    delta = r + g * next_value - v
    adv = m * (delta + gl * adv) + (1.0 - m) * adv
    next_value = m * v + (1.0 - m) * next_value
    return (adv, next_value), adv

  _, advantages = jax.lax.scan(recurrence, entering, xs, reverse=True)
  advantages = advantages.reshape(chunk, batch * num_chunks).T.reshape(batch, -1)[:, :length]
  return advantages, advantages + values


GAE_IMPLEMENTATIONS = {"chunked": _gae_chunked, "associative": _gae_associative}


def gae(rewards: Array, values: Array, mask: Array, *, gamma: float | Array, lam: float | Array,
        bootstrap_values: Array | None = None, turn_ends: Array | None = None,
        implementation: str = "chunked") -> tuple[jax.Array, jax.Array]:
  """Generalized advantage estimation with carry-forward over masked tokens.

  At a masked token (prompt, observation, padding) the running next-value and running
  advantage pass through unchanged: an observation span adds no TD error and no decay
  (verl's `compute_gae_advantage_return` after its multi-turn fix, including its output at
  masked positions, which hold the carried advantage). Advantages are raw (not whitened)
  and `returns = advantages + values`.

  Args:
    rewards, values, mask: [B, T]; mask is 1.0 on action tokens, 0.0 elsewhere.
    gamma, lam: discount and GAE lambda in [0, 1]; a float or a [B] array per sequence.
    bootstrap_values: optional [B] value of the state after the last token (a truncated
      trajectory's estimate of the future); default 0, i.e. terminal.
    turn_ends: optional [B, T] 0/1 markers of each turn's last action token. When given,
      gamma and lam are applied once per agent turn (between turns) instead of per token.
    implementation: "chunked" (default, fastest measured on CPU, see
      scripts/bench_gae.py) or "associative" (`jax.lax.associative_scan`); same results.

  Returns:
    (advantages, returns), both [B, T] float32.
  """
  fn = "gae"
  check_array(fn, "rewards", rewards, ndim=2)
  shape = shape_of(rewards)
  check_array(fn, "values", values, ndim=2, shape=shape)
  check_array(fn, "mask", mask, ndim=2, shape=shape, binary=True)
  batch = shape[0]
  gamma_b = per_sequence(fn, "gamma", gamma, batch, 0.0, 1.0)
  lam_b = per_sequence(fn, "lam", lam, batch, 0.0, 1.0)
  if bootstrap_values is None:
    bootstrap = np.zeros((batch,), np.float32)
  else:
    check_array(fn, "bootstrap_values", bootstrap_values, ndim=1, shape=(batch,))
    bootstrap = as_float32(bootstrap_values)
  ends = None
  if turn_ends is not None:
    check_array(fn, "turn_ends", turn_ends, ndim=2, shape=shape, binary=True)
    ends = as_float32(turn_ends)
  if implementation not in GAE_IMPLEMENTATIONS:
    raise ValueError(f"gae: unknown implementation {implementation!r}; known: "
                     f"{', '.join(GAE_IMPLEMENTATIONS)}")
  return GAE_IMPLEMENTATIONS[implementation](
      as_float32(rewards), as_float32(values), as_float32(mask), ends, gamma_b, gamma_b * lam_b, bootstrap)


# --------------------------------------------------------------------------------------
# Reward placement and turn structure helpers.
# --------------------------------------------------------------------------------------


def last_action_index(mask: Array) -> np.ndarray:
  """[B] index of the last mask=1 token of each row (ValueError for a row without one)."""
  check_array("last_action_index", "mask", mask, ndim=2, binary=True)
  m = np.asarray(mask) > 0
  has_action = m.any(axis=1)
  if not has_action.all():
    rows = np.flatnonzero(~has_action)[:8].tolist()
    raise ValueError(f"mask rows {rows} have no action token (mask == 1)")
  return m.shape[1] - 1 - np.argmax(m[:, ::-1], axis=1)


def place_terminal_reward(scores: Array, mask: Array) -> np.ndarray:
  """[B, T] rewards: each trajectory's score on its last action token, zero elsewhere."""
  check_array("place_terminal_reward", "scores", scores, ndim=1)
  check_array("place_terminal_reward", "mask", mask, ndim=2, binary=True)
  if np.shape(scores)[0] != np.shape(mask)[0]:
    raise ValueError(f"place_terminal_reward: 'scores' has {np.shape(scores)[0]} rows but "
                     f"'mask' has {np.shape(mask)[0]}")
  last = last_action_index(mask)
  out = np.zeros(np.shape(mask), np.float32)
  out[np.arange(out.shape[0]), last] = np.asarray(scores, np.float32)
  return out


def turn_ends_from_mask(mask: Array) -> np.ndarray:
  """[B, T] markers of the last token of each contiguous run of action tokens.

  In a multi-turn episode every agent turn is one such run (observation tokens, mask 0,
  separate the turns), so this recovers the turn structure from the mask alone.
  """
  check_array("turn_ends_from_mask", "mask", mask, ndim=2, binary=True)
  m = np.asarray(mask) > 0
  following = np.concatenate([m[:, 1:], np.zeros((m.shape[0], 1), bool)], axis=1)
  return (m & ~following).astype(np.float32)


def turn_ends_from_turn_ids(turn_ids: Array, mask: Array) -> np.ndarray:
  """[B, T] turn-end markers from per-token turn ids (only action tokens are read).

  An action token ends its turn when the next action token of the row has another id, or
  when it is the row's last action token.
  """
  fn = "turn_ends_from_turn_ids"
  check_array(fn, "mask", mask, ndim=2, binary=True)
  check_array(fn, "turn_ids", turn_ids, ndim=2, shape=shape_of(mask))
  m = np.asarray(mask) > 0
  ids = np.asarray(turn_ids)
  out = np.zeros(m.shape, np.float32)
  for b in range(m.shape[0]):
    positions = np.flatnonzero(m[b])
    if positions.size == 0:
      continue
    row_ids = ids[b, positions]
    is_end = np.append(row_ids[1:] != row_ids[:-1], True)
    out[b, positions[is_end]] = 1.0
  return out


def turn_ends_from_indices(turn_ends: list[list[int]], length: int) -> np.ndarray:
  """[B, T] markers from per-episode lists of last-action-token indices (`Episode.turn_ends`)."""
  out = np.zeros((len(turn_ends), length), np.float32)
  for b, ends in enumerate(turn_ends):
    for i in ends:
      if not 0 <= int(i) < length:
        raise ValueError(f"turn_ends_from_indices: turn end {i} of row {b} is outside [0, {length})")
      out[b, int(i)] = 1.0
  return out


def place_turn_rewards(turn_rewards: list[list[float]] | Array, turn_ends: Array) -> np.ndarray:
  """[B, T] rewards: the k-th turn reward of a row on the row's k-th turn-end marker."""
  check_array("place_turn_rewards", "turn_ends", turn_ends, ndim=2, binary=True)
  ends = np.asarray(turn_ends) > 0
  if len(turn_rewards) != ends.shape[0]:
    raise ValueError(f"place_turn_rewards: 'turn_rewards' has {len(turn_rewards)} rows but "
                     f"'turn_ends' has {ends.shape[0]}")
  out = np.zeros(ends.shape, np.float32)
  for b, row in enumerate(turn_rewards):
    row = np.asarray(row, np.float32).reshape(-1)
    positions = np.flatnonzero(ends[b])
    if row.size != positions.size:
      raise ValueError(f"place_turn_rewards: row {b} has {row.size} turn rewards but "
                       f"{positions.size} turn ends")
    if not np.all(np.isfinite(row)):
      raise ValueError(f"place_turn_rewards: 'turn_rewards' row {b} contains NaN or infinite values")
    out[b, positions] = row
  return out


def adaptive_lambda(mask: Array, alpha: float) -> np.ndarray:
  """[B] length-adaptive policy lambda 1 - 1/(alpha * L), L = action tokens per row (VAPO).

  Clipped to [0, 1] so very short rows fall back to lambda 0 (one-step TD).
  """
  check_array("adaptive_lambda", "mask", mask, ndim=2, binary=True)
  if not alpha > 0:
    raise ValueError(f"adaptive_lambda: 'alpha' must be > 0, got {alpha!r}")
  lengths = np.asarray(mask, np.float64).sum(axis=1)
  with np.errstate(divide="ignore"):
    lam = 1.0 - 1.0 / (alpha * lengths)
  return np.clip(np.nan_to_num(lam, neginf=0.0), 0.0, 1.0).astype(np.float32)


# --------------------------------------------------------------------------------------
# Normalisation and critic-free estimators.
# --------------------------------------------------------------------------------------


@functools.partial(jax.jit, static_argnames=("shift_mean",))
def _masked_whiten_core(x, mask, eps, shift_mean):
  count = mask.sum()
  mean = (x * mask).sum() / count
  var = (((x - mean) ** 2) * mask).sum() / (count - 1.0)
  whitened = (x - mean) * jax.lax.rsqrt(var + eps)
  return whitened if shift_mean else whitened + mean


def masked_whiten(x: Array, mask: Array, *, shift_mean: bool = True, eps: float = 1e-8) -> jax.Array:
  """(x - mean) / sqrt(var + eps) over the mask=1 entries (unbiased variance).

  With `shift_mean=False` the mean is added back (only the scale changes). All positions
  are transformed; callers mask the result. Needs at least 2 valid tokens.
  """
  fn = "masked_whiten"
  check_array(fn, "x", x, ndim=np.ndim(x))
  check_array(fn, "mask", mask, ndim=np.ndim(x), shape=shape_of(x), binary=True)
  if is_concrete(mask):
    count = float(np.asarray(mask, np.float64).sum()) if not isinstance(mask, jax.Array) \
        else float(jnp.sum(mask))
    if count < 2:
      raise ValueError(f"masked_whiten: 'mask' has {count:g} valid tokens; the unbiased variance "
                       "needs at least 2")
  return _masked_whiten_core(as_float32(x), as_float32(mask), eps, shift_mean)


def scale_advantages_by_sign(advantages: Array, mask: Array, *, positive: float = 1.0,
                             negative: float = 1.0) -> jax.Array:
  """Multiplies positive advantages by `positive` and negative ones by `negative` (both in [0, 1]).

  (1, 1) is the plain estimator. `negative = 0` keeps only the reinforcement of
  better-than-expected tokens (rejection-sampling fine-tuning weighted by the advantage);
  `positive = 0` keeps only the push-down of worse-than-expected ones (negative sample
  reinforcement, Zhu et al. 2025); values in between follow asymmetric REINFORCE (Arnal et al.
  2025). docs/algorithms.md, "Advantage signs".
  """
  fn = "scale_advantages_by_sign"
  check_array(fn, "advantages", advantages, ndim=np.ndim(advantages))
  check_array(fn, "mask", mask, ndim=np.ndim(advantages), shape=shape_of(advantages), binary=True)
  for name, scale in (("positive", positive), ("negative", negative)):
    if not 0.0 <= float(scale) <= 1.0:
      raise ValueError(f"{fn}: {name!r} must be in [0, 1], got {scale}")
  a = as_float32(advantages)
  return jnp.where(a < 0, a * float(negative), a * float(positive)) * as_float32(mask)


def high_entropy_token_weights(entropy: Array, mask: Array, fraction: float) -> np.ndarray:
  """Policy-gradient token weights that keep only the `fraction` of action tokens with the
  highest entropy in the batch ("forking tokens", Wang et al. 2025), scaled by 1 / (the kept
  share) so that a token-mean loss keeps its size. Other action tokens weigh 0; tokens outside
  `mask` weigh 1 (the loss masks them anyway). `fraction = 1` is every action token.

  At a near-deterministic token the sampled choice carries almost no information about the
  reward, but its gradient still moves the shared parameters; leaving such tokens out removes
  that noise from the update (docs/algorithms.md, "High-entropy tokens").
  """
  fn = "high_entropy_token_weights"
  check_array(fn, "entropy", entropy, ndim=2)
  check_array(fn, "mask", mask, ndim=2, shape=shape_of(entropy), binary=True)
  if not 0.0 < float(fraction) <= 1.0:
    raise ValueError(f"{fn}: 'fraction' must be in (0, 1], got {fraction}")
  ent, m = np.asarray(entropy, np.float64), np.asarray(mask, np.float64) > 0
  weights = np.ones(ent.shape, np.float32)
  if fraction >= 1.0 or not m.any():
    return weights
  threshold = np.quantile(ent[m], 1.0 - float(fraction))
  keep = m & (ent >= threshold)
  weights[m] = 0.0
  weights[keep] = m.sum() / keep.sum()
  return weights


def _check_group_args(fn: str, scores: Array, group_ids: Array) -> None:
  check_array(fn, "scores", scores, ndim=1)
  check_array(fn, "group_ids", group_ids, ndim=1, shape=shape_of(scores))
  if is_concrete(group_ids) and np.asarray(group_ids).dtype.kind not in "iub":
    ids = np.asarray(group_ids)
    if not np.all(ids == np.round(ids)):
      raise ValueError(f"{fn}: 'group_ids' must be integers")


@functools.partial(jax.jit, static_argnames=("normalize_std",))
def _grpo_core(scores, group_ids, eps, normalize_std):
  same = (group_ids[:, None] == group_ids[None, :]).astype(jnp.float32)
  count = same.sum(axis=1)
  single = count < 2
  mean = jnp.where(single, 0.0, same @ scores / count)
  # Unbiased (N-1) group std, as torch.std; a group of one uses mean 0, std 1.
  var = (same * (scores[None, :] - mean[:, None]) ** 2).sum(axis=1) / jnp.maximum(count - 1.0, 1.0)
  std = jnp.where(single, 1.0, jnp.sqrt(var))
  centered = scores - mean
  return centered / (std + eps) if normalize_std else centered


def grpo(scores: Array, group_ids: Array, *, normalize_std: bool = True, eps: float = 1e-6) -> jax.Array:
  """[B] group-relative advantages (score - group mean) / (group std + eps).

  `normalize_std=False` is Dr.GRPO (no division by the std). A group of one has mean 0 and
  std 1, so its advantage is its score (divided by 1 + eps). The std uses N-1.
  """
  _check_group_args("grpo", scores, group_ids)
  return _grpo_core(as_float32(scores), jnp.asarray(group_ids), eps, bool(normalize_std))


@jax.jit
def _rloo_core(scores, group_ids):
  same = (group_ids[:, None] == group_ids[None, :]).astype(jnp.float32)
  count = same.sum(axis=1)
  others = (same @ scores - scores) / jnp.maximum(count - 1.0, 1.0)
  return scores - jnp.where(count < 2, 0.0, others)


def rloo(scores: Array, group_ids: Array) -> jax.Array:
  """[B] leave-one-out advantages: score minus the mean score of the rest of its group.

  A group of one has no other sample, so its baseline is 0 (as in verl).
  """
  _check_group_args("rloo", scores, group_ids)
  return _rloo_core(as_float32(scores), jnp.asarray(group_ids))


def group_mean_baseline(scores: Array, group_ids: Array) -> jax.Array:
  """[B] score minus its group mean (groups of one keep their score), REINFORCE++-baseline."""
  _check_group_args("group_mean_baseline", scores, group_ids)
  return _grpo_core(as_float32(scores), jnp.asarray(group_ids), 0.0, False)


def reinforce_pp(rewards: Array, mask: Array, *, gamma: float = 1.0,
                 turn_ends: Array | None = None) -> jax.Array:
  """REINFORCE++: discounted reward-to-go over action tokens, whitened over the batch.

  The reward-to-go uses the same carry-forward recurrence as `gae` (values 0, lambda 1),
  so observation tokens add no discount. Subtract a group-mean baseline from the scores
  first (`group_mean_baseline`) for the REINFORCE++-baseline variant.
  """
  check_array("reinforce_pp", "rewards", rewards, ndim=2)
  zeros = np.zeros(shape_of(rewards), np.float32)
  advantages, _ = gae(rewards, zeros, mask, gamma=gamma, lam=1.0, turn_ends=turn_ends)
  return masked_whiten(advantages, mask) * as_float32(mask)


# --------------------------------------------------------------------------------------
# Registered estimators: estimator(batch, **options) -> (advantages [B, T], returns [B, T] | None)
# --------------------------------------------------------------------------------------


def _need(batch: Mapping[str, Array], key: str, estimator: str) -> Array:
  if key not in batch or batch[key] is None:
    raise KeyError(f"advantage estimator {estimator!r} needs batch[{key!r}]; got keys "
                   f"{sorted(batch)}")
  return batch[key]


def token_rewards_from_batch(batch: Mapping[str, Array], estimator: str = "gae",
                             scores: Array | None = None) -> np.ndarray | jax.Array:
  """[B, T] rewards: `scores` on the last action token plus `token_rewards` if present."""
  mask = _need(batch, "mask", estimator)
  scores = batch.get("scores") if scores is None else scores
  extra = batch.get("token_rewards")
  if scores is None and extra is None:
    raise KeyError(f"advantage estimator {estimator!r} needs batch['scores'] and/or "
                   f"batch['token_rewards']; got keys {sorted(batch)}")
  total = 0.0
  if scores is not None:
    total = place_terminal_reward(np.asarray(scores, np.float32), mask)
  if extra is not None:
    check_array(estimator, "token_rewards", extra, ndim=2, shape=shape_of(mask))
    total = total + as_float32(extra) if isinstance(total, np.ndarray) else as_float32(extra)
  return total


def _turn_ends(batch: Mapping[str, Array], discount_per: str, mask: Array) -> Array | None:
  if discount_per not in ("token", "turn"):
    raise ValueError(f"discount_per must be 'token' or 'turn', got {discount_per!r}")
  if discount_per != "turn":
    return None
  if batch.get("turn_ends") is not None:
    return batch["turn_ends"]
  return turn_ends_from_mask(mask)


def truncation_bootstrap(batch: Mapping[str, Array], truncation: str) -> np.ndarray | None:
  """[B] bootstrap values of truncated rows in "bootstrap" mode: the value of the state after
  the last action token L, `values[:, L + 1]` (values[:, t] is V(s_t), the state that predicts
  token t; values[:, L] is the state before L was sampled). Needs that position in the batch,
  unmasked: the trainer passes the critic's values at every position."""
  truncated = batch.get("truncated")
  if truncation not in ("bootstrap", "terminal"):
    raise ValueError(f"truncation must be 'bootstrap' or 'terminal', got {truncation!r}")
  if truncated is None or truncation == "terminal":
    return None
  mask = batch["mask"]
  check_array("truncation_bootstrap", "truncated", truncated, ndim=1, shape=(shape_of(mask)[0],))
  values = np.asarray(batch["values"], np.float32)
  rows = np.flatnonzero(np.asarray(truncated, bool))
  bootstrap = np.zeros((values.shape[0],), np.float32)
  if not rows.size:
    return bootstrap
  after = last_action_index(np.asarray(mask)[rows]) + 1
  if np.any(after >= values.shape[1]):
    raise ValueError(f"truncation_bootstrap: a truncated row needs the position after its last action token "
                     f"(its bootstrap value); rows {rows[after >= values.shape[1]][:8].tolist()} end at the "
                     "batch's last position: pad the batch one position further")
  bootstrap[rows] = values[rows, after]
  return bootstrap


def truncation_metrics(truncated: Array | None, *, advantage_estimator: str, truncation: str) -> dict[str, float]:
  """How truncated trajectories were scored, so a cut-off run never reads as a plain failure.

  `adv/truncated_frac`: share of rows cut off (max turns/tokens/time);
  `adv/truncation_bootstrapped`: 1.0 when they were bootstrapped from the value after their last
  action token
  (only GAE has a critic to bootstrap from), 0.0 when scored as terminal.
  """
  frac = float(np.mean(np.asarray(truncated, np.float32))) if truncated is not None else 0.0
  uses_critic = advantage_estimator == "gae"
  boot = float(uses_critic and truncation == "bootstrap")
  return {"adv/truncated_frac": frac, "adv/truncation_bootstrapped": boot}


def _drop_rows_without_actions(estimator):
  """Runs a registered estimator on the rows that hold an action token; the others get zeros.

  A row of prompt tokens only (an episode whose sandbox never opened, whose prompt left no
  token budget, or that timed out before its first decode) has nothing to train and no last
  action token to carry its score: left in, it crashes the reward placement, or pulls its
  group's baseline with a score the policy never earned. Padding rows are dropped the same way.
  """

  @functools.wraps(estimator)
  def wrapped(batch: Mapping[str, Array], **options) -> tuple[jax.Array, jax.Array | None]:
    mask = batch.get("mask")
    if mask is None or not is_concrete(mask) or np.ndim(mask) != 2:
      return estimator(batch, **options)  # the estimator's own checks name the problem
    has_action = np.asarray(mask).any(axis=1)
    if has_action.all():
      return estimator(batch, **options)
    if not has_action.any():
      raise ValueError(f"{estimator.__name__}: no row of 'mask' has an action token (mask == 1)")
    rows = np.flatnonzero(has_action)
    batch_size = np.shape(mask)[0]
    kept = {k: (v if v is None or np.ndim(v) == 0 or np.shape(v)[0] != batch_size
                else (v if hasattr(v, "shape") else np.asarray(v))[rows])
            for k, v in batch.items()}
    advantages, returns = estimator(kept, **options)

    def scatter(x):
      return jnp.zeros((batch_size,) + tuple(x.shape[1:]), x.dtype).at[rows].set(x)

    return scatter(advantages), None if returns is None else scatter(returns)

  return wrapped


@ADVANTAGE_ESTIMATORS.register("gae")
@_drop_rows_without_actions
def gae_estimator(batch: Mapping[str, Array], *, gamma: float, lam: float, value_lam: float,
                  adaptive_lam_alpha: float, discount_per: str, truncation: str,
                  whiten_advantages: bool) -> tuple[jax.Array, jax.Array]:
  """GAE with a critic: `value_lam` is a decoupled lambda for the value targets,
  `adaptive_lam_alpha` > 0 sets the policy's lambda to 1 - 1/(alpha L), `discount_per` is
  "token" or "turn", `truncation` "bootstrap" or "terminal"."""
  mask = _need(batch, "mask", "gae")
  values = _need(batch, "values", "gae")
  rewards = token_rewards_from_batch(batch, "gae")
  gamma = float(gamma)
  lam = float(lam)
  value_lam = float(value_lam)
  alpha = float(adaptive_lam_alpha)
  policy_lam = adaptive_lambda(mask, alpha) if alpha > 0 else lam
  kwargs = dict(gamma=gamma, bootstrap_values=truncation_bootstrap(batch, truncation),
                turn_ends=_turn_ends(batch, discount_per, mask))
  advantages, returns = gae(rewards, values, mask, lam=policy_lam, **kwargs)
  if alpha > 0 or value_lam != lam:
    _, returns = gae(rewards, values, mask, lam=value_lam, **kwargs)
  mask_f = as_float32(mask)
  if whiten_advantages:
    advantages = masked_whiten(advantages, mask_f)
  return advantages * mask_f, returns * mask_f


def _sequence_to_tokens(per_sequence: jax.Array, mask: Array) -> jax.Array:
  mask_f = as_float32(mask)
  return per_sequence[:, None] * mask_f


def _group_batch(batch: Mapping[str, Array], name: str) -> tuple[Array, Array, Array]:
  mask = _need(batch, "mask", name)
  scores = _need(batch, "scores", name)
  group_ids = _need(batch, "group_ids", name)
  check_array(name, "mask", mask, ndim=2, binary=True)
  check_array(name, "scores", scores, ndim=1, shape=(shape_of(mask)[0],))
  return mask, scores, group_ids


@ADVANTAGE_ESTIMATORS.register("grpo")
@_drop_rows_without_actions
def grpo_estimator(batch: Mapping[str, Array]) -> tuple[jax.Array, None]:
  """GRPO: (score - group mean) / (group std + eps) on every action token of the row."""
  mask, scores, group_ids = _group_batch(batch, "grpo")
  return _sequence_to_tokens(grpo(scores, group_ids, normalize_std=True), mask), None


@ADVANTAGE_ESTIMATORS.register("drgrpo")
@_drop_rows_without_actions
def drgrpo_estimator(batch: Mapping[str, Array]) -> tuple[jax.Array, None]:
  """Dr.GRPO: score - group mean, no std normalisation (pair with a constant-norm loss)."""
  mask, scores, group_ids = _group_batch(batch, "drgrpo")
  return _sequence_to_tokens(grpo(scores, group_ids, normalize_std=False), mask), None


@ADVANTAGE_ESTIMATORS.register("rloo")
@_drop_rows_without_actions
def rloo_estimator(batch: Mapping[str, Array]) -> tuple[jax.Array, None]:
  """RLOO: score minus the leave-one-out group mean on every action token of the row."""
  mask, scores, group_ids = _group_batch(batch, "rloo")
  return _sequence_to_tokens(rloo(scores, group_ids), mask), None


@ADVANTAGE_ESTIMATORS.register("reinforce_pp")
@_drop_rows_without_actions
def reinforce_pp_estimator(batch: Mapping[str, Array], *, gamma: float,
                           discount_per: str) -> tuple[jax.Array, None]:
  """REINFORCE++ (and -baseline when `group_ids` has groups of 2+): optional group-mean
  baseline on the scores, reward-to-go with gamma, batch whitening."""
  mask = _need(batch, "mask", "reinforce_pp")
  scores = batch.get("scores")
  group_ids = batch.get("group_ids")
  if scores is not None and group_ids is not None:
    scores = group_mean_baseline(scores, group_ids)
  rewards = token_rewards_from_batch(batch, "reinforce_pp", scores=scores)
  advantages = reinforce_pp(rewards, mask, gamma=float(gamma),
                            turn_ends=_turn_ends(batch, discount_per, mask))
  return advantages, None
