"""The PPO/GRPO-family update and the SFT step as jitted pure functions.

State is a `TrainState` pytree (params and optimizer states of the policy and,
with a separate critic, of the critic). Model structure (`nnx.GraphDef`) is static
and closed over, following the functional-core pattern: the model is split once,
and every jitted function takes and returns plain pytrees.

Exact micro-batching: a mini-batch [M, T] is reshaped into [M/m, m, T] and
scanned; every micro-batch loss is computed with the *mini-batch's* global token
and sequence counts, so the summed loss, gradients and metrics equal those of
the unsplit mini-batch (tested in tests/test_update.py).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Any, Callable

import flax.struct
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

from rl import lanes as lanes_lib
from rl import models as model_lib
from rl.algo import losses as losses_lib
from rl.registry import POLICY_LOSSES, VALUE_LOSSES


@flax.struct.dataclass
class TrainState:
  step: jax.Array
  policy: Any  # nnx.State of policy params (with the value head when value_head == "shared")
  policy_opt: Any
  critic: Any = None  # nnx.State of a separate critic, or None
  critic_opt: Any = None


def optimizers_from_config(config: Any, policy_steps: int, critic_steps: int):
  """(policy_tx, critic_tx) of `config.optim`, with schedules of `policy_steps` and `critic_steps`;
  with a shared value head (`model.value_head = "shared"`) the critic's optimizer trains the head
  alone (`value_head_optimizer`)."""
  o = config.optim
  policy_tx = make_optimizer(o.policy_lr, schedule=o.schedule, total_steps=policy_steps,
                             warmup_steps=o.warmup_steps, weight_decay=o.weight_decay, grad_clip=o.grad_clip,
                             eps=o.policy_adam_eps, b2=o.adam_b2, kind=o.policy_optimizer,
                             trainable=o.policy_trainable)
  critic_tx = make_optimizer(o.critic_lr, schedule=o.schedule, total_steps=critic_steps,
                             warmup_steps=o.warmup_steps, weight_decay=o.weight_decay, grad_clip=o.grad_clip,
                             b2=o.adam_b2)
  if config.model.value_head == "shared":
    critic_tx = value_head_optimizer(critic_tx)
  return policy_tx, critic_tx


def train_state_shardings(policy: Any, critic: Any, policy_tx, critic_tx, mesh, rules) -> TrainState:
  """A TrainState of shardings for `mesh`: each weight by its logical axes and `rules`, each
  optimizer leaf like the weight it mirrors (Adam's moments), the step count replicated.
  `policy` and `critic` (None with a shared value head) are nnx States, concrete or abstract
  (`nnx.eval_shape`): the trainer builds its state with these, scripts/memory_plan.py plans it."""
  from rl import parallel

  policy_sharding = parallel.state_shardings(policy, mesh, rules)
  critic_sharding = None if critic is None else parallel.state_shardings(critic, mesh, rules)
  critic_params, critic_params_sharding = ((policy, policy_sharding) if critic is None
                                           else (critic, critic_sharding))

  def opt_sharding(tx, params, shardings):
    return parallel.shardings_like(jax.eval_shape(tx.init, params), params, shardings, mesh)

  return TrainState(step=parallel.replicated(mesh), policy=policy_sharding,
                    policy_opt=opt_sharding(policy_tx, policy, policy_sharding), critic=critic_sharding,
                    critic_opt=opt_sharding(critic_tx, critic_params, critic_params_sharding))


@dataclasses.dataclass(frozen=True)
class UpdateSettings:
  """The static (hashable) knobs of the update step, read once from the config."""

  policy_loss: str = "ppo"
  value_loss: str = "clipped"
  value_head: str = "separate"  # shared | separate
  loss_agg: str = "token-mean"
  clip_low: float = 0.2
  clip_high: float = 0.2
  clip_c: float = 3.0
  # GSPO's own clip range and aggregation (config.algo.gspo_*; the paper's).
  gspo_clip_low: float = 3e-4
  gspo_clip_high: float = 4e-4
  gspo_loss_agg: str = "seq-mean-token-mean"
  value_clip: float = 0.5
  value_coef: float = 0.5
  entropy_coef: float = 0.0
  kl_in_loss: bool = False
  kl_kind: str = "k3"
  logits_chunk: int = 256
  micro_batch_size: int = 8
  # algo.logprob_support = "sampler": log-probs renormalised on the sampler's top-k/top-p support
  # (0 = the full softmax).
  support_top_k: int = 0
  support_top_p: float = 1.0
  # algo.kl_topk > 0: the KL in the loss is exact over the reference's top-k tokens plus one
  # bucket for the rest of the vocabulary, instead of the sampled-token estimator `kl_kind`.
  kl_topk: int = 0

  @classmethod
  def from_config(cls, config) -> "UpdateSettings":
    a = config.algo
    return cls(policy_loss=a.policy_loss, value_loss=a.value_loss, value_head=config.model.value_head,
               loss_agg=a.loss_agg, clip_low=a.clip_low, clip_high=a.clip_high, clip_c=a.clip_c,
               gspo_clip_low=a.gspo_clip_low, gspo_clip_high=a.gspo_clip_high, gspo_loss_agg=a.gspo_loss_agg,
               value_clip=a.value_clip, value_coef=a.value_coef, entropy_coef=a.entropy_coef,
               kl_in_loss=a.kl_in == "loss" and a.kl_coef > 0, kl_kind=a.kl_kind,
               logits_chunk=config.model.logits_chunk, micro_batch_size=config.optim.micro_batch_size,
               kl_topk=int(a.kl_topk), **_support_settings(config))

  @property
  def truncated(self) -> bool:
    return self.support_top_k > 0

  @property
  def packable(self) -> bool:
    """Whether a mini-batch may be packed (rl.algo.batching.pack_minibatch): token-level losses only.
    GSPO's ratio is a mean over its row, which a packed row would share between sequences."""
    return self.policy_loss != "gspo" and self.loss_agg in ("token-mean", "token-sum")


def _support_settings(config) -> dict:
  support = config.algo.logprob_support
  if support == "full":
    return {}
  return {"support_top_k": int(config.sampling.top_k), "support_top_p": float(config.sampling.top_p)}


def make_optimizer(lr: float, *, schedule: str, total_steps: int, warmup_steps: int = 0,
                   weight_decay: float = 0.0, grad_clip: float = 0.0, eps: float = 1e-8,
                   b2: float = 0.95, kind: str = "adamw",
                   trainable: str = "") -> optax.GradientTransformation:
  """Global-norm clipping then AdamW (or SGD with momentum 0.9) with a warm-up + schedule.

  `trainable`: a regular expression over parameter paths (`param_path`, e.g.
  "layers/0/post_attention_layernorm/weight"); only the parameters it matches (`re.search`) are
  updated, the rest are frozen (no update, no optimiser state; the clipping norm covers the
  trained ones only). "" trains every parameter.

  `eps` matters for RL on small batches: with the default 1e-8, a parameter whose gradient is
  pure noise moves as far per step as one with a consistent signal (Adam's update is about
  lr * sign(g) while its moments are young). An `eps` near the typical gradient magnitude
  damps those steps (docs/algorithms.md, "Optimiser"). `kind="sgd"` removes the
  normalisation altogether: a step is lr times the (clipped) gradient.
  """
  total_steps = max(total_steps, warmup_steps + 1)
  if schedule == "constant":
    sched = optax.join_schedules([optax.linear_schedule(0.0, lr, warmup_steps), optax.constant_schedule(lr)],
                                 [warmup_steps]) if warmup_steps else optax.constant_schedule(lr)
  elif schedule == "cosine":
    sched = optax.warmup_cosine_decay_schedule(0.0, lr, max(warmup_steps, 0), total_steps, lr * 0.1)
  elif schedule == "linear":
    sched = optax.join_schedules([optax.linear_schedule(0.0, lr, max(warmup_steps, 1)),
                                  optax.linear_schedule(lr, lr * 0.1, total_steps - warmup_steps)],
                                 [max(warmup_steps, 1)])
  else:
    raise ValueError(f"unknown learning-rate schedule {schedule!r}")
  parts = [optax.clip_by_global_norm(grad_clip)] if grad_clip > 0 else []
  if kind == "adamw":
    parts.append(optax.adamw(sched, b1=0.9, b2=b2, eps=eps, weight_decay=weight_decay))
  elif kind == "sgd":  # steps proportional to the gradient: no per-parameter normalisation
    if weight_decay:
      parts.append(optax.add_decayed_weights(weight_decay))
    parts.append(optax.sgd(sched, momentum=0.9))
  else:
    raise ValueError(f"unknown optimiser {kind!r}; expected 'adamw' or 'sgd'")
  tx = optax.chain(*parts)
  if not trainable:
    return tx
  pattern = re.compile(trainable)

  def labels(params):
    out = jax.tree_util.tree_map_with_path(
        lambda path, _: "train" if pattern.search(param_path(path)) else "freeze", params)
    if "train" not in jax.tree.leaves(out):
      names = ", ".join(param_path(p) for p, _ in jax.tree_util.tree_flatten_with_path(params)[0][:6])
      raise ValueError(f"trainable={trainable!r} matches no parameter (paths look like: {names}, ...)")
    return out

  return optax.multi_transform({"train": tx, "freeze": optax.set_to_zero()}, labels)


VALUE_HEAD_PARAMS = ("value_head", "value_bias")


def value_head_optimizer(tx: optax.GradientTransformation) -> optax.GradientTransformation:
  """`tx` on a shared value head's parameters (VALUE_HEAD_PARAMS) of a policy state, every other
  parameter frozen: with model.value_head = "shared" the critic's own steps (the critic warm-up,
  critic_updates_per_policy_update) train the head alone, and the trunk stays the policy's."""
  labels = lambda params: jax.tree_util.tree_map_with_path(
      lambda path, _: "head" if param_path(path) in VALUE_HEAD_PARAMS else "freeze", params)
  return optax.multi_transform({"head": tx, "freeze": optax.set_to_zero()}, labels)


def param_path(path) -> str:
  """A parameter's tree path as "layers/0/self_attn/q_proj" (NNX's `.value` leaf key dropped)."""
  return jax.tree_util.keystr(path, simple=True, separator="/").removesuffix("/value")


# --- per-micro-batch quantities -----------------------------------------------------------------


def _policy_forward(graphdef, params, tokens, valid, temperature, settings: UpdateSettings,
                    support=None, gather_ids=None, top_logprobs=0, grammar=(None, None),
                    segment_ids=None, needed=None):
  """Per-token log-probs (and entropy, values). With a truncated sampler (settings.truncated)
  and no `support`, the support is computed from these params and returned; with `support`,
  the log-probs are renormalised on it. `grammar` = (states [B, T], table): constrained
  decoding's masked distributions. `segment_ids`: packed rows (rl.algo.batching.pack_minibatch), in
  place of `valid`. `needed` [B, T]: the positions whose outputs are used (the action mask);
  the others are 0 and cost no logits."""
  model = nnx.merge(graphdef, params)
  truncated = settings.truncated and support is None
  return model_lib.token_logprobs(model, tokens, None if segment_ids is not None else valid,
                                  segment_ids=segment_ids, temperature=temperature,
                                  chunk=settings.logits_chunk, with_entropy=True,
                                  with_values=settings.value_head == "shared", support=support,
                                  support_top_k=settings.support_top_k if truncated else 0,
                                  support_top_p=settings.support_top_p, gather_ids=gather_ids,
                                  top_logprobs=top_logprobs, grammar_states=grammar[0],
                                  grammar_table=grammar[1], needed=needed)


def _grammar(mb: dict) -> tuple:
  """Constrained decoding (rl.env.constrained): a batch with "grammar_states" is scored under the
  grammar-masked distribution the sampler drew from; the table comes with the step's scalars."""
  return (mb["grammar_states"], mb["grammar_table"]) if "grammar_states" in mb else (None, None)


def _critic_values(graphdef, params, tokens, valid, segment_ids=None):
  return model_lib.token_values(nnx.merge(graphdef, params), tokens,
                                None if segment_ids is not None else valid, segment_ids=segment_ids)


def _policy_loss(params, graphdef, mb, denominators, settings: UpdateSettings, with_value: bool = True):
  topk = settings.kl_in_loss and settings.kl_topk > 0
  out = _policy_forward(graphdef, params, mb["tokens"], mb["valid"], mb["temperature"], settings,
                        support=mb["support"] if settings.truncated else None,
                        gather_ids=mb["ref_top_ids"] if topk else None,
                        grammar=_grammar(mb), segment_ids=mb.get("segment_ids"),
                        needed=mb["mask"] > 0)
  # The policy's tokens and counts: without those algo.error_masking leaves out ("policy_mask").
  mask = mb.get("policy_mask", mb["mask"])
  norm_constant = denominators.get("norm_constant", float(mask.shape[1]))
  kw = dict(num_tokens=denominators.get("policy_num_tokens", denominators["num_tokens"]),
            num_sequences=denominators.get("policy_num_sequences", denominators["num_sequences"]),
            norm_constant=norm_constant)
  pg_loss, metrics = POLICY_LOSSES.get(settings.policy_loss)(
      out["logprobs"], mb["old_logprobs"], mb["advantages"], mask, settings,
      sample_weights=mb["sample_weights"], token_weights=mb["token_weights"], **kw)
  entropy = losses_lib.aggregate(out["entropy"], mask, "token-mean", num_tokens=kw["num_tokens"])
  loss = pg_loss - settings.entropy_coef * entropy
  metrics = {f"actor/{k}": v for k, v in metrics.items()}
  metrics.update({"actor/pg_loss": pg_loss, "actor/entropy": entropy})
  if settings.kl_in_loss:
    kl = (losses_lib.topk_kl(out["gathered"], mb["ref_top_logprobs"]) if topk
          else losses_lib.kl_penalty(out["logprobs"], mb["ref_logprobs"], settings.kl_kind))
    kl_loss = losses_lib.aggregate(kl, mask, "token-mean", num_tokens=kw["num_tokens"])
    loss = loss + mb["kl_coef"] * kl_loss
    metrics["actor/kl_loss"] = kl_loss
  # Train/infer mismatch: the sampler's log-probs against the recomputed ones.
  mismatch = losses_lib.aggregate(jnp.abs(mb["sampler_logprobs"] - out["logprobs"]) * mb["has_sampler"][:, None],
                                  mask, "token-mean", num_tokens=kw["num_tokens"])
  metrics["actor/sampler_logprob_abs_diff"] = jax.lax.stop_gradient(mismatch)
  # A shared head learns inside the policy loss only when there are value targets: with a
  # critic-free estimator the returns are zeros, and it would regress onto them.
  if settings.value_head == "shared" and with_value:
    v_loss, v_metrics = VALUE_LOSSES.get(settings.value_loss)(
        out["values"], mb["old_values"], mb["returns"], mb["mask"], settings,
        num_tokens=denominators["num_tokens"], num_sequences=denominators["num_sequences"],
        norm_constant=norm_constant)
    loss = loss + settings.value_coef * v_loss
    metrics.update({f"critic/{k}": v for k, v in v_metrics.items()})
    metrics["critic/value_loss"] = v_loss
  return loss, metrics


def _critic_loss(params, graphdef, mb, denominators, settings: UpdateSettings):
  values = _critic_values(graphdef, params, mb["tokens"], mb["valid"], mb.get("segment_ids"))
  v_loss, metrics = VALUE_LOSSES.get(settings.value_loss)(
      values, mb["old_values"], mb["returns"], mb["mask"], settings,
      num_tokens=denominators["num_tokens"], num_sequences=denominators["num_sequences"],
      norm_constant=denominators.get("norm_constant", float(mb["mask"].shape[1])))
  metrics = {f"critic/{k}": v for k, v in metrics.items()}
  metrics["critic/value_loss"] = v_loss
  return v_loss, metrics


def _accumulate(loss_fn, params, graphdef, batch, scalars, denominators, micro):
  """Sum of loss, grads and metrics over micro-batches (exact with global denominators)."""
  stacked = {k: v.reshape((v.shape[0] // micro, micro) + v.shape[1:]) for k, v in batch.items()}
  grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

  def body(carry, mb):
    mb = {**mb, **scalars}
    (loss, metrics), grads = grad_fn(params, graphdef, mb, denominators)
    carry = jax.tree.map(jnp.add, carry, (loss, metrics, grads))
    return carry, None

  first = {**jax.tree.map(lambda x: x[0], stacked), **scalars}
  (loss_shape, metrics_shape), grads_shape = jax.eval_shape(
      lambda p, mb: grad_fn(p, graphdef, mb, denominators), params, first)
  zeros = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), (loss_shape, metrics_shape, grads_shape))
  (loss, metrics, grads), _ = jax.lax.scan(body, zeros, stacked)
  return loss, metrics, grads


@flax.struct.dataclass
class GradientSums:
  """What rows of a mini-batch contribute to an update: the summed loss, metrics and gradients
  of the critic's loss and of the policy's (None where that model is not trained). With the
  mini-batch's global denominators (exact micro-batching) the sums over disjoint rows add up to
  the whole mini-batch's."""

  critic: Any = None  # (loss, metrics, grads)
  policy: Any = None


def _gradients(state: TrainState, batch: dict, scalars: dict, train_policy: bool, train_critic: bool, *,
               policy_graphdef, critic_graphdef, settings: UpdateSettings) -> GradientSums:
  """The loss, metric and gradient sums of `batch`'s rows, at `state`'s parameters."""
  denominators = {k: scalars[k] for k in ("num_tokens", "num_sequences", "norm_constant", "policy_num_tokens",
                                          "policy_num_sequences") if k in scalars}
  per_step = {k: scalars[k] for k in ("kl_coef", "temperature", "grammar_table") if k in scalars}
  micro = settings.micro_batch_size
  critic_loss = functools.partial(_critic_loss, settings=settings)
  sums = GradientSums()
  if train_critic and state.critic is not None:
    sums = sums.replace(critic=_accumulate(critic_loss, state.critic, critic_graphdef, batch, per_step,
                                           denominators, micro))
  elif train_critic and not train_policy and settings.value_head == "shared":
    # The shared head's own step: the value loss through the policy's trunk.
    sums = sums.replace(critic=_accumulate(critic_loss, state.policy, policy_graphdef, batch, per_step,
                                           denominators, micro))
  if train_policy:
    policy_loss = functools.partial(_policy_loss, settings=settings, with_value=train_critic)
    sums = sums.replace(policy=_accumulate(policy_loss, state.policy, policy_graphdef, batch, per_step,
                                           denominators, micro))
  return sums


def _add_sums(a: GradientSums, b: GradientSums) -> GradientSums:
  """a + b, where a model's sums missing from one side (None) count as zero."""
  add = lambda x, y: y if x is None else x if y is None else jax.tree.map(jnp.add, x, y)
  return GradientSums(critic=add(a.critic, b.critic), policy=add(a.policy, b.policy))


def _apply(state: TrainState, parts: tuple[GradientSums, ...], *, policy_tx, critic_tx):
  """The optimizer steps for the summed `parts`: (new state, metrics). The critic is updated
  before the actor."""
  sums = functools.reduce(_add_sums, parts)
  metrics = {}
  critic, critic_opt = state.critic, state.critic_opt
  policy, policy_opt = state.policy, state.policy_opt
  if sums.critic is not None and critic is not None:
    _, c_metrics, c_grads = sums.critic
    metrics.update(c_metrics)
    metrics["critic/grad_norm"] = optax.tree.norm(c_grads)
    updates, critic_opt = critic_tx.update(c_grads, critic_opt, critic)
    critic = optax.apply_updates(critic, updates)
  elif sums.critic is not None:
    # The shared head alone is updated (critic_tx freezes the rest: the policy does not train in
    # the warm-up).
    _, c_metrics, c_grads = sums.critic
    metrics.update(c_metrics)
    updates, critic_opt = critic_tx.update(c_grads, critic_opt, policy)
    metrics["critic/grad_norm"] = optax.tree.norm(jax.tree_util.tree_map_with_path(
        lambda path, g: g if param_path(path) in VALUE_HEAD_PARAMS else jnp.zeros_like(g), c_grads))
    policy = optax.apply_updates(policy, updates)
  if sums.policy is not None:
    p_loss, p_metrics, p_grads = sums.policy
    metrics.update(p_metrics)
    metrics["actor/loss"] = p_loss
    metrics["actor/grad_norm"] = optax.tree.norm(p_grads)
    updates, policy_opt = policy_tx.update(p_grads, policy_opt, policy)
    policy = optax.apply_updates(policy, updates)
  new_state = state.replace(step=state.step + 1, policy=policy, policy_opt=policy_opt,
                            critic=critic, critic_opt=critic_opt)
  return new_state, metrics


def make_update_step(policy_graphdef, critic_graphdef, policy_tx, critic_tx, settings: UpdateSettings,
                     *, state_sharding=None, batch_sharding=None, lanes: int = 1) -> Callable:
  """Returns `update(state, batch, scalars, train_policy, train_critic) -> (state, metrics)`.

  `batch` holds [M, T] arrays of one mini-batch (tokens, valid, mask, advantages,
  returns, old_logprobs, old_values, ref_logprobs, sampler_logprobs, token_weights),
  [M] arrays (sample_weights, has_sampler) and, with a truncated sampler, the [M, T, K]
  support of the sampling policy; with constrained decoding, [M, T] grammar_states. `scalars`
  holds num_tokens, num_sequences, kl_coef, temperature (and with constrained decoding the
  grammar's [S, V] grammar_table, and optionally norm_constant, the constant of
  `seq-mean-token-sum-norm`, else the mini-batch's T). An optional [M, T] "policy_mask" (the
  action tokens algo.error_masking keeps) replaces `mask` in the policy loss, with the scalars
  policy_num_tokens and policy_num_sequences as its counts; the value loss keeps `mask`. The
  critic is updated before the actor.
  With a shared value head (no critic model) `critic_tx` is `value_head_optimizer(...)` and
  `state.critic_opt` its state: a critic-only step (`train_critic` without `train_policy`) trains
  the head alone; a step of both trains it inside the policy loss; a policy-only step leaves it.
  With [M, T] "segment_ids" the rows are packed (rl.algo.batching.pack_minibatch): several sequences per
  row, each attending only to itself, for the token-level loss aggregations.

  `lanes` > 1 (a single CPU device: no `state_sharding`): a `LaneUpdate`, whose gradient
  programs (the policy's and a separate critic's, and lanes of rows) run at once in threads and
  whose summed gradients another program applies; the same update up to float summation order.
  XLA's CPU runtime runs a small model's ops one after another, so one program keeps about one
  core busy.
  """
  gradients = functools.partial(_gradients, policy_graphdef=policy_graphdef, critic_graphdef=critic_graphdef,
                                settings=settings)
  apply = functools.partial(_apply, policy_tx=policy_tx, critic_tx=critic_tx)

  def update(state: TrainState, batch: dict, scalars: dict, train_policy: bool, train_critic: bool):
    return apply(state, (gradients(state, batch, scalars, train_policy, train_critic),))

  jit_kwargs = dict(static_argnums=(3, 4), donate_argnums=(0,))
  if state_sharding is not None:
    jit_kwargs.update(in_shardings=(state_sharding, batch_sharding, None),
                      out_shardings=(state_sharding, None))
  step = jax.jit(update, **jit_kwargs)
  if lanes <= 1 or state_sharding is not None:
    return step
  return LaneUpdate(step, jax.jit(gradients, static_argnums=(3, 4)), jax.jit(apply, donate_argnums=(0,)),
                    lanes=lanes, micro=settings.micro_batch_size)


class LaneUpdate:
  """`update(state, batch, scalars, train_policy, train_critic)` as several gradient programs
  run at once, one thread each (rl.lanes), then one optimizer step on their summed gradients.

  The jobs: with a separate critic and both models trained, the policy's gradients and the
  critic's are jobs of their own (the same programs' math as the one-program update, so the
  same result to the bit). Each model's rows are further split into lanes when `lanes` leaves
  more than one per model and the micro-batches divide evenly (equal lanes: one compiled shape).
  With a single job it is the one-program `step`.
  """

  def __init__(self, step: Callable, gradients: Callable, apply: Callable, *, lanes: int, micro: int):
    self.step, self.gradients, self.apply = step, gradients, apply
    self.lanes, self.micro = int(lanes), int(micro)
    self._pool = lanes_lib.LanePool("update-lane")

  def jobs(self, rows: int, train_policy: bool, train_critic: bool, separate_critic: bool
           ) -> list[tuple[tuple[bool, bool], int, int]]:
    """((train_policy, train_critic), first row, end row) of each gradient program."""
    models = ([(True, False), (False, True)] if train_policy and train_critic and separate_critic
              else [(train_policy, train_critic)])
    units = rows // self.micro
    bounds = lanes_lib.lane_bounds(rows, lanes_lib.even_lanes(units, max(1, self.lanes // len(models))),
                                   unit=self.micro)
    return [(m, lo, hi) for m in models for lo, hi in zip(bounds[:-1], bounds[1:])]

  def __call__(self, state: TrainState, batch: dict, scalars: dict, train_policy: bool, train_critic: bool):
    rows = int(batch["tokens"].shape[0])
    jobs = self.jobs(rows, train_policy, train_critic, state.critic is not None)
    if len(jobs) == 1:
      return self.step(state, batch, scalars, train_policy, train_critic)

    def job_sums(index: int) -> GradientSums:
      (policy, critic), lo, hi = jobs[index]
      part = batch if (lo, hi) == (0, rows) else {k: v[lo:hi] for k, v in batch.items()}
      return jax.block_until_ready(self.gradients(state, part, scalars, policy, critic))

    return self.apply(state, tuple(self._pool.map(job_sums, range(len(jobs)))))


def compiled_temp_bytes(step: Callable, *args) -> float | None:
  """The scratch memory per device XLA plans for `step(*args)` (a jitted function), from its
  compiled memory analysis; None where the backend does not report one."""
  compiled = step.lower(*args).compile()
  try:
    analysis = compiled.memory_analysis()
  except NotImplementedError:  # a backend without memory analysis
    return None
  temp = getattr(analysis, "temp_size_in_bytes", None)
  return None if temp is None else float(temp)


def make_score_fn(policy_graphdef, critic_graphdef, settings: UpdateSettings) -> Callable:
  """`score(policy, critic, ref, tokens, valid, temperature[, grammar_states, grammar_table,
  needed])` -> log-probs, values, ref log-probs (of the constrained distributions with the
  grammar); with `needed` (the action mask) the per-token outputs but values are 0 elsewhere."""

  def score(policy, critic, ref, tokens, valid, temperature, grammar_states=None,
            grammar_table=None, needed=None):
    grammar = (grammar_states, grammar_table)
    out = _policy_forward(policy_graphdef, policy, tokens, valid, temperature, settings,
                          grammar=grammar, needed=needed)
    result = {"logprobs": out["logprobs"], "entropy": out["entropy"]}
    if settings.truncated:  # the sampling policy's support, fixed for the update
      result["support"], result["full_logprobs"] = out["support"], out["full_logprobs"]
    if settings.value_head == "shared":
      result["values"] = out["values"]
    elif critic is not None:
      result["values"] = _critic_values(critic_graphdef, critic, tokens, valid)
    if ref is not None:
      ref_out = _policy_forward(policy_graphdef, ref, tokens, valid, temperature,
                                dataclasses.replace(settings, value_head="separate"),
                                support=out.get("support"), top_logprobs=settings.kl_topk,
                                grammar=grammar, needed=needed)
      result["ref_logprobs"] = ref_out["logprobs"]
      if settings.kl_topk > 0:
        result["ref_top_ids"], result["ref_top_logprobs"] = ref_out["top_ids"], ref_out["top_logprobs"]
    return result

  return jax.jit(score)


def make_sft_step(policy_graphdef, tx, settings: UpdateSettings) -> Callable:
  """`sft_step(params, opt_state, batch)`: token-mean NLL of the action tokens, micro-batched."""
  micro = settings.micro_batch_size

  def loss_fn(params, graphdef, mb, denominators):
    model = nnx.merge(graphdef, params)
    segment_ids = mb.get("segment_ids")  # packed rows (rl.algo.batching.pack_minibatch)
    out = model_lib.token_logprobs(model, mb["tokens"], None if segment_ids is not None else mb["valid"],
                                   segment_ids=segment_ids, chunk=settings.logits_chunk,
                                   with_entropy=False, needed=mb["mask"] > 0)
    nll = losses_lib.aggregate(-out["logprobs"], mb["mask"], "token-mean",
                               num_tokens=denominators["num_tokens"])
    return nll, {"sft/nll": nll}

  def step(params, opt_state, batch):
    denominators = {"num_tokens": jnp.maximum(batch["mask"].sum(), 1.0), "num_sequences": 1.0}
    loss, metrics, grads = _accumulate(loss_fn, params, policy_graphdef, batch, {}, denominators, micro)
    metrics["sft/grad_norm"] = optax.tree.norm(grads)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, metrics

  return jax.jit(step, donate_argnums=(0, 1))


def explained_variance(values: np.ndarray, returns: np.ndarray, mask: np.ndarray) -> float:
  m = np.asarray(mask, bool)
  if m.sum() < 2:
    return float("nan")
  var_r = np.var(returns[m])
  # Returns that are constant up to rounding (every episode failed) explain nothing: NaN, not
  # 1 - x / 1e-30.
  return float(1.0 - np.var(returns[m] - values[m]) / var_r) if var_r > 1e-10 else float("nan")
