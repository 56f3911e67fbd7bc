"""Causal self-attention by tiles, for training and scoring on CPUs: `model.attention = "tiled"`.

The [T, T] score matrix is cut into (query block, key block) tiles. Query block i visits only the
key blocks from the one where its earliest sequence starts up to the causal diagonal: with packed
rows (several sequences laid end to end, `segment_ids`), a row of three 400-token sequences in
1,280 slots costs about the tiles its sequences cover instead of the whole lower triangle. Tiles
are combined with an online softmax (the flash-attention recurrence), so no [T, T] array is
materialised, and the backward pass recomputes each tile from the saved log-sum-exp instead of
differentiating the recurrence (jax.custom_vjp). Both passes are loops with data-dependent bounds,
so the compiled program is the size of one tile whatever the length.

The range is decided per call for every row of the batch at once (the earliest start over the
rows). Sequences must be contiguous runs of one positive id (rl.algo.batching.pack_minibatch's
layout); 0 marks padding, which no query attends to. A query with no visible key gets zeros.

scripts/bench_attention.py compares it with the "einsum" attention.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp

Array = jax.Array
_NEG = float(jnp.finfo(jnp.float32).min)


def _blocks(x: Array, block: int) -> Array:
  """[B, T, ...] -> [n, B, block, ...]."""
  b, t = x.shape[:2]
  return x.reshape((b, t // block, block) + x.shape[2:]).swapaxes(0, 1)


def _first_key_block(segments: Array, block: int) -> Array:
  """[n] int: for each query block, the first key block any of its queries may see (in any row):
  the block holding the start of the earliest sequence among its queries. Rows without a real
  query in the block add nothing; a block without any starts at itself."""
  b, t = segments.shape
  index = jnp.broadcast_to(jnp.arange(t, dtype=jnp.int32), (b, t))
  changes = jnp.concatenate([jnp.ones((b, 1), bool), segments[:, 1:] != segments[:, :-1]], axis=1)
  seq_start = jax.lax.cummax(jnp.where(changes, index, 0), axis=1)  # [B, T]
  seq_start = jnp.where(segments > 0, seq_start, t)
  first = _blocks(seq_start, block).min(axis=(1, 2)) // block  # [n]
  return jnp.minimum(first, jnp.arange(first.shape[0], dtype=jnp.int32))


def _tile_scores(q_i, k_j, seg_i, seg_j, i, j, block: int, scale: float):
  """Masked scores [B, K, G, bq, bk] of tile (i, j) (f32): a query sees the earlier keys of its
  own sequence."""
  s = jnp.einsum("bkgtd,bksd->bkgts", q_i, k_j).astype(jnp.float32) * scale
  offsets = jnp.arange(block)
  causal = (i * block + offsets)[:, None] >= (j * block + offsets)[None, :]
  visible = (seg_i[:, :, None] == seg_j[:, None, :]) & (seg_j[:, None, :] > 0) & causal
  return jnp.where(visible[:, None, None], s, _NEG)


def _forward(q, k, v, segments, block):
  """(out [n, B, K, G, blk, Dh], lse [n, B, K, G, blk, 1]) with q/k/v already in tile layout.
  Query block i visits key blocks first[i]..i only (loops with dynamic bounds: no tile outside
  them is computed, and the program does not grow with the number of tiles)."""
  n = q.shape[0]
  scale = 1.0 / math.sqrt(q.shape[-1])
  seg = _blocks(segments, block)
  first = _first_key_block(segments, block)

  def query_block(i, carry):
    outs, lses = carry

    def tile(j, state):
      m, l, acc = state
      s = _tile_scores(q[i], k[j], seg[i], seg[j], i, j, block, scale)
      m_new = jnp.maximum(m, s.max(-1, keepdims=True))
      p = jnp.exp(s - m_new)
      rescale = jnp.exp(m - m_new)
      pv = jnp.einsum("bkgts,bksd->bkgtd", p.astype(v.dtype), v[j]).astype(jnp.float32)
      return m_new, l * rescale + p.sum(-1, keepdims=True), acc * rescale + pv

    m = jnp.full(q.shape[1:-1] + (1,), _NEG, jnp.float32)
    m, l, acc = jax.lax.fori_loop(first[i], i + 1, tile, (m, jnp.zeros_like(m),
                                                         jnp.zeros(q.shape[1:], jnp.float32)))
    seen = l > 0  # a query with no visible key (padding) gets zeros
    out = jnp.where(seen, acc / jnp.where(seen, l, 1.0), 0.0)
    lse = jnp.where(seen, m + jnp.log(jnp.where(seen, l, 1.0)), 0.0)
    return outs.at[i].set(out), lses.at[i].set(lse)

  outs = jnp.zeros(q.shape, jnp.float32)
  lses = jnp.zeros(q.shape[:-1] + (1,), jnp.float32)
  return jax.lax.fori_loop(0, n, query_block, (outs, lses))


@functools.partial(jax.custom_vjp, nondiff_argnums=(4,))
def _attention(q, k, v, segments, block):
  return _forward(q, k, v, segments, block)[0].astype(q.dtype)


def _attention_fwd(q, k, v, segments, block):
  out, lse = _forward(q, k, v, segments, block)
  return out.astype(q.dtype), (q, k, v, segments, out, lse)


def _attention_bwd(block, residuals, d_out):
  """Recomputes each visited tile from the saved log-sum-exp: key block j (outer loop) gathers
  its dk, dv over the query blocks that see it; dq is accumulated in place."""
  q, k, v, segments, out, lse = residuals
  n = q.shape[0]
  scale = 1.0 / math.sqrt(q.shape[-1])
  seg = _blocks(segments, block)
  first = _first_key_block(segments, block)
  # Query blocks that see key block j: i >= j with first[i] <= j (first is non-decreasing).
  last = jnp.sum(first[None, :] <= jnp.arange(n)[:, None], axis=1) - 1  # [n]
  d_out = d_out.astype(jnp.float32)
  delta = jnp.sum(d_out * out, axis=-1, keepdims=True)  # [n, B, K, G, blk, 1]
  q32, k32, v32 = (x.astype(jnp.float32) for x in (q, k, v))

  def key_block(j, dq):
    def tile(i, state):
      dq, dk_j, dv_j = state
      s = _tile_scores(q[i], k[j], seg[i], seg[j], i, j, block, scale)
      p = jnp.exp(s - lse[i])  # masked entries: exp(min - lse) = 0
      dv_j = dv_j + jnp.einsum("bkgts,bkgtd->bksd", p, d_out[i])
      dp = jnp.einsum("bkgtd,bksd->bkgts", d_out[i], v32[j])
      ds = p * (dp - delta[i]) * scale
      dq = dq.at[i].add(jnp.einsum("bkgts,bksd->bkgtd", ds, k32[j]))
      dk_j = dk_j + jnp.einsum("bkgts,bkgtd->bksd", ds, q32[i])
      return dq, dk_j, dv_j

    zeros = jnp.zeros(k.shape[1:], jnp.float32)
    dq, dk_j, dv_j = jax.lax.fori_loop(j, jnp.maximum(last[j], j) + 1, tile, (dq, zeros, zeros))
    return dq, dk_j, dv_j

  def body(j, carry):
    dq, dk, dv = carry
    dq, dk_j, dv_j = key_block(j, dq)
    return dq, dk.at[j].set(dk_j), dv.at[j].set(dv_j)

  dq, dk, dv = jax.lax.fori_loop(0, n, body, (jnp.zeros(q.shape, jnp.float32),
                                              jnp.zeros(k.shape, jnp.float32),
                                              jnp.zeros(v.shape, jnp.float32)))
  return dq.astype(q.dtype), dk.astype(k.dtype), dv.astype(v.dtype), None


_attention.defvjp(_attention_fwd, _attention_bwd)


def tiled_causal_attention(q: Array, k: Array, v: Array, segments: Array | None,
                           block: int = 128) -> Array:
  """Grouped-query causal attention. q [B, T, H, Dh], k/v [B, T, K, Dh]; `segments` [B, T]
  (int: sequence ids of packed rows, or 1 = token / 0 = padding; None = all tokens).
  Returns [B, T, H, Dh]."""
  b, t, h, dh = q.shape
  kv = k.shape[2]
  if segments is None:
    segments = jnp.ones((b, t), jnp.int32)
  segments = segments.astype(jnp.int32)
  block = min(block, t)
  pad = -t % block
  if pad:  # padded positions are padding keys (id 0) and their outputs are cut off below
    q, k, v = (jnp.pad(x, ((0, 0), (0, pad), (0, 0), (0, 0))) for x in (q, k, v))
    segments = jnp.pad(segments, ((0, 0), (0, pad)))
  tq = t + pad
  # Tile layout: [n, B, K, G, block, Dh] for queries, [n, B, K, block, Dh] for keys and values.
  q_t = _blocks(q.reshape(b, tq, kv, h // kv, dh), block).transpose(0, 1, 3, 4, 2, 5)
  k_t = _blocks(k, block).transpose(0, 1, 3, 2, 4)
  v_t = _blocks(v, block).transpose(0, 1, 3, 2, 4)
  out = _attention(q_t, k_t, v_t, segments, block)  # [n, B, K, G, block, Dh]
  out = out.transpose(1, 0, 4, 2, 3, 5).reshape(b, tq, h, dh)
  return out[:, :t]
