"""Batched, jitted generation with a per-row KV cache, for single prompts and multi-turn agents.

One call = one jitted function: append each row's new tokens (prompt or observation) to its
conversation cache, then decode with a `lax.while_loop` until every row hits a stop token, a stop
sequence or its token budget. Rows are independent: each has its own length, and rows whose
episode has finished (or that have nothing to do this turn) are simply passed as inactive.

    sampler = Sampler(model, max_cache_len=2048, stop_token_ids=stop_token_ids(tokenizer),
                      stop_sequences=[tokenizer.encode("</tool_call>", add_special_tokens=False)])
    conv = sampler.new_conversations(batch_size=8)
    out = sampler.generate(conv, prompts, max_new_tokens=128, rng=jax.random.key(0))
    # out.tokens[b], out.logprobs[b], out.finish_reasons[b] ("stop" | "length" | "cache_full"
    # | "inactive"); the next turn appends observations without re-prefilling the history:
    out = sampler.generate(conv, [obs_0, None, obs_2, ...], max_new_tokens=128, rng=key2)

On a CPU the rows are split into lanes, contiguous blocks of rows with a KV cache of their own,
and each lane's prefill and decode run in a thread of their own: XLA's CPU runtime runs one
decode step's small ops one after another, so one program keeps about one core busy, while two
programs on two cores decode about 1.6x as many tokens per second (scripts/bench_decode.py). Every
row samples with a key of its own, so what a row samples does not depend on the lane count, up to
float rounding: a program of fewer rows can round a logit differently in its last bit, which over
a long run can flip a draw.

The last sampled token of a turn is kept "pending" on the host and written to the cache with the
next turn's tokens, so a turn costs one forward over (1 + observation) tokens plus the decode.
Returned log-probs are log softmax(logits / temperature) of the sampled token, i.e. before top-k /
top-p truncation, which is what the training forward recomputes at the same temperature.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from rl.algo.batching import round_up
from rl.lanes import LanePool, auto_lanes, lane_bounds
from rl.models.transformer import MASKED_LOGIT, KVCache, Transformer

Array = jax.Array
OVERFLOW_MODES = ("error", "truncate")


class CacheOverflowError(ValueError):
  """A conversation does not fit in the sampler's fixed-capacity cache."""


@dataclasses.dataclass
class SampleOutput:
  tokens: list[list[int]]  # generated tokens per row, the stop token included
  logprobs: list[list[float]]  # sampler log-prob of each generated token
  finish_reasons: list[str]  # "stop" | "length" | "cache_full" | "inactive"


@dataclasses.dataclass
class Conversations:
  """Per-row conversation state of one batch: the device caches plus host-side bookkeeping.

  The rows are split into lanes: lane i holds rows bounds[i]:bounds[i + 1] and its cache
  `caches[i]` (row b of the batch is row b - bounds[i] of it)."""

  caches: list[KVCache]
  bounds: tuple[int, ...]  # lane i: rows bounds[i]:bounds[i + 1]
  lengths: np.ndarray  # tokens stored in the cache per row
  pending: list[list[int]]  # sampled but not yet cached tokens per row (the last one of a turn)
  history: list[list[int]]  # every token of each row's conversation, cached or pending

  @property
  def batch_size(self) -> int:
    return len(self.pending)

  @property
  def capacity(self) -> int:
    return self.caches[0].capacity

  @property
  def num_lanes(self) -> int:
    return len(self.caches)

  def lane_rows(self, lane: int) -> slice:
    return slice(self.bounds[lane], self.bounds[lane + 1])

  def busy_lanes(self, num_new: np.ndarray) -> list[int]:
    """The lanes with a row that appends tokens (`num_new` > 0); a call leaves the others alone."""
    return [lane for lane in range(self.num_lanes) if num_new[self.lane_rows(lane)].any()]

  def cached_lengths(self) -> np.ndarray:
    """The device caches' per-row lengths, in batch order (a check of `lengths`)."""
    return np.concatenate([np.asarray(c.lengths) for c in self.caches])

  def reset(self, rows: Sequence[int]) -> None:
    """Starts new conversations in `rows` (their old cache slots are simply overwritten)."""
    rows = np.asarray(list(rows), np.int64)
    for lane in range(self.num_lanes):
      lo, hi = self.bounds[lane], self.bounds[lane + 1]
      local = rows[(rows >= lo) & (rows < hi)] - lo
      if local.size:
        cache = self.caches[lane]
        self.caches[lane] = dataclasses.replace(
            cache, lengths=cache.lengths.at[local.astype(np.int32)].set(0))
    for r in rows.tolist():
      self.lengths[r] = 0
      self.pending[r] = []
      self.history[r] = []


# Auto lanes give each lane at least this many rows: below it a lane's per-op overhead is not
# worth a thread.
MIN_LANE_ROWS = 8


def _bucket(n: int, minimum: int = 8) -> int:
  """The smallest size >= n of the ladder minimum x {1, 1.5} x 2^k: two static shapes per octave,
  so a rollout compiles a handful of them and pads at most by half. (Powers of two alone padded
  a multi-turn rollout's 33-token observation chunks to 64 and a 192-slot decode span to 256:
  bench_decode.py's multi-turn shape ran 1.14x faster on the finer ladder.)"""
  size = minimum
  while size < n:
    if size % 2 == 0 and size * 3 // 2 >= n:
      return size * 3 // 2
    size *= 2
  return size


def _filter_logits(logits: Array, top_k: int, top_p: Array | None) -> Array:
  """Masks logits outside the top-k set and the top-p nucleus with -inf."""
  neg = jnp.finfo(logits.dtype).min
  if top_k > 0:
    kth = jax.lax.top_k(logits, top_k)[0][:, -1:]
    logits = jnp.where(logits < kth, neg, logits)
  if top_p is not None:
    sorted_logits = jnp.sort(logits, axis=-1)[:, ::-1]
    probs = jax.nn.softmax(sorted_logits, axis=-1)
    mass_before = jnp.cumsum(probs, axis=-1) - probs
    keep = mass_before < top_p
    # The smallest kept logit is the threshold; the top token is always kept.
    threshold = jnp.min(jnp.where(keep, sorted_logits, jnp.inf), axis=-1, keepdims=True)
    logits = jnp.where(logits < threshold, neg, logits)
  return logits


def _constrain(logits: Array, grammar: Array | None, state: Array) -> Array:
  """Masks the tokens the grammar does not allow in each row's state (rl.env.constrained).

  A row with no allowed token (a finished message) keeps its logits: it is not decoding.
  """
  if grammar is None:
    return logits
  allowed = grammar[state] >= 0
  allowed = allowed | ~jnp.any(allowed, axis=-1, keepdims=True)
  return jnp.where(allowed, logits, MASKED_LOGIT)


def _fold(rng: Array, data) -> Array:
  """`fold_in` of one key, or of each of a [B] array of per-row keys."""
  if rng.ndim == 0:
    return jax.random.fold_in(rng, data)
  return jax.vmap(lambda key: jax.random.fold_in(key, data))(rng)


# Block width of the two-level CDF in `_categorical`.
CDF_BLOCK = 256


def _categorical(rng: Array, logits: Array, probs: Array | None = None) -> Array:
  """One draw per row from softmax(logits), by inverting the CDF with one uniform per row.

  jax.random.categorical's Gumbel trick draws a random number per vocabulary entry (6.5 ms of a
  ~20 ms CPU decode step at B=64, V=4096), and a cumulative sum over the whole vocabulary is a
  slow reduce-window on XLA's CPU backend. So the search has two levels: the uniform picks a
  block of CDF_BLOCK entries from the block totals' running sum, then an entry from the running
  sum inside that one block (gathered, [B, CDF_BLOCK]). Summing in two levels also keeps the
  rounding error a few hundred ulps even for a 150k vocabulary. `rng`: one key for the batch or
  [B] keys, one per row. `probs`: softmax(logits) when the caller has it already.
  """
  b, v = logits.shape
  if probs is None:
    probs = jax.nn.softmax(logits, axis=-1)
  blocks = jnp.pad(probs, ((0, 0), (0, -v % CDF_BLOCK))).reshape(b, -1, CDF_BLOCK)
  num_blocks = blocks.shape[1]
  running = jnp.cumsum(jnp.sum(blocks, axis=-1), axis=-1)  # [B, blocks]: mass up to each block's end
  if rng.ndim == 0:
    u = jax.random.uniform(rng, (b,))
  else:
    u = jax.vmap(lambda key: jax.random.uniform(key, ()))(rng)
  target = (1.0 - u) * running[:, -1]  # in (0, total]: a zero-probability first entry is never hit
  # The first block whose running mass reaches the target. Its mass is positive: running[k] ==
  # running[k-1] would put the target below running[k-1].
  block = jnp.minimum(jnp.sum(running < target[:, None], axis=-1), num_blocks - 1)
  before = jnp.where(block > 0, jnp.take_along_axis(running, jnp.maximum(block - 1, 0)[:, None],
                                                    axis=-1)[:, 0], 0.0)
  chosen = jnp.take_along_axis(blocks, block[:, None, None], axis=1)[:, 0]  # [B, CDF_BLOCK]
  within = jnp.cumsum(chosen, axis=-1)
  entry = jnp.minimum(jnp.sum(within < (target - before)[:, None], axis=-1), CDF_BLOCK - 1)
  # Rounding can still land on a zero-probability entry (padding included) next to a boundary:
  # take the block's mode then, which has positive probability.
  hit = jnp.take_along_axis(chosen, entry[:, None], axis=-1)[:, 0] > 0
  entry = jnp.where(hit, entry, jnp.argmax(chosen, axis=-1))
  return block * CDF_BLOCK + entry


def _sample(logits: Array, rng: Array, temperature: Array, greedy: bool, top_k: int,
            top_p: Array | None) -> tuple[Array, Array]:
  """One token per row and its log-prob under log softmax(logits / temperature). `rng`: one key
  for the whole batch, or [B] keys, one per row (a row's draw then depends on its key alone, not
  on which other rows share the call)."""
  if greedy:
    token = jnp.argmax(logits, axis=-1)
    logp = jax.nn.log_softmax(logits, axis=-1)
  else:
    scaled = logits / temperature
    logp = jax.nn.log_softmax(scaled, axis=-1)
    if top_k == 0 and top_p is None:  # nothing filtered: the distribution is exp(logp)
      token = _categorical(rng, scaled, jnp.exp(logp))
    else:
      token = _categorical(rng, _filter_logits(scaled, top_k, top_p))
  token = token.astype(jnp.int32)
  return token, jnp.take_along_axis(logp, token[:, None], axis=-1)[:, 0]


def _stop_hit(token: Array, recent: Array, stop_ids: Array, stop_seqs: Array) -> Array:
  """Whether each row just produced a stop id or completed a stop sequence (left-padded with -1)."""
  hit = jnp.any(token[:, None] == stop_ids[None, :], axis=-1)
  if stop_seqs.shape[0]:
    window = recent[:, None, -stop_seqs.shape[1]:]  # [B, 1, K]
    match = (stop_seqs[None] == -1) | (window == stop_seqs[None])
    hit = hit | jnp.any(jnp.all(match, axis=-1), axis=-1)
  return hit


def _advance(grammar: Array | None, state: Array, token: Array) -> Array:
  if grammar is None:
    return state
  nxt = grammar[state, token]
  return jnp.where(nxt < 0, grammar.shape[0] - 1, nxt)  # off the grammar: the last, free row


@functools.partial(jax.jit, static_argnames=("graphdef", "attend_len"), donate_argnames=("cache",))
def _extend_rows(graphdef, state, cache: KVCache, rows: Array, chunk: Array, num_new: Array, *,
                 attend_len: int) -> KVCache:
  """`_prefill`'s extension on the cache rows `rows` only (gathered, extended, scattered back).
  Entries of `rows` with num_new = 0 are padding: their rows come back unchanged."""
  model = nnx.merge(graphdef, state)
  sub = jax.tree.map(lambda x: x[rows], cache)
  sub = model.hidden_states(chunk, cache=sub, num_new=num_new, attend_len=attend_len)[1]
  return jax.tree.map(lambda full, part: full.at[rows].set(part), cache, sub)


@functools.partial(jax.jit, static_argnames=("graphdef", "attend_len"), donate_argnames=("cache",))
def _prefill(graphdef, state, cache: KVCache, chunk: Array, num_new: Array, *,
             attend_len: int) -> tuple[KVCache, Array]:
  """Extends each row by its chunk; returns the cache and each row's last hidden state [B, D]."""
  model = nnx.merge(graphdef, state)
  hidden, cache = model.hidden_states(chunk, cache=cache, num_new=num_new, attend_len=attend_len)
  last = jnp.take_along_axis(hidden, jnp.maximum(num_new - 1, 0)[:, None, None], axis=1)[:, 0]
  return cache, last


@functools.partial(jax.jit, static_argnames=("graphdef", "max_new", "greedy", "top_k", "use_top_p",
                                             "attend_len"), donate_argnames=("cache",))
def _decode(graphdef, state, cache: KVCache, last: Array, active: Array, budget: Array, rng: Array,
            temperature: Array, top_p: Array, stop_ids: Array, stop_seqs: Array,
            grammar: Array | None, grammar_start: Array, *, max_new: int, greedy: bool, top_k: int,
            use_top_p: bool, attend_len: int):
  """Samples from `last` (each row's last hidden state), then decodes up to `budget[b]` tokens
  per active row. Compiled per decode shape only, not per prefill chunk width (`_prefill`).

  With `grammar` (rl.env.constrained's [states, vocab] next-state table), every row starts the turn
  in `grammar_start` and samples only the tokens its state allows; log-probs are those of the
  masked distribution.
  """
  model = nnx.merge(graphdef, state)
  full_cache, cache = cache, cache.prefix(attend_len)  # slice once, not in every step and layer
  batch = last.shape[0]
  top_p_value = top_p if use_top_p else None
  gstate = jnp.full((batch,), grammar_start, jnp.int32)
  token, logp = _sample(_constrain(model.logits_from_hidden(last), grammar, gstate),
                        _fold(rng, 0), temperature, greedy, top_k, top_p_value)
  gstate = _advance(grammar, gstate, token)
  window = max(1, stop_seqs.shape[1])
  recent = jnp.full((batch, window), -2, jnp.int32).at[:, -1].set(token)
  tokens = jnp.zeros((batch, max_new), jnp.int32).at[:, 0].set(jnp.where(active, token, 0))
  logps = jnp.zeros((batch, max_new), jnp.float32).at[:, 0].set(jnp.where(active, logp, 0.0))
  count = active.astype(jnp.int32)
  stopped = active & _stop_hit(token, recent, stop_ids, stop_seqs)
  done = ~active | stopped | (count >= budget)

  def cond(carry):
    step, _, _, done, *_ = carry
    return (step < max_new) & ~jnp.all(done)

  def body(carry):
    step, cache, token, done, stopped, recent, tokens, logps, count, gstate = carry
    feed = (~done).astype(jnp.int32)
    hidden, cache = model.hidden_states(token[:, None], cache=cache, num_new=feed)
    new_token, new_logp = _sample(_constrain(model.logits_from_hidden(hidden[:, 0]), grammar, gstate),
                                  _fold(rng, step), temperature, greedy, top_k,
                                  top_p_value)
    live = ~done
    gstate = jnp.where(live, _advance(grammar, gstate, new_token), gstate)
    index = jnp.minimum(count, max_new - 1)
    rows = jnp.arange(batch)
    tokens = tokens.at[rows, index].set(jnp.where(live, new_token, tokens[rows, index]))
    logps = logps.at[rows, index].set(jnp.where(live, new_logp, logps[rows, index]))
    count = count + live.astype(jnp.int32)
    recent = jnp.where(live[:, None], jnp.roll(recent, -1, axis=1).at[:, -1].set(new_token), recent)
    hit = live & _stop_hit(new_token, recent, stop_ids, stop_seqs)
    stopped = stopped | hit
    done = done | hit | (count >= budget)
    token = jnp.where(live, new_token, token)
    return step + 1, cache, token, done, stopped, recent, tokens, logps, count, gstate

  carry = (jnp.int32(1), cache, token, done, stopped, recent, tokens, logps, count, gstate)
  _, cache, _, _, stopped, _, tokens, logps, count, _ = jax.lax.while_loop(cond, body, carry)
  return full_cache.with_prefix(cache), tokens, logps, count, stopped


class Sampler:
  """Generates for a fixed batch of conversations: per turn one prefill call (new tokens into the
  cache) and one decode call (a `lax.while_loop`), compiled per chunk width and decode span.

  Args:
    model: the policy (a Transformer) or a `(graphdef, state)` pair from `nnx.split`.
    max_cache_len: cache slots per row: prompt + every turn's action and observation tokens.
    stop_token_ids: ids that end a turn (e.g. rl.tokenizer.stop_token_ids(tokenizer)).
    stop_sequences: token sequences that end a turn, e.g. the ids of "</tool_call>" (one special
      token for the tiny tokenizer and for Qwen2.5). Matched on generated tokens only.
    overflow: "error" raises CacheOverflowError when a row's tokens do not fit; "truncate" keeps
      what fits, shortens the decode budget and reports finish_reason "cache_full".
    grammar: an `rl.env.constrained.ToolCallGrammar`: every turn is decoded under it (constrained
      tool calls); None samples from the whole vocabulary.
    pad_id: the id used to pad chunks (never attended to).
    cache_dtype: KV cache dtype (default: the model's activation dtype).
    min_chunk: appended chunks are padded to `_bucket`'s ladder (this x 1, 1.5, 2, 3, 4, ...);
      larger values mean fewer compiled shapes, smaller ones less padding work per turn.
    ragged_prefill: when a few rows bring many more new tokens than the rest (a long tool output
      among short ones), those rows first append their extra tokens in a smaller batch of their
      own, so the batch-wide chunk is sized for the typical row (`_ragged_split`).
    lanes: how many contiguous blocks of rows (each with its own cache) decode concurrently, each
      in a thread of its own; 0 = `rl.lanes.auto_lanes` (one per CPU core on a CPU backend, at
      least MIN_LANE_ROWS rows a lane). What each row samples does not depend on it, up to float
      rounding (see the module docstring).
  """

  def __init__(self, model: Transformer | tuple[Any, Any], *, max_cache_len: int = 2048,
               stop_token_ids: Sequence[int] = (), stop_sequences: Sequence[Sequence[int]] = (),
               overflow: str = "error", pad_id: int = 0, cache_dtype: Any = None,
               min_chunk: int = 16, grammar: Any = None, ragged_prefill: bool = True,
               mesh: Any = None, rules: Any = None, lanes: int = 0):
    if overflow not in OVERFLOW_MODES:
      raise ValueError(f"overflow must be one of {OVERFLOW_MODES}, got {overflow!r}")
    if max_cache_len < 2:
      raise ValueError(f"max_cache_len must be >= 2, got {max_cache_len}")
    if int(lanes) < 0:
      raise ValueError(f"lanes must be >= 0 (0 = one per CPU core), got {lanes}")
    if mesh is not None and int(lanes) > 1:
      raise ValueError(f"lanes={lanes} with a mesh: on a mesh the rows are split over its devices")
    self.graphdef, self.state = nnx.split(model) if isinstance(model, nnx.Module) else model
    self.config = nnx.merge(self.graphdef, self.state).config
    self.max_cache_len = int(max_cache_len)
    self.overflow = overflow
    self.pad_id = int(pad_id)
    self.cache_dtype = cache_dtype
    self.min_chunk = int(min_chunk)
    self.ragged_prefill = bool(ragged_prefill)
    # On a mesh the weights stay sharded as they are (tensor parallel over `tensor`, FSDP's
    # shards gathered per layer by XLA) and the cache is split like the rows: nothing is ever
    # gathered onto one device.
    self.mesh, self.rules = mesh, rules
    self.lanes = int(lanes)
    self._lanes = LanePool("sampler-lane")
    self.grammar_table = None if grammar is None else jnp.asarray(grammar.table)  # [S, V] on device
    self._grammar_start = jnp.int32(0 if grammar is None else grammar.start)
    ids = [int(i) for i in stop_token_ids]
    seqs = [list(map(int, s)) for s in stop_sequences]
    if any(len(s) == 0 for s in seqs):
      raise ValueError("stop sequences must not be empty")
    ids += [s[0] for s in seqs if len(s) == 1]  # one-token sequences are plain stop ids
    seqs = [s for s in seqs if len(s) > 1]
    # Padded to fixed sizes so that changing stop conditions does not recompile: -1 never
    # matches a token id; rows of -3 never match (generated-token windows start at -2).
    ids = sorted(set(ids))
    self.stop_ids = jnp.asarray(ids + [-1] * (round_up(len(ids), 8) - len(ids)), jnp.int32)
    width = round_up(max((len(s) for s in seqs), default=1), 4)
    rows = [[-1] * (width - len(s)) + s for s in seqs]
    rows += [[-3] * width] * (round_up(len(rows), 4) - len(rows))
    self.stop_seqs = jnp.asarray(np.array(rows, np.int32).reshape(len(rows), width))

  def update_params(self, model_or_state: Any) -> None:
    """Swaps in new policy weights (a Transformer or an nnx State of the same graph)."""
    if isinstance(model_or_state, nnx.Module):
      graphdef, self.state = nnx.split(model_or_state)
      if graphdef != self.graphdef:
        raise ValueError("update_params: the new model has a different structure")
    else:
      self.state = model_or_state

  def lanes_for(self, batch_size: int) -> int:
    """The lane count of a batch of `batch_size` conversations."""
    if self.lanes:
      return min(self.lanes, batch_size)
    return max(1, min(auto_lanes(self.mesh), batch_size // MIN_LANE_ROWS))

  def new_conversations(self, batch_size: int) -> Conversations:
    bounds = lane_bounds(batch_size, self.lanes_for(batch_size))
    caches = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
      cache = KVCache.create(self.config, hi - lo, self.max_cache_len, self.cache_dtype)
      if self.mesh is not None:
        from rl import parallel
        kv = parallel.kv_cache_sharding(self.mesh, self.rules, batch_size, self.config.num_kv_heads)
        rows = parallel.rows_sharding(self.mesh, self.rules, 1, rows=batch_size)
        cache = KVCache(keys=tuple(jax.device_put(k, kv) for k in cache.keys),
                        values=tuple(jax.device_put(v, kv) for v in cache.values),
                        lengths=jax.device_put(cache.lengths, rows))
      caches.append(cache)
    return Conversations(caches=caches, bounds=bounds, lengths=np.zeros(batch_size, np.int64),
                         pending=[[] for _ in range(batch_size)],
                         history=[[] for _ in range(batch_size)])

  def _prepare(self, conv: Conversations, new_tokens: Sequence[Sequence[int] | None],
               max_new_tokens: int):
    """Host-side checks and padding: chunk, counts, active rows, budgets, cache_full rows."""
    if len(new_tokens) != conv.batch_size:
      raise ValueError(f"got {len(new_tokens)} rows of tokens for a batch of {conv.batch_size}")
    rows = []
    active = np.zeros(conv.batch_size, bool)
    budget = np.zeros(conv.batch_size, np.int32)
    full = np.zeros(conv.batch_size, bool)
    for b, toks in enumerate(new_tokens):
      if toks is None:
        rows.append([])
        continue
      append = conv.pending[b] + [int(t) for t in toks]
      if not append:
        raise ValueError(f"row {b}: nothing to condition on (empty prompt and no history)")
      room = self.max_cache_len - int(conv.lengths[b])
      if len(append) + max_new_tokens > room:
        if self.overflow == "error":
          raise CacheOverflowError(
              f"row {b}: {conv.lengths[b]} cached + {len(append)} new + {max_new_tokens} to "
              f"generate exceeds max_cache_len={self.max_cache_len}")
        if len(append) >= room:  # not even one generated token fits: keep what fits, stop
          append = append[:room]
          full[b] = True
      rows.append(append)
      if not full[b]:
        active[b] = True
        budget[b] = min(max_new_tokens, room - len(append))
    width = _bucket(max(len(r) for r in rows) if rows else 1, self.min_chunk)
    num_new = np.array([len(r) for r in rows], np.int32)
    return rows, width, num_new, active, budget, full

  def _chunk(self, rows: Sequence[Sequence[int]], width: int) -> np.ndarray:
    chunk = np.full((len(rows), width), self.pad_id, np.int32)
    for b, r in enumerate(rows):
      chunk[b, :len(r)] = r
    return chunk

  def _attend_len(self, lengths: np.ndarray, num_new: np.ndarray,
                  budget: np.ndarray | None = None) -> int:
    """Static bound on the cache slots this call reads: the end of the longest row it writes to
    (cached + new + decode budget). Rows it leaves alone (num_new = 0) write nothing and their
    outputs are dropped, so a finished long conversation does not widen every later call.
    Bucketed to limit recompiles: `_bucket`'s ladder (64, 96, 128, 192, ...) up to 512, then
    multiples of 256."""
    ends = lengths + num_new + (0 if budget is None else budget)
    return self._span(int(ends[num_new > 0].max(initial=1)))

  def _span(self, needed: int) -> int:
    return min(self.max_cache_len, _bucket(needed, 64) if needed <= 512 else round_up(needed, 256))

  def _ragged_split(self, cache: KVCache, lengths: np.ndarray, rows: list[list[int]],
                    num_new: np.ndarray, chunk: np.ndarray) -> tuple[KVCache, np.ndarray, np.ndarray]:
    """Appends the head of each unusually long row in a batch of its own and returns the cache,
    the chunk and the per-row counts left for the batch-wide call (each row's last `width` tokens
    at most). `cache`, `lengths`, `rows`: one lane's.

    The batch-wide call costs about batch x chunk width; the split is taken when it costs less
    overall: for each candidate width w (powers of two), the rows longer than w append all but
    their last w tokens first, in a call of (their count) x (their longest head), both bucketed
    coarsely (at least 8 rows, 64 tokens) to keep the number of compiled shapes small.
    """
    batch = len(rows)

    def plan(width: int) -> tuple[int, np.ndarray, int]:  # (cost, long rows, their call's rows)
      long = np.flatnonzero(num_new > width)
      k = min(_bucket(len(long), 8), batch)
      return k * _bucket(int((num_new[long] - width).max()), 64) + batch * width, long, k

    best_cost, best_width = batch * chunk.shape[1], None
    width = self.min_chunk
    while width < chunk.shape[1] and (num_new > width).any():
      cost = plan(width)[0]
      if cost < 0.75 * best_cost:
        best_cost, best_width = cost, width
      width *= 2
    if best_width is None:
      return cache, chunk, num_new
    _, long, k = plan(best_width)
    idle = np.setdiff1d(np.arange(batch), long)[:k - len(long)]  # padding entries: unchanged rows
    index = np.concatenate([long, idle]).astype(np.int32)
    heads = [rows[b][:len(rows[b]) - best_width] for b in long]
    head_chunk = np.full((k, _bucket(max(len(h) for h in heads), 64)), self.pad_id, np.int32)
    head_new = np.zeros(k, np.int32)
    for i, h in enumerate(heads):
      head_chunk[i, :len(h)] = h
      head_new[i] = len(h)
    attend = self._span(int((lengths[long] + head_new[:len(long)]).max()))
    cache = _extend_rows(self.graphdef, self.state, cache, jnp.asarray(index),
                         jnp.asarray(head_chunk), jnp.asarray(head_new), attend_len=attend)
    tail = np.full((batch, best_width), self.pad_id, np.int32)
    for b, r in enumerate(rows):
      rest = r[-best_width:] if len(r) > best_width else r
      tail[b, :len(rest)] = rest
    return cache, tail, np.minimum(num_new, best_width).astype(np.int32)

  def append(self, conv: Conversations, new_tokens: Sequence[Sequence[int] | None]) -> None:
    """Writes tokens into rows' caches without generating (e.g. a forced observation)."""
    rows, width, num_new, _, _, full = self._prepare(conv, new_tokens, 0)
    if full.any() or any(len(r) + int(conv.lengths[b]) > self.max_cache_len
                         for b, r in enumerate(rows)):
      raise CacheOverflowError("append: tokens do not fit in the cache")
    attend = self._attend_len(conv.lengths, num_new)

    def lane_append(lane: int) -> None:
      part = conv.lane_rows(lane)
      conv.caches[lane], _ = _prefill(self.graphdef, self.state, conv.caches[lane],
                                      jnp.asarray(self._chunk(rows[part], width)),
                                      jnp.asarray(num_new[part]), attend_len=attend)
      jax.block_until_ready(conv.caches[lane].lengths)

    self._lanes.map(lane_append, conv.busy_lanes(num_new))
    for b, r in enumerate(rows):
      if new_tokens[b] is not None:
        conv.history[b].extend(new_tokens[b])
        conv.pending[b] = []
    conv.lengths = conv.lengths + num_new

  def generate(self, conv: Conversations, new_tokens: Sequence[Sequence[int] | None], *,
               max_new_tokens: int, rng: Array, temperature: float = 1.0, top_p: float = 1.0,
               top_k: int = 0) -> SampleOutput:
    """Appends `new_tokens[b]` to row b's conversation and samples its next turn.

    Args:
      conv: the batch's conversations (from `new_conversations`), updated in place.
      new_tokens: per row, the prompt (first turn) or observation tokens to append; None marks an
        inactive row (finished episode or waiting), which is neither extended nor decoded.
      max_new_tokens: decode budget per row for this turn (rows may stop earlier).
      rng: a JAX PRNG key for this call (split into one key per row), or a [batch_size] array
        of keys, one per row; what a row samples depends on its own key only. Temperature 0
        decodes greedily.
    """
    if max_new_tokens < 1:
      raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
    if temperature < 0 or not 0 < top_p <= 1 or top_k < 0:
      raise ValueError(f"bad sampling parameters: temperature={temperature}, top_p={top_p}, "
                       f"top_k={top_k}")
    rows, width, num_new, active, budget, full = self._prepare(conv, new_tokens, max_new_tokens)
    # One key per row, whatever the caller passed: a row's draws then depend on its key alone,
    # not on the lane it decodes in or on the other rows of its lane.
    rng = jnp.asarray(rng)
    keys = jax.random.split(rng, conv.batch_size) if rng.ndim == 0 else rng
    if keys.shape[0] != conv.batch_size:
      raise ValueError(f"got {keys.shape[0]} sampling keys for a batch of {conv.batch_size}")
    # The same static shapes in every lane (one compile): bounds over the whole batch.
    prefill_span = self._attend_len(conv.lengths, num_new)
    decode_span = self._attend_len(conv.lengths, num_new, budget)
    settings = dict(max_new=int(max_new_tokens), greedy=temperature == 0, top_k=int(top_k),
                    use_top_p=top_p < 1.0, attend_len=decode_span)
    temperature_value, top_p_value = jnp.float32(max(temperature, 1e-6)), jnp.float32(top_p)

    def lane_turn(lane: int):
      part = conv.lane_rows(lane)
      cache, chunk, chunk_new = conv.caches[lane], self._chunk(rows[part], width), num_new[part]
      if self.ragged_prefill:
        cache, chunk, chunk_new = self._ragged_split(cache, conv.lengths[part], rows[part],
                                                     num_new[part], chunk)
      cache, last = _prefill(self.graphdef, self.state, cache, jnp.asarray(chunk),
                             jnp.asarray(chunk_new), attend_len=prefill_span)
      cache, tokens, logps, count, stopped = _decode(
          self.graphdef, self.state, cache, last, jnp.asarray(active[part]),
          jnp.asarray(budget[part]), keys[part], temperature_value, top_p_value, self.stop_ids,
          self.stop_seqs, self.grammar_table, self._grammar_start, **settings)
      conv.caches[lane] = cache
      return jax.device_get((tokens, logps, count, stopped))

    tokens = np.zeros((conv.batch_size, max_new_tokens), np.int32)
    logps = np.zeros((conv.batch_size, max_new_tokens), np.float32)
    count = np.zeros(conv.batch_size, np.int32)
    stopped = np.zeros(conv.batch_size, bool)
    busy = conv.busy_lanes(num_new)
    for lane, out in zip(busy, self._lanes.map(lane_turn, busy)):
      part = conv.lane_rows(lane)
      tokens[part], logps[part], count[part], stopped[part] = out
    out = SampleOutput([], [], [])
    for b in range(conv.batch_size):
      n = int(count[b])
      generated = tokens[b, :n].tolist()
      out.tokens.append(generated)
      out.logprobs.append(logps[b, :n].tolist())
      if new_tokens[b] is not None:
        conv.history[b].extend(list(new_tokens[b])[:max(0, len(rows[b]) - len(conv.pending[b]))])
        conv.history[b].extend(generated)
      if full[b]:
        out.finish_reasons.append("cache_full")
      elif not active[b]:
        out.finish_reasons.append("inactive")
      elif stopped[b]:
        out.finish_reasons.append("stop")
      else:
        out.finish_reasons.append("length" if budget[b] == max_new_tokens else "cache_full")
      if active[b]:
        # Everything generated except the last token went through the cache during decoding.
        conv.lengths[b] += int(num_new[b]) + max(n - 1, 0)
        conv.pending[b] = generated[-1:]
    if full.any():  # truncated rows: their (cut) tokens were written, nothing generated
      for b in np.flatnonzero(full):
        conv.lengths[b] += int(num_new[b])
        conv.pending[b] = []
    return out

  def sample(self, prompts: Sequence[Sequence[int]], *, max_new_tokens: int, rng: Array,
             **kwargs) -> SampleOutput:
    """Single-turn convenience: fresh conversations for `prompts`, one generate call."""
    conv = self.new_conversations(len(prompts))
    return self.generate(conv, prompts, max_new_tokens=max_new_tokens, rng=rng, **kwargs)
