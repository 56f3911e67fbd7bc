"""The jitted update step: exact micro-batching, learning on a fixed batch, SFT step."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from rl import config as config_lib
from rl import models as model_lib
from rl.algo import update as update_lib


def _models(value_head):
  cfg = model_lib.tiny_config("test", vocab_size=64, value_head="shared" if value_head == "shared" else "none")
  policy = model_lib.init_model(cfg, seed=0)
  critic = None
  if value_head == "separate":
    critic = model_lib.make_critic(cfg, seed=1)
    model_lib.copy_trunk(policy, critic)
  return policy, critic


def _batch(B=8, T=16, seed=0):
  rng = np.random.default_rng(seed)
  tokens = rng.integers(1, 64, (B, T)).astype(np.int32)
  valid = np.ones((B, T), np.float32)
  valid[:, T - 3:] = 0  # right padding
  mask = (rng.random((B, T)) < 0.5).astype(np.float32) * valid
  mask[:, 0] = 0
  mask[:, 4] = 1
  f = lambda *s: rng.normal(size=s).astype(np.float32)
  return {
      "tokens": tokens, "valid": valid, "mask": mask, "advantages": f(B, T) * mask,
      "returns": f(B, T) * mask, "old_logprobs": -np.abs(f(B, T)) * mask - 4.0 * mask,
      "old_values": f(B, T) * mask, "ref_logprobs": -np.abs(f(B, T)) * mask - 4.0,
      "sampler_logprobs": -np.abs(f(B, T)) * mask, "token_weights": np.ones((B, T), np.float32),
      "sample_weights": np.ones((B,), np.float32), "has_sampler": np.ones((B,), np.float32),
  }


def _state(policy, critic, settings, lr=1e-2, tx=None):
  pg, pstate = nnx.split(policy, nnx.Param)
  tx = tx or update_lib.make_optimizer(lr, schedule="constant", total_steps=10, grad_clip=1.0)
  cg = cstate = None
  if critic is not None:
    cg, cstate = nnx.split(critic, nnx.Param)
  state = update_lib.TrainState(step=jnp.zeros((), jnp.int32), policy=pstate, policy_opt=tx.init(pstate),
                                critic=cstate, critic_opt=None if cstate is None else tx.init(cstate))
  # The critic trunk starts as a copy of the policy's arrays; donation needs distinct buffers.
  return pg, cg, tx, jax.tree.map(jnp.copy, state)


def _scalars(batch):
  return {"num_tokens": jnp.float32(batch["mask"].sum()),
          "num_sequences": jnp.float32((batch["mask"].sum(1) > 0).sum()),
          "kl_coef": jnp.float32(0.1), "temperature": jnp.float32(1.0)}


def _sgd_update(policy, critic, settings, batch, scalars):
  """One update step with plain SGD (lr 1): the parameter change is the gradient itself."""
  pg, cg, tx, state = _state(policy, critic, settings, tx=__import__("optax").sgd(1.0))
  step = update_lib.make_update_step(pg, cg, tx, tx, settings)
  new_state, metrics = step(state, {k: jnp.asarray(v) for k, v in batch.items()}, scalars, True, True)
  return jax.tree.map(np.asarray, new_state), jax.tree.map(float, metrics)


def _assert_same_update(a, b):
  (sa, ma), (sb, mb) = a, b
  for key in ma:
    assert ma[key] == pytest.approx(mb[key], rel=1e-4, abs=1e-5), key
  close = lambda x, y: np.testing.assert_allclose(x, y, rtol=1e-4, atol=2e-6)
  jax.tree.map(close, sa.policy, sb.policy)
  if sa.critic is not None:
    jax.tree.map(close, sa.critic, sb.critic)


@pytest.mark.parametrize("value_head,agg", [("separate", "token-mean"), ("shared", "seq-mean-token-mean")])
def test_micro_batching_is_exact(value_head, agg):
  # Plain SGD: the parameter change is lr * gradient, so equal updates mean equal gradients.
  policy, critic = _models(value_head)
  batch = _batch()
  results = []
  for micro in (8, 2):
    settings = update_lib.UpdateSettings(value_head=value_head, loss_agg=agg, micro_batch_size=micro,
                                         entropy_coef=0.01, kl_in_loss=True)
    results.append(_sgd_update(policy, critic, settings, batch, _scalars(batch)))
  _assert_same_update(*results)


@pytest.mark.parametrize("value_head,steps", [("separate", ((True, True), (False, True))),
                                              ("shared", ((True, True), (False, True), (True, False)))])
def test_lanes_give_the_one_program_update(value_head, steps):
  """A `LaneUpdate` (rl.lanes: gradient programs in threads, summed, one optimizer step) gives
  the one-program update: the same parameters, optimizer states and metrics after steps of every
  kind (both models, the critic's warm-up, the policy alone), with the policy and a separate
  critic as jobs of their own and their rows in 1, 2, 3 or 6 lanes."""
  policy, critic = _models(value_head)
  batch = {k: jnp.asarray(v) for k, v in _batch(B=12).items()}
  settings = update_lib.UpdateSettings(value_head=value_head, micro_batch_size=2, entropy_coef=0.01,
                                       kl_in_loss=True)
  results = {}
  for lanes in (1, 2, 4, 8):
    # Plain SGD: AdamW would turn float noise in near-zero gradients into steps of about lr.
    pg, cg, tx, state = _state(policy, critic, settings, tx=__import__("optax").sgd(0.1))
    critic_tx = tx if value_head == "separate" else update_lib.value_head_optimizer(tx)
    if value_head == "shared":
      state = state.replace(critic_opt=critic_tx.init(state.policy))
    step = update_lib.make_update_step(pg, cg, tx, critic_tx, settings, lanes=lanes)
    assert isinstance(step, update_lib.LaneUpdate) == (lanes > 1)
    metrics = []
    for train_policy, train_critic in steps:
      state, m = step(state, batch, _scalars(batch), train_policy, train_critic)
      metrics.append(jax.tree.map(float, m))
    results[lanes] = (jax.tree.map(np.asarray, state), metrics)
  one_state, one_metrics = results[1]
  close = lambda x, y: np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-6)
  for lanes in (2, 4, 8):
    state, metrics = results[lanes]
    jax.tree.map(close, state, one_state)
    for got, want in zip(metrics, one_metrics):
      assert got.keys() == want.keys()
      for key in want:
        assert got[key] == pytest.approx(want[key], rel=1e-4, abs=1e-6), (lanes, key)


def test_lane_jobs_split_models_then_even_lanes_of_micro_batches():
  step = update_lib.LaneUpdate(None, None, None, lanes=2, micro=1)
  assert step.jobs(3, True, True, True) == [((True, False), 0, 3), ((False, True), 0, 3)]
  assert step.jobs(3, False, True, True) == [((False, True), 0, 3)]  # 3 rows: no even split
  assert step.jobs(4, False, True, True) == [((False, True), 0, 2), ((False, True), 2, 4)]
  assert step.jobs(4, True, True, False) == [((True, True), 0, 2), ((True, True), 2, 4)]  # shared head
  wide = update_lib.LaneUpdate(None, None, None, lanes=4, micro=2)
  assert wide.jobs(8, True, True, True) == [((True, False), 0, 4), ((True, False), 4, 8),
                                            ((False, True), 0, 4), ((False, True), 4, 8)]


def test_update_increases_likelihood_of_positive_advantage_tokens():
  policy, critic = _models("separate")
  batch = _batch()
  batch["advantages"] = np.abs(batch["advantages"]) + batch["mask"]  # all positive
  settings = update_lib.UpdateSettings(micro_batch_size=4, clip_high=10.0)
  pg, cg, tx, state = _state(policy, critic, settings, lr=3e-3)
  score = update_lib.make_score_fn(pg, cg, settings)
  jb = {k: jnp.asarray(v) for k, v in batch.items()}
  before = score(state.policy, state.critic, None, jb["tokens"], jb["valid"], 1.0)
  jb["old_logprobs"] = before["logprobs"]
  jb["old_values"] = before["values"]
  scalars = {"num_tokens": jnp.float32(batch["mask"].sum()), "num_sequences": jnp.float32(8),
             "kl_coef": jnp.float32(0.0), "temperature": jnp.float32(1.0)}
  step = update_lib.make_update_step(pg, cg, tx, tx, settings)
  for _ in range(5):
    state, metrics = step(state, jb, scalars, True, True)
  after = score(state.policy, state.critic, None, jb["tokens"], jb["valid"], 1.0)
  m = batch["mask"].astype(bool)
  assert np.asarray(after["logprobs"])[m].mean() > np.asarray(before["logprobs"])[m].mean() + 0.05
  v_err_before = np.abs(np.asarray(before["values"]) - batch["returns"])[m].mean()
  v_err_after = np.abs(np.asarray(after["values"]) - batch["returns"])[m].mean()
  assert v_err_after < v_err_before


def test_sft_step_lowers_nll():
  policy, _ = _models("separate")
  batch = _batch()
  settings = update_lib.UpdateSettings(micro_batch_size=4)
  pg, _, tx, state = _state(policy, None, settings)
  step = update_lib.make_sft_step(pg, tx, settings)
  params, opt = state.policy, state.policy_opt
  jb = {k: jnp.asarray(batch[k]) for k in ("tokens", "valid", "mask")}
  nlls = []
  for _ in range(10):
    params, opt, metrics = step(params, opt, jb)
    nlls.append(float(metrics["sft/nll"]))
  assert nlls[-1] < nlls[0] - 0.5


def test_explained_variance_is_nan_for_constant_returns():
  mask = np.ones((2, 4), np.float32)
  values = np.full((2, 4), 0.3, np.float32)
  rounding = np.array([[0.0] * 4, [1e-7] * 4], np.float32)  # variance ~2.5e-15: not a real spread
  spread = np.array([[0.3] * 4, [0.5] * 4], np.float32)  # (a plain ratio would give about -4e12)
  assert np.isnan(update_lib.explained_variance(spread, rounding, mask))
  returns = np.array([[0.0] * 4, [1.0] * 4], np.float32)
  assert update_lib.explained_variance(returns, returns, mask) == pytest.approx(1.0)
  assert update_lib.explained_variance(values, returns, mask) == pytest.approx(0.0, abs=1e-6)


def test_adam_eps_damps_noise_sized_steps():
  """With a large eps a parameter with a tiny gradient barely moves; with 1e-8 its first
  step is about lr (Adam's sign-like start), whatever the gradient's size."""
  params = {"w": jnp.zeros(2)}
  grads = {"w": jnp.array([1e-6, 1.0])}
  for eps, moves_small in ((1e-8, True), (1e-3, False)):
    tx = update_lib.make_optimizer(0.1, schedule="constant", total_steps=10, eps=eps)
    updates, _ = tx.update(grads, tx.init(params), params)
    small, large = np.abs(np.asarray(updates["w"]))
    assert large == pytest.approx(0.1, rel=1e-2)
    assert (small > 0.05) == moves_small


def test_sgd_steps_are_proportional_to_the_gradient():
  """SGD moves each parameter by lr * g (first step, before momentum builds up), unlike
  Adam's sign-like first step; an unknown optimiser name is refused."""
  params = {"w": jnp.zeros(2)}
  grads = {"w": jnp.array([1e-6, 1.0])}
  tx = update_lib.make_optimizer(0.1, schedule="constant", total_steps=10, kind="sgd")
  state = tx.init(params)
  updates, state = tx.update(grads, state, params)
  np.testing.assert_allclose(np.asarray(updates["w"]), [-1e-7, -0.1], rtol=1e-5)
  updates, _ = tx.update(grads, state, params)  # momentum 0.9: 0.1 * (1 + 0.9)
  np.testing.assert_allclose(np.asarray(updates["w"]), [-1.9e-7, -0.19], rtol=1e-5)
  with pytest.raises(ValueError, match="unknown optimiser 'lion'"):
    update_lib.make_optimizer(0.1, schedule="constant", total_steps=10, kind="lion")


def test_trainable_regex_freezes_every_other_parameter():
  """optim.policy_trainable: only matching parameters move, the clipping norm covers only them,
  the frozen ones keep no optimiser moments, and a pattern that matches nothing is refused."""
  from flax import nnx
  from configs import default
  from rl.train import trainer as trainer_lib
  c = default.get_config()
  _, policy, _ = model_lib.build_models(c, 64, 1, 0)
  params = nnx.state(policy, nnx.Param)
  grads = jax.tree.map(lambda p: jnp.full(p.shape, 100.0, p.dtype), params)
  tx = update_lib.make_optimizer(0.1, schedule="constant", total_steps=10, kind="sgd", grad_clip=1.0,
                                 trainable=r"^norm/weight$")
  state = tx.init(params)
  updates, _ = tx.update(grads, state, params)
  moved = {update_lib.param_path(p): float(jnp.abs(u).max())
           for p, u in jax.tree_util.tree_flatten_with_path(updates)[0]}
  assert moved.pop("norm/weight") > 0
  assert set(moved.values()) == {0.0} and "layers/0/input_layernorm/weight" in moved
  # SGD's first step is lr * clipped g: the norm of the 128 trained entries alone is clipped to 1.
  norm = float(jnp.linalg.norm(updates["norm"]["weight"][...]))
  assert norm == pytest.approx(0.1, rel=1e-4)
  n_state = sum(x.size for x in jax.tree.leaves(state))
  assert n_state <= 2 * 128 + 8  # momentum of the trained vector (+ counters), none for the rest
  with pytest.raises(ValueError, match="matches no parameter.*layers/0"):
    update_lib.make_optimizer(0.1, schedule="constant", total_steps=10, trainable="no_such").init(params)
  bad = c.copy_and_resolve_references()
  bad.unlock().optim.policy_trainable = "(["
  with pytest.raises(config_lib.ConfigError, match="policy_trainable.*regular expression"):
    config_lib.validate(bad)


def test_truncated_support_is_scored_once_and_fixed_in_the_update():
  """algo.logprob_support = "sampler": the scorer returns the sampling policy's support and the
  renormalised log-probs; the update renormalises on that support (so at unchanged params its
  log-probs equal the scorer's and the PPO ratio starts at 1) and raises positive-advantage tokens."""
  from configs import default
  c = default.get_config().unlock()
  c.algo.logprob_support, c.sampling.top_k, c.sampling.top_p = "sampler", 4, 0.95
  settings = dataclasses.replace(update_lib.UpdateSettings.from_config(c), micro_batch_size=4,
                                 value_head="separate")
  assert (settings.support_top_k, settings.support_top_p) == (4, 0.95)
  policy, critic = _models("separate")
  pg, cg, tx, state = _state(policy, critic, settings, lr=3e-3)
  batch = _batch()
  jb = {k: jnp.asarray(v) for k, v in batch.items()}
  score = update_lib.make_score_fn(pg, cg, settings)
  before = score(state.policy, state.critic, state.policy, jb["tokens"], jb["valid"], 1.0)
  assert before["support"].shape == batch["tokens"].shape + (4,)
  assert (np.asarray(before["logprobs"]) >= np.asarray(before["full_logprobs"]) - 1e-6).all()
  np.testing.assert_allclose(before["ref_logprobs"], before["logprobs"], atol=1e-6)
  # Targets inside the support: each masked position's most likely token.
  tokens = np.asarray(batch["tokens"]).copy()
  top = np.asarray(before["support"])[..., 0]
  tokens[:, 1:] = np.where(batch["mask"][:, 1:] > 0, top[:, 1:], tokens[:, 1:])
  jb["tokens"] = jnp.asarray(tokens)
  before = score(state.policy, state.critic, None, jb["tokens"], jb["valid"], 1.0)
  jb.update(old_logprobs=before["logprobs"], old_values=before["values"], support=before["support"])
  jb["advantages"] = jnp.asarray(np.abs(batch["advantages"]) + batch["mask"])
  scalars = {"num_tokens": jnp.float32(batch["mask"].sum()), "num_sequences": jnp.float32(8),
             "kl_coef": jnp.float32(0.0), "temperature": jnp.float32(1.0)}
  step = update_lib.make_update_step(pg, cg, tx, tx, settings)
  state, metrics = step(state, jb, scalars, True, True)
  assert float(metrics["actor/ratio_mean"]) == pytest.approx(1.0, abs=1e-5)
  for _ in range(3):
    state, metrics = step(state, jb, scalars, True, True)
  after = score(state.policy, state.critic, None, jb["tokens"], jb["valid"], 1.0)
  m = batch["mask"].astype(bool)
  assert np.asarray(after["logprobs"])[m].mean() > np.asarray(before["logprobs"])[m].mean() + 0.01


def test_topk_kl_in_the_loss_is_wired_through_scorer_and_update():
  """algo.kl_topk: the scorer returns the reference's top-k ids and log-probs; the update's KL is
  0 while the policy equals the reference and grows as a positive-advantage update moves it."""
  from configs import default
  c = default.get_config().unlock()
  c.algo.kl_coef, c.algo.kl_topk = 0.1, 4
  settings = dataclasses.replace(update_lib.UpdateSettings.from_config(c), micro_batch_size=4,
                                 value_head="separate")
  assert settings.kl_in_loss and settings.kl_topk == 4
  policy, critic = _models("separate")
  pg, cg, tx, state = _state(policy, critic, settings, lr=3e-3)
  ref = jax.tree.map(jnp.copy, state.policy)
  batch = _batch()
  jb = {k: jnp.asarray(v) for k, v in batch.items()}
  score = update_lib.make_score_fn(pg, cg, settings)
  scored = score(state.policy, state.critic, ref, jb["tokens"], jb["valid"], 1.0)
  assert scored["ref_top_ids"].shape == batch["tokens"].shape + (4,)
  jb.update(old_logprobs=scored["logprobs"], old_values=scored["values"],
            ref_top_ids=scored["ref_top_ids"], ref_top_logprobs=scored["ref_top_logprobs"],
            advantages=jnp.asarray(np.abs(batch["advantages"]) + batch["mask"]))
  scalars = {"num_tokens": jnp.float32(batch["mask"].sum()), "num_sequences": jnp.float32(8),
             "kl_coef": jnp.float32(0.1), "temperature": jnp.float32(1.0)}
  step = update_lib.make_update_step(pg, cg, tx, tx, settings)
  state, metrics = step(state, jb, scalars, True, True)
  assert abs(float(metrics["actor/kl_loss"])) < 1e-6
  for _ in range(3):
    state, metrics = step(state, jb, scalars, True, True)
  assert float(metrics["actor/kl_loss"]) > 1e-4


def _ragged_batch(lengths, T, seed=0):
  batch = _batch(B=len(lengths), T=T, seed=seed)
  valid = (np.arange(T)[None] < np.asarray(lengths)[:, None]).astype(np.float32)
  batch["valid"] = valid
  for key in ("mask", "advantages", "returns", "old_logprobs", "old_values", "ref_logprobs",
              "sampler_logprobs"):
    batch[key] = batch[key] * valid
  batch["mask"][:, 0] = 0  # the first token of an episode is a prompt token
  batch["sample_weights"] = np.linspace(0.5, 1.5, len(lengths)).astype(np.float32)
  return batch


@pytest.mark.parametrize("value_head", ["separate", "shared"])
def test_packed_minibatch_gives_the_unpacked_update(value_head):
  """Rows laid end to end (rl.algo.batching.pack_minibatch) with per-sequence attention and positions
  give the same token-mean losses, metrics and parameter update as the padded rows."""
  from rl.algo import batching
  policy, critic = _models(value_head)
  lengths = [16, 5, 9, 3, 12, 7, 4, 8]
  batch = _ragged_batch(lengths, 16)
  packed = batching.pack_minibatch(batch, np.array(lengths), rows=4, pad_multiple=4)
  assert packed is not None and packed["tokens"].shape == (4, 16)  # 64 tokens in 4 full rows, not 8
  np.testing.assert_allclose((packed["token_weights"] * packed["mask"]).sum(),
                             (batch["token_weights"] * batch["mask"] * batch["sample_weights"][:, None]).sum())
  settings = update_lib.UpdateSettings(value_head=value_head, micro_batch_size=2, entropy_coef=0.01,
                                       kl_in_loss=True)
  scalars = _scalars(batch)  # the unpacked mini-batch's denominators, as the trainer passes them
  _assert_same_update(_sgd_update(policy, critic, settings, batch, scalars),
                      _sgd_update(policy, critic, settings, packed, scalars))


def test_packed_sft_step_equals_the_unpacked_one():
  from rl.algo import batching
  policy, _ = _models("none")
  lengths = [16, 5, 9, 3]
  batch = _ragged_batch(lengths, 16)
  mb = {k: batch[k] for k in ("tokens", "valid", "mask")}
  packed = batching.pack_minibatch(mb, np.array(lengths), rows=2, pad_multiple=4)
  assert packed["tokens"].shape == (2, 20)  # 16 + 3 | 9 + 5, each padded to 20
  settings = update_lib.UpdateSettings(micro_batch_size=1)
  out = []
  for b in (mb, packed):
    pg, state = nnx.split(policy, nnx.Param)
    tx = __import__("optax").sgd(1.0)
    step = update_lib.make_sft_step(pg, tx, settings)
    params, _, metrics = step(jax.tree.map(jnp.copy, state), tx.init(state), {k: jnp.asarray(v) for k, v in b.items()})
    out.append((jax.tree.map(np.asarray, params), float(metrics["sft/nll"])))
  assert out[0][1] == pytest.approx(out[1][1], rel=1e-5)
  jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-4, atol=2e-6), out[0][0], out[1][0])


def test_pack_rows_and_when_packing_is_refused():
  from rl.algo import batching
  assert batching.pack_rows([5, 3, 8, 2], 8) == [[2], [0, 1], [3]]
  with pytest.raises(ValueError, match="row 1 has 9 tokens"):
    batching.pack_rows([3, 9], 8)
  batch = _ragged_batch([16, 15, 14, 13], 16)
  full = np.array([16, 15, 14, 13])  # two rows would need 32 slots each: no saving
  assert batching.pack_minibatch(batch, full, rows=2, pad_multiple=8) is None
  assert batching.pack_minibatch(batch, full, rows=4, pad_multiple=8) is None
  short = np.array([4, 4, 4, 4])
  assert batching.pack_minibatch(batch, short, rows=2, pad_multiple=8)["tokens"].shape == (2, 8)
  assert batching.pack_minibatch(batch, short, rows=1, pad_multiple=8)["tokens"].shape == (1, 16)
  batch["has_sampler"][1] = 0  # rows without sampler log-probs keep their own rows
  assert batching.pack_minibatch(batch, short, rows=2, pad_multiple=8) is None


def test_gspo_gets_its_own_clip_range_and_aggregation_from_the_config():
  """algo.policy_loss = "gspo" trains with GSPO's documented settings (algo.gspo_*: the paper's
  3e-4 / 4e-4 and seq-mean-token-mean), not PPO's clip_low/clip_high/loss_agg."""
  from configs import default
  from rl.algo.losses import gspo_policy_loss
  from rl.registry import POLICY_LOSSES

  c = default.get_config().unlock()
  c.algo.policy_loss = "gspo"
  config_lib.validate(c)
  settings = update_lib.UpdateSettings.from_config(c)
  rng = np.random.default_rng(0)
  mask = np.ones((2, 6), np.float32)
  mask[1, 3:] = 0  # rows of different lengths: seq-mean-token-mean differs from token-mean
  log_prob = rng.normal(size=(2, 6)).astype(np.float32) * 0.01 - 1.0
  old, adv = log_prob - 0.01 * mask, rng.normal(size=(2, 6)).astype(np.float32) * mask
  got, _ = POLICY_LOSSES.get("gspo")(log_prob, old, adv, mask, settings)
  want, _ = gspo_policy_loss(log_prob, old, adv, mask)  # the function's documented defaults
  assert float(got) == pytest.approx(float(want), rel=1e-6)
  assert (settings.gspo_clip_low, settings.gspo_clip_high, settings.gspo_loss_agg) == (
      3e-4, 4e-4, "seq-mean-token-mean")


def _head_and_rest(params):
  """The shared value head's leaves and every other leaf of a policy state, as NumPy arrays."""
  head, rest = {}, {}
  for path, leaf in jax.tree_util.tree_flatten_with_path(params)[0]:
    name = update_lib.param_path(path)
    (head if name in ("value_head", "value_bias") else rest)[name] = np.asarray(leaf)
  return head, rest


def test_shared_value_head_trains_alone_in_the_critic_warm_up_and_only_with_returns():
  """model.value_head = "shared": a critic-only step (the warm-up, extra critic steps) trains the
  head alone with the critic optimiser, the trunk stays the policy's; a policy step without
  critic targets (a critic-free estimator) leaves the head where it is instead of regressing it
  onto zero returns; a step of both trains the head inside the policy loss, as before."""
  import optax

  policy, _ = _models("shared")
  policy.value_bias.set_value(jnp.float32(1.0))  # V = 1 everywhere: zero returns would pull it down
  batch = _batch()
  batch["returns"] = np.zeros_like(batch["returns"])
  settings = update_lib.UpdateSettings(value_head="shared", micro_batch_size=4, value_clip=10.0)
  pg, pstate = nnx.split(policy, nnx.Param)
  tx = optax.sgd(0.1)
  head_tx = update_lib.value_head_optimizer(tx)
  step = update_lib.make_update_step(pg, None, tx, head_tx, settings)
  jb = {k: jnp.asarray(v) for k, v in batch.items()}
  before_head, before_rest = _head_and_rest(pstate)

  def run(train_policy, train_critic):
    state = update_lib.TrainState(step=jnp.zeros((), jnp.int32), policy=pstate, policy_opt=tx.init(pstate),
                                  critic=None, critic_opt=head_tx.init(pstate))
    new_state, metrics = step(jax.tree.map(jnp.copy, state), jb, _scalars(batch), train_policy, train_critic)
    return (*_head_and_rest(new_state.policy), metrics)

  head, rest, metrics = run(False, True)  # the critic's warm-up
  assert float(metrics["critic/value_loss"]) > 0 and "actor/loss" not in metrics
  assert float(head["value_bias"]) < 1.0  # moved towards the returns
  for name, value in rest.items():
    np.testing.assert_array_equal(value, before_rest[name], err_msg=name)
  head, rest, metrics = run(True, False)  # a critic-free estimator: no value targets
  assert "critic/value_loss" not in metrics
  for name, value in head.items():
    np.testing.assert_array_equal(value, before_head[name], err_msg=name)
  assert any(not np.array_equal(value, before_rest[name]) for name, value in rest.items())
  head, _, metrics = run(True, True)
  assert "critic/value_loss" in metrics and float(head["value_bias"]) < 1.0


def test_policy_mask_takes_error_masked_rows_out_of_the_policy_loss_and_its_counts():
  """`policy_mask` (algo.error_masking) with its own counts: the policy's update and metrics are
  those of the batch without the masked row, as if it had not been sampled; the critic still
  trains on every action token."""
  policy, critic = _models("separate")
  batch = _batch(B=4)
  kept = batch["mask"].copy()
  kept[3] = 0.0  # the failed episode after its error
  masked = dict(batch, policy_mask=kept)
  scalars = dict(_scalars(batch), policy_num_tokens=jnp.float32(kept.sum()),
                 policy_num_sequences=jnp.float32((kept.sum(1) > 0).sum()))
  without = {k: v[:3] for k, v in batch.items()}
  settings = update_lib.UpdateSettings(micro_batch_size=1, entropy_coef=0.01, kl_in_loss=True)
  got_state, got = _sgd_update(policy, critic, settings, masked, scalars)
  want_state, want = _sgd_update(policy, critic, settings, without, _scalars(without))
  for key in want:
    if key.startswith("actor/"):
      assert got[key] == pytest.approx(want[key], rel=1e-4, abs=1e-6), key
  jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-4, atol=2e-6), got_state.policy,
               want_state.policy)
  _, full = _sgd_update(policy, critic, settings, batch, _scalars(batch))
  assert got["critic/value_loss"] == pytest.approx(full["critic/value_loss"], rel=1e-5)
