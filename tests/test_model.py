"""Model unit tests on the "test" preset: cache consistency, chunked log-probs, value heads, remat."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from rl.models import (KVCache, ModelConfig, Transformer, chunked_logprobs_entropy, copy_trunk,
                      forward, init_model, make_critic, tiny_config, token_logprobs, token_values)


@nnx.jit
def _logits(model, ids, mask=None):
  return model(ids, attention_mask=mask)


@nnx.jit
def _hidden(model, ids, cache=None, num_new=None):
  return model.hidden_states(ids, cache=cache, num_new=num_new)


@nnx.jit(static_argnames=("chunk",))
def _token_outputs(model, ids, chunk):
  return token_logprobs(model, ids, chunk=chunk, with_values=True)


@pytest.fixture(scope="module")
def model():
  return init_model(tiny_config("test", value_head="shared"), seed=3)


@pytest.fixture(scope="module")
def ids():
  return np.random.default_rng(0).integers(0, 4096, size=(2, 12)).astype(np.int32)


def test_logits_shape_and_determinism(model, ids):
  graphdef, state = nnx.split(model)
  fwd = jax.jit(forward, static_argnums=0)
  logits = fwd(graphdef, state, ids)
  assert logits.shape == (2, 12, 4096) and logits.dtype == jnp.float32
  np.testing.assert_array_equal(np.asarray(logits), np.asarray(fwd(graphdef, state, ids)))
  other = init_model(tiny_config("test"), seed=4)
  assert not np.allclose(np.asarray(_logits(other, ids)), np.asarray(logits))


def test_causality_and_padding(model, ids):
  full = np.asarray(_logits(model, ids))
  changed = ids.copy()
  changed[:, 8:] = (changed[:, 8:] + 1) % 4096
  np.testing.assert_allclose(np.asarray(_logits(model, changed))[:, :8], full[:, :8], atol=1e-5)
  # Left padding with a mask gives the same logits as the unpadded sequence.
  padded = np.concatenate([np.zeros((2, 3), np.int32), ids], 1)
  mask = np.concatenate([np.zeros((2, 3), np.int32), np.ones_like(ids)], 1)
  np.testing.assert_allclose(np.asarray(_logits(model, padded, mask))[:, 3:], full, atol=1e-5)


def test_fused_projections_equal_separate_ones(model, ids, monkeypatch):
  """q/k/v and gate/up as one product over concatenated weights (CPUs) give the outputs of the
  separate products (accelerators), with and without the cache."""
  from rl.models import transformer
  outputs = {}
  for fused in (True, False):
    monkeypatch.setattr(transformer, "_fuse_projections", lambda fused=fused: fused)
    cache = KVCache.create(model.config, 2, 16)
    hidden, cache = model.hidden_states(ids[:, :7], cache=cache)
    step, _ = model.hidden_states(ids[:, 7:9], cache=cache)
    outputs[fused] = (np.asarray(model(ids)), np.asarray(hidden), np.asarray(step))
  for a, b in zip(outputs[True], outputs[False]):
    np.testing.assert_allclose(a, b, atol=2e-5, rtol=1e-5)


def test_kv_cache_chunks_equal_full_forward(model, ids):
  full, _ = _hidden(model, ids)
  cache = KVCache.create(model.config, 2, 16)
  # Row 0 appends 5 then 7 tokens, row 1 appends 9 then 3: per-row lengths in one cache.
  first = np.zeros((2, 9), np.int32)
  first[0, :5], first[1, :9] = ids[0, :5], ids[1, :9]
  h1, cache = _hidden(model, first, cache, jnp.array([5, 9]))
  second = np.zeros((2, 7), np.int32)
  second[0, :7], second[1, :3] = ids[0, 5:], ids[1, 9:]
  h2, cache = _hidden(model, second, cache, jnp.array([7, 3]))
  np.testing.assert_array_equal(np.asarray(cache.lengths), [12, 12])
  row0 = np.concatenate([h1[0, :5], h2[0, :7]])
  row1 = np.concatenate([h1[1, :9], h2[1, :3]])
  np.testing.assert_allclose(row0, full[0], atol=1e-5)
  np.testing.assert_allclose(row1, full[1], atol=1e-5)


@pytest.mark.parametrize("chunk", [1, 5, 64])
def test_chunked_logprobs_match_full_softmax(model, ids, chunk):
  out = _token_outputs(model, ids, chunk)
  logp_all = jax.nn.log_softmax(_logits(model, ids)[:, :-1], axis=-1)
  expected = jnp.take_along_axis(logp_all, ids[:, 1:, None], axis=-1)[..., 0]
  np.testing.assert_allclose(out["logprobs"][:, 1:], expected, atol=1e-5)
  entropy = -(jnp.exp(logp_all) * logp_all).sum(-1)
  np.testing.assert_allclose(out["entropy"][:, 1:], entropy, atol=1e-4)
  assert np.all(np.asarray(out["logprobs"][:, 0]) == 0)


def test_chunked_gradient_matches_dense(model, ids):
  hidden, _ = _hidden(model, ids)
  w = model.unembedding()

  def chunked(h):
    return chunked_logprobs_entropy(h, w, ids, chunk=5)[0].sum()

  def dense(h):
    logp = jax.nn.log_softmax(h @ w, -1)
    return jnp.take_along_axis(logp, ids[..., None], -1).sum()

  np.testing.assert_allclose(jax.grad(chunked)(hidden), jax.grad(dense)(hidden), atol=1e-5)


def test_values_read_from_predicting_hidden_state(model, ids):
  model.value_head.set_value(jnp.linspace(-1, 1, model.config.hidden_size))
  model.value_bias.set_value(jnp.asarray(0.25))
  hidden, _ = _hidden(model, ids)
  values = token_values(model, ids)
  np.testing.assert_allclose(values[:, 1:], hidden[:, :-1] @ model.value_head.get_value() + 0.25,
                             atol=1e-5)
  # V(s_t) depends on tokens < t only.
  changed = ids.copy()
  changed[:, 6] += 1
  np.testing.assert_allclose(token_values(model, changed)[:, :7], values[:, :7], atol=1e-5)


def test_separate_critic_copies_trunk(model, ids):
  critic = make_critic(model.config.replace(value_head="none"), seed=9)
  assert not critic.has_lm_head and critic.config.value_head == "shared"
  copy_trunk(model, critic)
  policy_hidden, _ = _hidden(model, ids)
  critic_hidden, _ = _hidden(critic, ids)
  np.testing.assert_array_equal(np.asarray(policy_hidden), np.asarray(critic_hidden))
  np.testing.assert_array_equal(np.asarray(token_values(critic, ids)), 0.0)  # fresh head
  with pytest.raises(ValueError, match="without an lm_head"):
    critic(ids)


def test_remat_gives_same_gradients(ids):
  def grads(config):
    graphdef, state = nnx.split(init_model(config, seed=1))
    params = state

    def loss(p):
      return token_logprobs(nnx.merge(graphdef, p), ids, chunk=4)["logprobs"].sum()

    return jax.jit(jax.grad(loss))(params)

  plain = grads(tiny_config("test"))
  remat = grads(tiny_config("test", remat=True))
  for a, b in zip(jax.tree.leaves(plain), jax.tree.leaves(remat)):
    np.testing.assert_allclose(a, b, atol=1e-5)


@pytest.mark.parametrize("other", ["xla", "tiled"])
def test_fused_attention_matches_einsum_on_right_padded_rows(ids, other):
  """attention="xla" (jax.nn.dot_product_attention; "cudnn" takes the same path on a GPU) and
  "tiled" give the einsum path's log-probs, values and gradients at every real token of
  right-padded rows."""
  lengths = np.array([12, 7])
  mask = (np.arange(12)[None] < lengths[:, None]).astype(np.int32)
  padded = np.where(mask, ids, 0)

  def outputs(attention):
    graphdef, state = nnx.split(init_model(tiny_config("test", value_head="shared",
                                                       attention=attention), seed=1))

    def loss(p):
      out = token_logprobs(nnx.merge(graphdef, p), padded, mask, chunk=4, with_values=True)
      return (out["logprobs"] * mask).sum() + (out["values"] * mask).sum(), out

    (_, out), grad = jax.jit(jax.value_and_grad(loss, has_aux=True))(state)
    return out, grad

  (ref, ref_grad), (fused, fused_grad) = outputs("einsum"), outputs(other)
  for key in ("logprobs", "values"):
    np.testing.assert_allclose(np.asarray(fused[key]) * mask, np.asarray(ref[key]) * mask, atol=2e-5)
  for a, b in zip(jax.tree.leaves(ref_grad), jax.tree.leaves(fused_grad)):
    np.testing.assert_allclose(a, b, atol=2e-5)


def test_full_size_shapes_without_allocating():
  config = ModelConfig(vocab_size=151936, hidden_size=3584, num_layers=28, num_heads=28,
                       num_kv_heads=4, intermediate_size=18944, qkv_bias=True,
                       tie_word_embeddings=False, param_dtype="bfloat16", dtype="bfloat16")
  abstract = nnx.eval_shape(lambda: Transformer(config))
  ids = jax.ShapeDtypeStruct((1, 8), jnp.int32)
  logits = nnx.eval_shape(lambda m, x: m(x), abstract, ids)
  assert logits.shape == (1, 8, 151936)
  n = sum(x.size for x in jax.tree.leaves(nnx.state(abstract, nnx.Param)))
  assert n == config.num_params() and 7.0e9 < n < 7.9e9  # Qwen2.5-7B


def test_forward_flops_per_token_matches_xla_count():
  """The benchmarks' model FLOPs against XLA's own count of a forward pass: einsum attention
  computes every query against all T keys (the mask applied after), so context = T."""
  config = tiny_config("test", attention="einsum")
  model = init_model(config, seed=0)
  batch, length = 2, 64
  ids = jnp.zeros((batch, length), jnp.int32)
  graphdef, state = nnx.split(model)
  compiled = jax.jit(forward, static_argnums=0).lower(graphdef, state, ids).compile()
  cost = compiled.cost_analysis()
  xla_flops = (cost[0] if isinstance(cost, (list, tuple)) else cost)["flops"]
  ours = batch * length * config.forward_flops_per_token(length)
  # XLA also counts norms, softmax and elementwise work, which the model count leaves out.
  assert ours <= xla_flops <= 1.15 * ours, (ours, xla_flops)
  without_unembedding = batch * length * config.forward_flops_per_token(length, unembed=False)
  assert ours - without_unembedding == 2 * batch * length * config.hidden_size * config.vocab_size


@pytest.mark.parametrize("bad, match", [
    (dict(num_heads=4, num_kv_heads=3), "multiple of num_kv_heads"),
    (dict(value_head="both"), "value_head must be one of"),
    (dict(dtype="int8"), "unknown dtype"),
    (dict(attention="flash"), "attention must be one of"),
    (dict(attention="cudnn"), "needs dtype bfloat16 or float16"),
])
def test_bad_config(bad, match):
  with pytest.raises(ValueError, match=match):
    tiny_config("test", **bad)
  with pytest.raises(ValueError, match="unknown tiny model preset"):
    tiny_config("huge")


def test_build_models_from_the_experiment_config():
  """One build function: a separate critic starts from a copy of the policy's trunk; a shared
  head lives on the policy."""
  from configs.default import get_config
  from rl.models import build_models
  from rl.tokenizer import load_tokenizer
  config = get_config()
  tokenizer = load_tokenizer()
  with config.unlocked():
    config.model.tiny = "test"
  cfg, policy, critic = build_models(config, len(tokenizer), tokenizer.eos_token_id, tokenizer.pad_token_id)
  assert policy.config.vocab_size == cfg.vocab_size == len(tokenizer) == 4096
  assert policy.config.value_head == "none" and critic.config.value_head == "shared"
  np.testing.assert_array_equal(np.asarray(critic.layers[0].mlp.up_proj.get_value()),
                                np.asarray(policy.layers[0].mlp.up_proj.get_value()))
  with config.unlocked():
    config.model.value_head = "shared"
  _, policy, critic = build_models(config, len(tokenizer), tokenizer.eos_token_id, tokenizer.pad_token_id)
  assert critic is None and policy.config.value_head == "shared"


@pytest.mark.parametrize("top_k,top_p", [(8, 0.9), (4, 1.0), (50, 0.5)])
def test_support_logprobs_are_the_filtered_samplers(top_k, top_p):
  """sampler_support + support_logprob give exactly the log-probs of rl.env.sampling's top-k/top-p
  filtered distribution; tokens the sampler cannot draw keep the fallback."""
  from rl.env import sampling
  from rl.models import sampler_support, support_logprob
  logits = jnp.asarray(np.random.default_rng(0).normal(size=(5, 50)) * 3, jnp.float32)
  filtered = jax.nn.log_softmax(sampling._filter_logits(logits, top_k, top_p if top_p < 1 else None), -1)
  support = sampler_support(logits, top_k, top_p)
  for y in range(50):
    target = jnp.full((5,), y)
    got = np.asarray(support_logprob(logits, support, target, jnp.full((5,), -99.0)))
    want = np.asarray(filtered[:, y])
    drawable = want > -1e30
    np.testing.assert_allclose(got[drawable], want[drawable], atol=1e-5)
    assert (got[~drawable] == -99.0).all()


def test_truncated_logprobs_send_no_gradient_outside_the_support():
  """With a support, only the unembedding columns of supported tokens get a gradient (the full
  softmax moves every column); the log-probs are those renormalised on the support."""
  rng = np.random.default_rng(1)
  hidden = jnp.asarray(rng.normal(size=(2, 6, 8)), jnp.float32)
  w = jnp.asarray(rng.normal(size=(8, 40)), jnp.float32)
  logits = hidden @ w
  support = jax.lax.top_k(logits, 3)[1].astype(jnp.int32)
  targets = support[..., 1]  # each position's second most likely token
  logp, ent, extras = chunked_logprobs_entropy(hidden, w, targets, chunk=4, support=support)
  sup, full = extras["support"], extras["full_logprobs"]
  want = jnp.take_along_axis(logits, targets[..., None], -1)[..., 0] - jax.nn.logsumexp(
      jnp.take_along_axis(logits, support, -1), -1)
  np.testing.assert_allclose(logp, want, atol=1e-5)
  assert (np.asarray(logp) > np.asarray(full)).all() and (np.asarray(sup) == np.asarray(support)).all()
  grad_trunc = jax.grad(lambda w: chunked_logprobs_entropy(hidden, w, targets, chunk=4, support=support)[0].sum())(w)
  grad_full = jax.grad(lambda w: chunked_logprobs_entropy(hidden, w, targets, chunk=4)[0].sum())(w)
  outside = np.setdiff1d(np.arange(40), np.asarray(support).ravel())
  assert outside.size > 0
  assert np.abs(np.asarray(grad_trunc)[:, outside]).max() == 0.0
  assert np.abs(np.asarray(grad_full)[:, outside]).max() > 1e-4
  # Computing the support from the logits gives the same as passing it (top_p = 1: the top-k).
  made = chunked_logprobs_entropy(hidden, w, targets, chunk=4, support_top_k=3)
  np.testing.assert_array_equal(made[2]["support"], support)
  np.testing.assert_allclose(made[0], logp, atol=1e-6)


@pytest.mark.parametrize("attention", ["einsum", "tiled", "xla"])
def test_packed_rows_give_each_sequence_its_own_outputs(ids, attention):
  """Two sequences laid end to end in one row (segment_ids) get the log-probs, entropies and
  values they get alone, except the first token of the second (a prompt token: masked)."""
  model = init_model(tiny_config("test", value_head="shared", attention=attention), seed=1)
  a, b = np.asarray(ids[0, :7]), np.asarray(ids[1, :4])
  row = np.concatenate([a, b, np.zeros(1, np.int32)])[None]
  segments = np.array([[1] * 7 + [2] * 4 + [0]])
  packed = token_logprobs(model, row, segment_ids=segments, chunk=4, with_values=True)
  alone = [token_logprobs(model, s[None], chunk=4, with_values=True) for s in (a, b)]
  for key in ("logprobs", "entropy", "values"):
    got = np.asarray(packed[key][0])
    np.testing.assert_allclose(got[:7], np.asarray(alone[0][key][0]), atol=2e-5)
    np.testing.assert_allclose(got[8:11], np.asarray(alone[1][key][0, 1:]), atol=2e-5)
  with pytest.raises(ValueError, match="either attention_mask or segment_ids"):
    model.hidden_states(row, attention_mask=segments > 0, segment_ids=segments)


@pytest.mark.parametrize("packed", [False, True])
def test_query_blocks_give_the_same_outputs_and_gradients(monkeypatch, packed):
  """Cache-free einsum attention by query blocks (each block against the keys up to its end) gives
  the one-block outputs and gradients at every real token, with a last block shorter than the rest."""
  from rl.models import transformer

  model = init_model(tiny_config("test", value_head="shared"), seed=2)
  rng = np.random.default_rng(5)
  ids = rng.integers(3, 4096, size=(2, 23)).astype(np.int32)
  if packed:  # row 0: three sequences and padding; row 1: two
    key = {"segment_ids": np.array([[1] * 9 + [2] * 6 + [3] * 5 + [0] * 3, [1] * 15 + [2] * 8])}
    real = key["segment_ids"] > 0
  else:  # right padding on row 0
    real = np.arange(23)[None] < np.array([[17], [23]])
    key = {"attention_mask": real.astype(np.int32)}
  graphdef, params = nnx.split(model)

  def outputs(params):
    out = token_logprobs(nnx.merge(graphdef, params), ids, chunk=8, with_values=True, **key)
    loss = jnp.sum(jnp.where(real, out["logprobs"] + out["values"], 0.0))
    return loss, out

  results = {}
  for block in (0, 5):  # the block is read when tracing: a fresh jit each time
    monkeypatch.setattr(transformer, "ATTENTION_BLOCK", block)
    (_, out), grads = jax.jit(jax.value_and_grad(outputs, has_aux=True))(params)
    results[block] = (out, grads)
  for name in ("logprobs", "entropy", "values"):
    np.testing.assert_allclose(np.asarray(results[5][0][name])[real],
                               np.asarray(results[0][0][name])[real], atol=2e-5)
  for g5, g0 in zip(jax.tree.leaves(results[5][1]), jax.tree.leaves(results[0][1])):
    np.testing.assert_allclose(np.asarray(g5), np.asarray(g0), atol=2e-5, rtol=1e-4)


@pytest.mark.parametrize("extras", ["plain", "truncated", "topk"])
def test_needed_positions_get_the_full_outputs_and_gradients(extras):
  """`needed` (a loss's mask): those positions get the same log-probs, entropies and extras as
  without it, in any order across rows, and a loss over them the same gradients; the others
  are 0. (That chunks of unneeded positions skip their logits is a speed matter:
  scripts/bench_attention.py.)"""
  model = init_model(tiny_config("test"), seed=4)
  rng = np.random.default_rng(6)
  ids = rng.integers(3, 4096, size=(3, 21)).astype(np.int32)
  needed = np.zeros((3, 21), bool)
  needed[0, 3:7] = needed[2, 15:19] = needed[1, 20] = True  # a few, in different rows
  kw = {"plain": {}, "truncated": {"support_top_k": 5, "support_top_p": 0.9},
        "topk": {"top_logprobs": 3, "gather_ids": rng.integers(0, 4096, (3, 21, 2))}}[extras]
  graphdef, params = nnx.split(model)

  def outputs(params, only):  # a loss over the needed positions, computed with `needed=only`
    out = token_logprobs(nnx.merge(graphdef, params), ids, chunk=4, needed=only, **kw)
    return jnp.sum(jnp.where(needed, out["logprobs"] - 0.1 * out["entropy"], 0.0)), out

  step = jax.jit(jax.value_and_grad(outputs, has_aux=True))
  (_, full), full_grads = step(params, None)
  (_, part), part_grads = step(params, needed)
  assert set(part) == set(full)
  for key in full:
    got, want = np.asarray(part[key]), np.asarray(full[key])
    # rtol too: entropies near 8.3 differ by up to ~1e-5 in float32 between the two orders of
    # summation on some CPUs (relative 1.4e-6).
    np.testing.assert_allclose(got[needed], want[needed], atol=1e-5, rtol=1e-5)
    assert not np.any(got[:, 1:][~needed[:, 1:]]), key  # (index 0 has no prediction: its fill)
  for g, h in zip(jax.tree.leaves(part_grads), jax.tree.leaves(full_grads)):
    np.testing.assert_allclose(np.asarray(g), np.asarray(h), atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("tile", [4, 5])
def test_tiled_attention_gives_the_einsum_outputs_and_gradients(monkeypatch, tile):
  """attention="tiled" with tiles smaller than the rows (5: the last tile padded) gives the einsum
  attention's outputs and gradients at every real token of packed rows (three sequences and
  padding; two sequences) and of a right-padded row, skipped tiles included."""
  from rl.models import transformer

  monkeypatch.setattr(transformer, "TILE", tile)  # read when tracing
  rng = np.random.default_rng(7)
  ids = rng.integers(3, 4096, size=(2, 23)).astype(np.int32)
  packed = {"segment_ids": np.array([[1] * 9 + [2] * 6 + [3] * 5 + [0] * 3, [1] * 15 + [2] * 8])}
  padded = {"attention_mask": (np.arange(23)[None] < np.array([[17], [23]])).astype(np.int32)}
  for key in (packed, padded):
    real = next(iter(key.values())) > 0
    results = {}
    for attention in ("einsum", "tiled"):
      graphdef, params = nnx.split(init_model(tiny_config("test", value_head="shared",
                                                          attention=attention), seed=2))

      def outputs(params):
        out = token_logprobs(nnx.merge(graphdef, params), ids, chunk=8, with_values=True, **key)
        return jnp.sum(jnp.where(real, out["logprobs"] + out["values"], 0.0)), out

      results[attention] = jax.jit(jax.value_and_grad(outputs, has_aux=True))(params)
    (_, ref), ref_grads = results["einsum"]
    (_, got), grads = results["tiled"]
    for name in ("logprobs", "entropy", "values"):
      np.testing.assert_allclose(np.where(real, got[name], 0), np.where(real, ref[name], 0), atol=2e-5)
    for a, b in zip(jax.tree.leaves(ref_grads), jax.tree.leaves(grads)):
      np.testing.assert_allclose(a, b, atol=2e-5)


def test_split_last_gradient_is_the_slices_gradient():
  """split_last's backward (one concatenation) gives what differentiating plain slices gives,
  including a piece whose cotangent is zero (unused)."""
  from rl.models.transformer import split_last
  x = jnp.asarray(np.random.default_rng(0).normal(size=(2, 3, 9)), jnp.float32)
  w = jnp.asarray(np.random.default_rng(1).normal(size=(9,)), jnp.float32)

  def with_split(x):
    a, b, c = split_last(x * w, (4, 3, 2))
    return jnp.sum(jnp.sin(a)) + jnp.sum(b ** 2)  # c unused

  def with_slices(x):
    y = x * w
    return jnp.sum(jnp.sin(y[..., :4])) + jnp.sum(y[..., 4:7] ** 2)

  assert [p.shape for p in split_last(x, (4, 3, 2))] == [(2, 3, 4), (2, 3, 3), (2, 3, 2)]
  np.testing.assert_allclose(jax.grad(with_split)(x), jax.grad(with_slices)(x), rtol=1e-6)
  np.testing.assert_allclose(jax.jit(jax.grad(with_split))(x), jax.grad(with_slices)(x), rtol=1e-6)


def test_unembed_gradients_are_the_einsums():
  """unembed's hand-written backward (the weight gradient behind an optimisation barrier) gives
  the gradients of the plain product, for a tied weight (the embedding transposed) and an untied
  [D, V] one."""
  from rl.models.transformer import unembed
  rng = np.random.default_rng(0)
  h = jnp.asarray(rng.normal(size=(2, 5, 8)), jnp.float32)
  for weight, layout in ((jnp.asarray(rng.normal(size=(11, 8)), jnp.float32), lambda w: w.T),
                         (jnp.asarray(rng.normal(size=(8, 11)), jnp.float32), lambda w: w)):
    ours = lambda h, w: jnp.sum(jnp.sin(unembed(h, layout(w))))  # noqa: E731
    plain = lambda h, w: jnp.sum(jnp.sin(jnp.einsum("btd,dv->btv", h, layout(w))))  # noqa: E731
    for a, b in zip(jax.jit(jax.grad(ours, (0, 1)))(h, weight), jax.grad(plain, (0, 1))(h, weight)):
      np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
