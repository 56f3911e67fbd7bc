"""The typed boundary between a rollout and the update: `make_train_batch` turns one iteration's
padded episodes and the scoring pass's outputs into a `TrainBatch`, the arrays the PPO step reads.

It owns every per-token decision between "what happened" and "what the gradient sees": KL in the
reward, the advantage estimator, sign scaling, error masking, truncated importance weights,
high-entropy token selection and duration-aware weights. It is a pure function of its inputs
(`RowExchange` carries the only cross-process steps, the identity on one process), so it is
tested on arrays alone (tests/test_train_batch.py).

    settings = AlgoSettings.from_config(config)
    train, metrics = make_train_batch(rollout, scored, settings=settings, kl_coef=0.0,
                                      episodes=episodes, durations=durations)
    train.arrays()  # {"tokens", "valid", "mask", "advantages", "returns", ...}: the update's inputs
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from rl.algo import advantages as advantages_lib
from rl.algo import losses as losses_lib
from rl.algo.batching import RolloutBatch, error_turn_keep
from rl.registry import ADVANTAGE_ESTIMATORS, DURATION_WEIGHTS


@dataclasses.dataclass(frozen=True)
class AlgoSettings:
  """The advantage side of the algorithm (config.algo), read once and frozen: what
  `make_train_batch` and the estimators use. The loss side is rl.algo.update.UpdateSettings."""

  advantage_estimator: str = "gae"
  gamma: float = 1.0
  lam: float = 0.95
  value_lam: float = 0.95
  adaptive_lam_alpha: float = 0.0
  discount_per: str = "token"  # token | turn
  truncation: str = "bootstrap"  # bootstrap | terminal
  whiten_advantages: bool = True
  kl_in: str = "loss"  # reward | loss
  kl_kind: str = "k3"
  positive_advantage_scale: float = 1.0
  negative_advantage_scale: float = 1.0
  error_masking: str = "none"
  tis_cap: float = 0.0
  entropy_token_fraction: float = 1.0
  duration_weight: str = "none"
  # Dr.GRPO's constant: fixed, so the gradient's scale does not follow the padding
  # (config.agent.max_tokens_per_trajectory).
  norm_constant: float = 1.0

  @classmethod
  def from_config(cls, config) -> "AlgoSettings":
    a = config.algo
    return cls(advantage_estimator=a.advantage_estimator, gamma=float(a.gamma), lam=float(a.lam),
               value_lam=float(a.value_lam), adaptive_lam_alpha=float(a.adaptive_lam_alpha),
               discount_per=a.discount_per, truncation=a.truncation,
               whiten_advantages=bool(a.whiten_advantages), kl_in=a.kl_in, kl_kind=a.kl_kind,
               positive_advantage_scale=float(a.positive_advantage_scale),
               negative_advantage_scale=float(a.negative_advantage_scale),
               error_masking=a.error_masking, tis_cap=float(a.tis_cap),
               entropy_token_fraction=float(a.entropy_token_fraction),
               duration_weight=a.duration_weight,
               norm_constant=float(config.agent.max_tokens_per_trajectory))

  @property
  def uses_critic(self) -> bool:
    return self.advantage_estimator == "gae"

  def estimator_options(self, name: str | None = None) -> dict[str, Any]:
    """The keyword arguments estimator `name` (default: this one) declares, from these settings:
    `ADVANTAGE_ESTIMATORS.get(name)(batch, **settings.estimator_options(name))`."""
    fn = ADVANTAGE_ESTIMATORS.get(name or self.advantage_estimator)
    params = inspect.signature(fn).parameters.values()
    wanted = [p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY]
    unknown = [n for n in wanted if not hasattr(self, n)]
    if unknown:
      raise TypeError(f"advantage estimator {name!r} takes {unknown}, which AlgoSettings does not have")
    return {n: getattr(self, n) for n in wanted}


def _identity(x):
  return x


@dataclasses.dataclass(frozen=True)
class RowExchange:
  """How this process's rows meet every other process's. One process: the identity (the default).

  gather: a tree of this process's row arrays -> every process's rows in process order.
  local: an array of the global batch's rows -> this process's rows.
  total: a dict of host scalars -> their sums over processes.
  row_offset: this process's first episode among every process's trainable episodes.
  process_index: this process's index (its group ids are shifted to be unique over processes).
  """

  gather: Callable[[Any], Any] = _identity
  local: Callable[[Any], Any] = _identity
  total: Callable[[dict], dict] = _identity
  row_offset: int = 0
  process_index: int = 0


# The update's [B, T] inputs (and [B] ones); the optional ones are present only when used.
_ROW_ARRAYS = ("tokens", "valid", "mask", "advantages", "returns", "old_logprobs", "old_values",
               "ref_logprobs", "sampler_logprobs", "token_weights")
_SEQUENCE_ARRAYS = ("sample_weights", "has_sampler")
_OPTIONAL = ("policy_mask", "grammar_states", "support", "ref_top_ids", "ref_top_logprobs")


@dataclasses.dataclass(frozen=True)
class TrainBatch:
  """One iteration's update inputs, this process's rows: [B, T] token arrays and [B] sequence
  arrays, shapes checked once here. `mask` marks action tokens (the critic's tokens);
  `policy_mask` is set when error masking leaves some of them out of the policy loss."""

  tokens: np.ndarray  # int32 [B, T]
  valid: np.ndarray  # float32 [B, T]: real tokens (prompt, actions, observations)
  mask: np.ndarray  # float32 [B, T]: action tokens
  advantages: np.ndarray  # float32 [B, T], 0 off the action tokens
  returns: np.ndarray  # float32 [B, T] value targets (zeros without a critic)
  old_logprobs: np.ndarray  # float32 [B, T]: the scoring pass's, on action tokens
  old_values: np.ndarray  # float32 [B, T]
  ref_logprobs: np.ndarray  # float32 [B, T]
  sampler_logprobs: np.ndarray  # float32 [B, T]: the sampler's, on the scorer's support
  token_weights: np.ndarray  # float32 [B, T]: TIS weights x high-entropy selection (1 elsewhere)
  sample_weights: np.ndarray  # float32 [B]: duration-aware weights
  has_sampler: np.ndarray  # float32 [B]
  lengths: np.ndarray  # int32 [B]: real tokens per row (for trimming mini-batches)
  full_logprobs: np.ndarray  # float32 [B, T]: the scorer's on the full softmax (diagnostics)
  policy_mask: np.ndarray | None = None  # float32 [B, T]
  grammar_states: np.ndarray | None = None  # int32 [B, T]: the tool-call grammar's states
  support: np.ndarray | None = None  # int32 [B, T, K]: the sampler's top-k/top-p support
  ref_top_ids: np.ndarray | None = None  # int32 [B, T, K]
  ref_top_logprobs: np.ndarray | None = None  # float32 [B, T, K]

  def __post_init__(self):
    B, T = self.tokens.shape
    for name in _ROW_ARRAYS + ("full_logprobs",):
      if getattr(self, name).shape != (B, T):
        raise ValueError(f"TrainBatch.{name} has shape {getattr(self, name).shape}, expected {(B, T)}")
    for name in _SEQUENCE_ARRAYS + ("lengths",):
      if getattr(self, name).shape != (B,):
        raise ValueError(f"TrainBatch.{name} has shape {getattr(self, name).shape}, expected {(B,)}")
    for name in _OPTIONAL:
      x = getattr(self, name)
      if x is not None and x.shape[:2] != (B, T):
        raise ValueError(f"TrainBatch.{name} has shape {x.shape}, expected {(B, T)} leading")

  @property
  def shape(self) -> tuple[int, int]:
    return tuple(self.tokens.shape)

  def arrays(self) -> dict[str, np.ndarray]:
    """The arrays the update step reads, by name (the optional ones only when set)."""
    out = {name: getattr(self, name) for name in _ROW_ARRAYS + _SEQUENCE_ARRAYS}
    out.update({name: getattr(self, name) for name in _OPTIONAL if getattr(self, name) is not None})
    return out


def make_train_batch(rollout: RolloutBatch, scored: Mapping[str, np.ndarray], *, settings: AlgoSettings,
                     kl_coef: float, episodes: Sequence[Any], durations: np.ndarray,
                     grammar_states: np.ndarray | None = None,
                     exchange: RowExchange = RowExchange()) -> tuple[TrainBatch, dict[str, float]]:
  """The update's inputs for `rollout` (this process's padded rows; the first len(episodes) hold
  `episodes`, the rest are fully masked padding) and the iteration's advantage metrics.

  `scored`: the scoring pass's [B, T] outputs under the current weights: "logprobs" (and
  "full_logprobs" on a truncated support), "entropy", "values" with a critic, "ref_logprobs"
  with a reference, "support"/"ref_top_ids"/"ref_top_logprobs" when used.
  `kl_coef`: the KL controller's coefficient now. `episodes`: this process's trainable episodes
  (their `success` and `turn_errors` decide error masking). `durations`: [N] seconds of every
  process's trainable episodes (rl.outcome.duration), for the duration-aware weights.
  """
  s = settings
  g = exchange.gather
  B, _ = rollout.tokens.shape
  metrics: dict[str, float] = {}
  mask = rollout.action_mask
  real = np.arange(B) < len(episodes)  # the rows that hold an episode
  token_rewards = rollout.turn_rewards.copy()
  if s.kl_in == "reward" and "ref_logprobs" in scored:
    kl = np.asarray(losses_lib.kl_penalty(scored["logprobs"], scored["ref_logprobs"], s.kl_kind)) * mask
    token_rewards -= kl_coef * kl
    sums = exchange.total({"kl": kl.sum(), "tokens": mask.sum()})
    metrics["kl/reward_kl_mean"] = float(sums["kl"] / max(sums["tokens"], 1))
  group_ids = rollout.group_ids
  shift = exchange.process_index * B
  if shift:  # unique over processes (padding rows' negative ids too)
    group_ids = np.where(group_ids >= 0, group_ids + shift, group_ids - shift).astype(group_ids.dtype)
  est_batch = {"mask": mask, "scores": rollout.scores, "token_rewards": token_rewards,
               "group_ids": group_ids, "truncated": rollout.truncated}
  if "values" in scored:  # at every position: GAE reads action tokens and a bootstrap after them
    est_batch["values"] = scored["values"]
  # The estimators see the global batch: batch whitening and any other batch statistic are the
  # whole iteration's, as one process given every row computes them (groups are whole on one
  # process either way). Their inputs are small host arrays, so every process gathers them and
  # keeps its own rows of the result.
  est_batch = g(est_batch)
  estimator = ADVANTAGE_ESTIMATORS.get(s.advantage_estimator)
  advantages, returns = estimator(est_batch, **s.estimator_options())
  metrics.update(advantages_lib.truncation_metrics(est_batch["truncated"][g(real)],
                                                   advantage_estimator=s.advantage_estimator,
                                                   truncation=s.truncation))
  if s.positive_advantage_scale != 1.0 or s.negative_advantage_scale != 1.0:
    advantages = advantages_lib.scale_advantages_by_sign(
        advantages, est_batch["mask"], positive=s.positive_advantage_scale, negative=s.negative_advantage_scale)
  advantages, returns = exchange.local(advantages), (None if returns is None else exchange.local(returns))
  policy_mask = mask  # the action tokens of the policy loss (the critic's are `mask`)
  if s.error_masking != "none":
    keep = error_turn_keep(episodes, rollout.turn_ids, s.error_masking)
    sums = exchange.total({"kept": (keep * mask).sum(), "tokens": mask.sum()})
    metrics["adv/error_masked_fraction"] = float(1.0 - sums["kept"] / max(sums["tokens"], 1.0))
    advantages = advantages * keep
    policy_mask = mask * keep
  advantages = np.asarray(advantages, np.float32)
  returns = np.zeros_like(advantages) if returns is None else np.asarray(returns, np.float32)
  # Duration-aware weights (rl.algo.losses, DURATION_WEIGHTS) over every process's episodes
  # ("linear" divides by the batch's mean); padding rows (fully masked) weigh 1.
  sample_weights = np.ones((B,), np.float32)
  sample_weights[:len(episodes)] = DURATION_WEIGHTS.get(s.duration_weight)(durations)[
      exchange.row_offset:exchange.row_offset + len(episodes)]
  token_weights = np.ones_like(mask)
  has_sampler = np.ones((B,), np.float32)
  # The sampler reports log softmax(logits / T); with a truncated support the scorer's
  # "logprobs" are renormalised on it and "full_logprobs" are comparable with the sampler's.
  full_logprobs = scored.get("full_logprobs", scored["logprobs"])
  sampler_logprobs = rollout.sampler_logprobs + (scored["logprobs"] - full_logprobs)
  if s.tis_cap > 0:  # truncated importance weights against the sampler's log-probs
    token_weights = np.minimum(np.exp(np.clip(full_logprobs - rollout.sampler_logprobs, -20, 20)),
                               s.tis_cap).astype(np.float32) * mask + (1 - mask)
  if s.entropy_token_fraction < 1.0:
    # The batch's entropy quantile: every process's action tokens.
    entropy_all, policy_mask_all = g((scored["entropy"], policy_mask))
    keep = exchange.local(advantages_lib.high_entropy_token_weights(
        entropy_all, policy_mask_all, s.entropy_token_fraction))
    token_weights = token_weights * keep
    # Read off the weights the loss gets, so the metric shows what reaches the update.
    kept_all = g(token_weights)
    metrics["adv/entropy_kept_fraction"] = float(((kept_all > 0) * policy_mask_all).sum()
                                                 / max(policy_mask_all.sum(), 1.0))
  batch = TrainBatch(
      tokens=rollout.tokens, valid=rollout.valid, mask=mask, advantages=advantages, returns=returns,
      old_logprobs=scored["logprobs"] * mask,
      old_values=scored.get("values", np.zeros_like(mask)) * mask,
      ref_logprobs=scored.get("ref_logprobs", scored["logprobs"]) * mask,
      sampler_logprobs=sampler_logprobs * mask, token_weights=token_weights,
      sample_weights=sample_weights, has_sampler=has_sampler, lengths=rollout.lengths,
      full_logprobs=full_logprobs,
      policy_mask=None if policy_mask is mask else policy_mask,  # error-masked tokens leave the policy loss
      grammar_states=grammar_states, support=scored.get("support"),
      ref_top_ids=scored.get("ref_top_ids"), ref_top_logprobs=scored.get("ref_top_logprobs"))
  return batch, metrics

