"""Sampler tests: parity with transformers' greedy decode, multi-turn cache, log-probs, stops."""

import os

import jax
import numpy as np
import pytest
from flax import nnx

from rl.env.sampling import CacheOverflowError, Sampler
from rl.models import init_model, load_hf_checkpoint, tiny_config, token_logprobs

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


@pytest.fixture(scope="module")
def qwen():
  return load_hf_checkpoint(os.path.join(FIXTURES, "hf_qwen2"))


@pytest.fixture(scope="module")
def sampler(qwen):
  return Sampler(qwen, max_cache_len=48, min_chunk=32)  # one compiled chunk shape


@nnx.jit
def _logprobs(model, ids, mask, temperature):
  return token_logprobs(model, ids, mask, temperature=temperature)["logprobs"]


def _prompts(n=3, seed=0):
  rng = np.random.default_rng(seed)
  return [rng.integers(3, 256, size=int(rng.integers(2, 9))).tolist() for _ in range(n)]


@pytest.mark.parametrize("name", ["hf_qwen2", "hf_llama"])
def test_greedy_matches_transformers_generate(name):
  model = load_hf_checkpoint(os.path.join(FIXTURES, name))
  ids = np.load(os.path.join(FIXTURES, name, "reference_input_ids.npy"))[:, :6]
  expected = np.load(os.path.join(FIXTURES, name, "reference_greedy.npy"))
  out = Sampler(model, max_cache_len=48).sample(
      ids.tolist(), max_new_tokens=8, rng=jax.random.key(0), temperature=0)
  assert out.tokens == expected.tolist()
  assert out.finish_reasons == ["length", "length"]


def test_multi_turn_equals_re_prefill(sampler):
  conv = sampler.new_conversations(3)
  prompts = _prompts()
  turns = [prompts, [[7, 8, 9], None, [11]], [[12], [13, 14, 15, 16], None]]
  for i, new in enumerate(turns):
    before = [list(h) for h in conv.history]
    out = sampler.generate(conv, new, max_new_tokens=8, rng=jax.random.key(i), temperature=0)
    fresh = sampler.sample([before[b] + list(new[b]) if new[b] is not None else [1]
                            for b in range(3)], max_new_tokens=8, rng=jax.random.key(9),
                           temperature=0)
    for b in range(3):
      if new[b] is None:
        assert out.tokens[b] == [] and out.finish_reasons[b] == "inactive"
      else:
        assert out.tokens[b] == fresh.tokens[b], (i, b)
  np.testing.assert_array_equal(conv.lengths, conv.cached_lengths())
  assert all(len(h) == n + 1 for h, n in zip(conv.history, conv.lengths))  # +1 pending token
  # A finished episode's row is reused for a new one; the other rows keep their history.
  conv.reset([1])
  out = sampler.generate(conv, [None, prompts[0], None], max_new_tokens=8, rng=jax.random.key(0),
                         temperature=0)
  fresh = sampler.sample([prompts[0]] * 3, max_new_tokens=8, rng=jax.random.key(0),
                         temperature=0)
  assert out.tokens[1] == fresh.tokens[0] and conv.history[1] == prompts[0] + fresh.tokens[0]


def test_call_reads_only_the_rows_it_extends(qwen):
  """A call attends over the slots of the rows it extends, not of a long idle row; that row's
  cache is untouched and its next turn equals a re-prefill."""
  sampler = Sampler(qwen, max_cache_len=256, min_chunk=16)
  conv = sampler.new_conversations(2)
  long_prompt = np.random.default_rng(3).integers(3, 256, size=100).tolist()
  turns = [[long_prompt, [3, 4, 5, 6]], [None, [7, 8]], [[9], [10]]]
  for i, new in enumerate(turns):
    if i == 1:  # row 1 ends at 4 + 8 + 2 + 8 = 22 slots; row 0 holds 107
      assert sampler._attend_len(conv.lengths, np.array([0, 2]), np.array([0, 8])) == 64
    before = [list(h) for h in conv.history]
    out = sampler.generate(conv, new, max_new_tokens=8, rng=jax.random.key(i), temperature=0)
    fresh = sampler.sample([before[b] + list(new[b]) if new[b] is not None else [1] for b in range(2)],
                           max_new_tokens=8, rng=jax.random.key(9), temperature=0)
    for b in range(2):
      if new[b] is not None:
        assert out.tokens[b] == fresh.tokens[b], (i, b)
  assert sampler._attend_len(conv.lengths, np.array([1, 0])) == 128  # row 0: 108 + 8 + 1 slots


def test_ragged_prefill_equals_one_batch_wide_chunk(qwen, monkeypatch):
  """Rows that bring many more tokens than the rest append their heads in a batch of their own;
  the turns, log-probs and histories equal those of one batch-wide chunk."""
  from rl.env import sampling
  heads = []
  extend_rows = sampling._extend_rows
  monkeypatch.setattr(sampling, "_extend_rows",
                      lambda *a, **k: heads.append(a[4].shape) or extend_rows(*a, **k))
  rng = np.random.default_rng(4)
  long = lambda n: rng.integers(3, 256, size=n).tolist()
  short = lambda: long(int(rng.integers(1, 5)))
  turns = [[long(100)] + [short() for _ in range(15)],
           [short(), long(60), None] + [short() for _ in range(13)],
           [long(5), short(), short(), long(40)] + [None] * 4 + [short() for _ in range(8)]]
  ragged, wide = (Sampler(qwen, max_cache_len=256, min_chunk=8, ragged_prefill=r, lanes=1)
                  for r in (True, False))
  conv_r, conv_w = ragged.new_conversations(16), wide.new_conversations(16)
  for i, new in enumerate(turns):
    out_r = ragged.generate(conv_r, new, max_new_tokens=6, rng=jax.random.key(i), temperature=0)
    out_w = wide.generate(conv_w, new, max_new_tokens=6, rng=jax.random.key(i), temperature=0)
    assert out_r.tokens == out_w.tokens and out_r.finish_reasons == out_w.finish_reasons, i
    np.testing.assert_allclose(np.concatenate([np.asarray(x) for x in out_r.logprobs if x]),
                               np.concatenate([np.asarray(x) for x in out_w.logprobs if x]), atol=1e-4)
  assert conv_r.history == conv_w.history
  np.testing.assert_array_equal(conv_r.lengths, conv_r.cached_lengths())
  np.testing.assert_array_equal(conv_r.lengths, conv_w.lengths)
  # Turn 1: one long row (100 tokens: 16 x 128) -> its 92-token head in a call of its own (8 rows
  # and 64 tokens at least, on the ladder: 8 x 96), then 16 x 8; turn 2 (61 tokens with the
  # pending one: 16 x 64) -> 8 x 64 + 16 x 8; turn 3 (41 tokens: 16 x 48) costs less unsplit.
  assert heads == [(8, 96), (8, 64)]


@pytest.mark.parametrize("temperature, top_p", [(1.0, 1.0), (0.7, 0.9)])
def test_sampler_logprobs_match_training_forward(sampler, qwen, temperature, top_p):
  prompts = _prompts(seed=1)
  out = sampler.sample(prompts, max_new_tokens=8, rng=jax.random.key(3),
                       temperature=temperature, top_p=top_p)
  # One padded batch (one compile) instead of a forward per row.
  ids = np.zeros((len(prompts), 24), np.int32)
  mask = np.zeros_like(ids)
  for b, (prompt, tokens) in enumerate(zip(prompts, out.tokens)):
    ids[b, :len(prompt) + len(tokens)] = prompt + tokens
    mask[b, :len(prompt) + len(tokens)] = 1
  recomputed = np.asarray(_logprobs(qwen, ids, mask, temperature))
  for b, (prompt, logprobs) in enumerate(zip(prompts, out.logprobs)):
    np.testing.assert_allclose(logprobs, recomputed[b, len(prompt):len(prompt) + len(logprobs)],
                               atol=2e-5)


def test_rng_and_top_k(sampler):
  prompts = _prompts(seed=2)
  a = sampler.sample(prompts, max_new_tokens=8, rng=jax.random.key(0))
  b = sampler.sample(prompts, max_new_tokens=8, rng=jax.random.key(0))
  c = sampler.sample(prompts, max_new_tokens=8, rng=jax.random.key(1))
  assert a.tokens == b.tokens and a.tokens != c.tokens
  greedy = sampler.sample(prompts, max_new_tokens=8, rng=jax.random.key(0), temperature=0)
  top1 = sampler.sample(prompts, max_new_tokens=8, rng=jax.random.key(5), top_k=1)
  nucleus = sampler.sample(prompts, max_new_tokens=8, rng=jax.random.key(6), top_p=1e-6)
  assert top1.tokens == greedy.tokens == nucleus.tokens


def test_stop_ids_and_stop_sequences(qwen):
  prompts = _prompts(seed=4)
  plain = Sampler(qwen, max_cache_len=48).sample(prompts, max_new_tokens=8,
                                                rng=jax.random.key(0), temperature=0)
  row = plain.tokens[0]
  stop = row[3]
  by_id = Sampler(qwen, max_cache_len=48, stop_token_ids=[stop]).sample(
      prompts, max_new_tokens=8, rng=jax.random.key(0), temperature=0)
  assert by_id.tokens[0] == row[:row.index(stop) + 1] and by_id.finish_reasons[0] == "stop"
  sequence = row[4:6]
  first = next(i for i in range(1, len(row)) if row[i - 1:i + 1] == sequence)
  by_seq = Sampler(qwen, max_cache_len=48, stop_sequences=[sequence]).sample(
      prompts, max_new_tokens=8, rng=jax.random.key(0), temperature=0)
  assert by_seq.tokens[0] == row[:first + 1] and by_seq.finish_reasons[0] == "stop"
  for b in (1, 2):  # other rows stop only on their own matches
    if sequence not in [plain.tokens[b][i:i + 2] for i in range(7)]:
      assert by_seq.tokens[b] == plain.tokens[b]


def test_tool_call_end_is_a_stop_for_the_tiny_tokenizer():
  from rl.tokenizer import load_tokenizer, stop_token_ids
  tokenizer = load_tokenizer()
  model = init_model(tiny_config("test"), seed=0)
  end = tokenizer.encode("</tool_call>", add_special_tokens=False)
  sampler = Sampler(model, max_cache_len=64, stop_token_ids=stop_token_ids(tokenizer),
                    stop_sequences=[end])
  assert end[0] in np.asarray(sampler.stop_ids).tolist()
  # Make </tool_call> the argmax everywhere: the first generated token ends the turn.
  embed = np.asarray(model.embed_tokens.get_value()).copy()
  embed[end[0]] = 50.0 * np.sign(embed.mean(0) + 1e-6)
  model.embed_tokens.set_value(embed)
  sampler.update_params(model)
  prompt = tokenizer.apply_chat_template([{"role": "user", "content": "hi"}],
                                         add_generation_prompt=True, tokenize=False)
  out = sampler.sample([tokenizer.encode(prompt, add_special_tokens=False)], max_new_tokens=8,
                       rng=jax.random.key(0), temperature=0)
  assert out.tokens == [end] and out.finish_reasons == ["stop"]


def test_cache_overflow_error_and_truncation(qwen):
  strict = Sampler(qwen, max_cache_len=16)
  with pytest.raises(CacheOverflowError, match="row 1.*max_cache_len=16"):
    strict.sample([[5] * 4, [5] * 12], max_new_tokens=8, rng=jax.random.key(0))
  lenient = Sampler(qwen, max_cache_len=16, overflow="truncate")
  out = lenient.sample([[5] * 4, [5] * 12, [5] * 20], max_new_tokens=8, rng=jax.random.key(0))
  assert [len(t) for t in out.tokens] == [8, 4, 0]
  assert out.finish_reasons == ["length", "cache_full", "cache_full"]
  with pytest.raises(ValueError, match="overflow must be one of"):
    Sampler(qwen, overflow="drop")
  with pytest.raises(ValueError, match="3 rows of tokens for a batch of 2"):
    lenient.generate(lenient.new_conversations(2), [[1]] * 3, max_new_tokens=2,
                     rng=jax.random.key(0))


def _multi_turn(sampler, batch, seed=7):
  """Three turns of ragged prompts and observations (some rows idle) on `batch` rows, with one
  key for the batch in the first turn and per-row keys after it; the outputs and the
  conversations."""
  rng = np.random.default_rng(seed)
  tokens = lambda lo, hi: rng.integers(3, 256, size=int(rng.integers(lo, hi))).tolist()
  turns = [[tokens(2, 30) for _ in range(batch)],
           [tokens(1, 12) if b % 3 else None for b in range(batch)],
           [tokens(1, 40) if b % 4 != 1 else None for b in range(batch)]]
  conv = sampler.new_conversations(batch)
  outs = []
  for i, new in enumerate(turns):
    rng_key = jax.random.key(i) if i == 0 else jax.random.split(jax.random.key(i), batch)
    outs.append(sampler.generate(conv, new, max_new_tokens=6, rng=rng_key))
  return outs, conv


def test_lanes_sample_what_one_lane_samples(qwen):
  """Rows split into lanes (a cache and a thread each) sample the same tokens as one lane, for a
  batch-wide key and per-row keys, over turns with idle rows and uneven lane sizes."""
  reference, conv_1 = _multi_turn(Sampler(qwen, max_cache_len=128, lanes=1), 7)
  assert conv_1.num_lanes == 1
  for lanes in (2, 3):
    outs, conv = _multi_turn(Sampler(qwen, max_cache_len=128, lanes=lanes), 7)
    assert conv.num_lanes == lanes and conv.bounds[0] == 0 and conv.bounds[-1] == 7
    for turn, (a, b) in enumerate(zip(reference, outs)):
      assert a.tokens == b.tokens and a.finish_reasons == b.finish_reasons, (lanes, turn)
      for la, lb in zip(a.logprobs, b.logprobs):
        np.testing.assert_allclose(la, lb, atol=1e-5)
    assert conv.history == conv_1.history
    np.testing.assert_array_equal(conv.lengths, conv.cached_lengths())
  # A turn where one lane has nothing to do leaves that lane's cache as it was.
  sampler = Sampler(qwen, max_cache_len=128, lanes=2)
  conv = sampler.new_conversations(4)
  sampler.generate(conv, [[5, 6]] * 4, max_new_tokens=3, rng=jax.random.key(0))
  idle_cache = conv.caches[1]
  out = sampler.generate(conv, [[7], [8], None, None], max_new_tokens=3, rng=jax.random.key(1))
  assert conv.caches[1] is idle_cache and out.finish_reasons[2:] == ["inactive", "inactive"]
  np.testing.assert_array_equal(conv.lengths, conv.cached_lengths())


def test_lane_counts_and_bad_lanes(qwen):
  from rl.env.sampling import MIN_LANE_ROWS
  from rl.lanes import auto_lanes
  auto = Sampler(qwen, max_cache_len=32)
  assert auto.lanes_for(MIN_LANE_ROWS - 1) == 1  # too few rows for a second lane
  assert auto.lanes_for(64) == min(auto_lanes(), 64 // MIN_LANE_ROWS)
  assert auto_lanes(mesh=object()) == 1
  assert Sampler(qwen, max_cache_len=32, lanes=4).lanes_for(3) == 3
  with pytest.raises(ValueError, match="lanes must be >= 0"):
    Sampler(qwen, lanes=-1)
  with pytest.raises(ValueError, match="with a mesh"):
    Sampler(qwen, lanes=2, mesh=object())
  with pytest.raises(ValueError, match="3 sampling keys for a batch of 2"):
    auto.sample([[1], [2]], max_new_tokens=2, rng=jax.random.split(jax.random.key(0), 3))


def test_inverse_cdf_draws_follow_the_distribution():
  """`_categorical` (one uniform per row) draws each token with its softmax probability: zero
  probability never, the rest within 4 standard errors over 40,000 draws, with a vocabulary that
  spans several CDF blocks (one of them without mass, the last one partial) and keys given per
  row or for the whole batch."""
  from rl.env.sampling import CDF_BLOCK, _categorical
  vocab = 3 * CDF_BLOCK + 37
  probs = np.zeros(vocab)
  probs[[0, 5, CDF_BLOCK - 1, 2 * CDF_BLOCK, vocab - 1]] = [0.1, 0.3, 0.05, 0.25, 0.3]
  logits = np.where(probs > 0, np.log(np.maximum(probs, 1e-30)), -np.inf).astype(np.float32)
  rows = 20_000
  for rng in (jax.random.key(3), jax.random.split(jax.random.key(4), rows)):
    draws = np.concatenate([np.asarray(_categorical(rng, np.tile(logits, (rows, 1))))
                            for rng in (rng, jax.random.fold_in(rng, 1) if rng.ndim == 0
                                        else jax.vmap(lambda k: jax.random.fold_in(k, 1))(rng))])
    freq = np.bincount(draws, minlength=vocab) / draws.size
    assert freq[probs == 0].sum() == 0
    stderr = np.sqrt(probs * (1 - probs) / draws.size)
    assert np.all(np.abs(freq - probs) <= 4 * stderr + 1e-12), (freq[probs > 0], probs[probs > 0])
