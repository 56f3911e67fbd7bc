"""Decoder-only transformer (Qwen2 / Llama families) in Flax NNX, with value heads and a KV cache.

Modules hold the weights; the math callers jit lives in pure functions of `(graphdef, state, ...)`
(`forward`, `token_logprobs`, ...), so the update step and the sampler split the model once.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, Sequence

import flax.struct
import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from rl.models.tiled_attention import tiled_causal_attention

Array = jax.Array

_DTYPES = {"float32": jnp.float32, "bfloat16": jnp.bfloat16, "float16": jnp.float16}
VALUE_HEADS = ("none", "shared", "separate")
# The logit of a token a constrained sampler rules out (rl.env.constrained): exp() of it is exactly 0,
# and unlike -inf it keeps 0 * log p finite in entropies.
MASKED_LOGIT = -1e30


def as_dtype(dtype: Any) -> Any:
  """Maps "float32"/"bfloat16"/"float16" or a numpy/jax dtype to a jnp dtype; errors otherwise."""
  if isinstance(dtype, str):
    if dtype not in _DTYPES:
      raise ValueError(f"unknown dtype {dtype!r}; known: {sorted(_DTYPES)}")
    return _DTYPES[dtype]
  name = jnp.dtype(dtype).name
  if name not in _DTYPES:
    raise ValueError(f"unsupported dtype {name!r}; known: {sorted(_DTYPES)}")
  return _DTYPES[name]


ATTENTION_IMPLS = ("einsum", "tiled", "xla", "cudnn")


@dataclasses.dataclass(frozen=True)
class ModelConfig:
  """Shape and numerics of one transformer. Field names follow Hugging Face's config.json."""

  vocab_size: int = 4096
  hidden_size: int = 256
  num_layers: int = 4
  num_heads: int = 4
  num_kv_heads: int = 2
  head_dim: int = 0  # 0 = hidden_size // num_heads
  intermediate_size: int = 704
  rope_theta: float = 1_000_000.0
  rope_scaling: tuple[tuple[str, Any], ...] | None = None  # llama3 scaling as sorted items
  rms_norm_eps: float = 1e-6
  qkv_bias: bool = True  # Qwen2: True; Llama: False (attention_bias)
  o_bias: bool = False
  mlp_bias: bool = False
  tie_word_embeddings: bool = True
  max_position_embeddings: int = 32768
  architecture: str = "qwen2"  # "qwen2" | "llama": only changes the exported config.json
  bos_token_id: int | None = None
  eos_token_id: int | None = 2
  pad_token_id: int | None = 0
  dtype: str = "float32"  # activations
  param_dtype: str = "float32"
  remat: bool = False  # rematerialise each layer in the backward pass
  # Cache-free (training/scoring) attention: "einsum" (scores materialised; any padding) |
  # "tiled" (rl.models.tiled_attention: tiles with an online softmax, skipping tiles no query
  # can see, e.g. across the sequences of a packed row; faster on CPUs) | "xla" or "cudnn" (jax.nn.dot_product_attention, causal; "cudnn" is its fused flash kernel on
  # NVIDIA GPUs). The last two need right-padded rows, as every batch the trainer builds is: a
  # row's padding then only changes outputs at padding positions, which the losses mask.
  attention: str = "einsum"
  value_head: str = "none"  # "none" | "shared": scalar head on this trunk (see Critic for "separate")

  def __post_init__(self):
    if self.hidden_size % self.num_heads and not self.head_dim:
      raise ValueError(f"hidden_size {self.hidden_size} not divisible by num_heads {self.num_heads}")
    if self.num_heads % self.num_kv_heads:
      raise ValueError(f"num_heads {self.num_heads} not a multiple of num_kv_heads {self.num_kv_heads}")
    if self.value_head not in VALUE_HEADS:
      raise ValueError(f"value_head must be one of {VALUE_HEADS}, got {self.value_head!r}")
    if self.attention not in ATTENTION_IMPLS:
      raise ValueError(f"attention must be one of {ATTENTION_IMPLS}, got {self.attention!r}")
    if self.attention == "cudnn" and self.dtype not in ("bfloat16", "float16"):
      raise ValueError(f"attention='cudnn' needs dtype bfloat16 or float16 (cuDNN's flash kernel "
                       f"has no float32), got {self.dtype!r}")
    if self.architecture not in ("qwen2", "llama"):
      raise ValueError(f"architecture must be 'qwen2' or 'llama', got {self.architecture!r}")
    as_dtype(self.dtype)
    as_dtype(self.param_dtype)

  @property
  def dim_per_head(self) -> int:
    return self.head_dim or self.hidden_size // self.num_heads

  def replace(self, **kwargs) -> "ModelConfig":
    return dataclasses.replace(self, **kwargs)

  def num_params(self) -> int:
    d, f, h, kv, dh = (self.hidden_size, self.intermediate_size, self.num_heads,
                       self.num_kv_heads, self.dim_per_head)
    attn = d * h * dh * 2 + d * kv * dh * 2 + (h + 2 * kv) * dh * self.qkv_bias
    per_layer = attn + 3 * d * f + 2 * d
    embed = self.vocab_size * d * (1 if self.tie_word_embeddings else 2)
    return self.num_layers * per_layer + embed + d

  def forward_flops_per_token(self, context: float, *, unembed: bool = True) -> float:
    """Matmul FLOPs (2 per multiply-add) of one token's forward pass: the layers' projections,
    attention scores and mix over `context` cached positions, and with `unembed` the product
    with the vocabulary. Norms, softmax and elementwise work are not counted. For a causal
    sequence of length T the average token attends over (T + 1) / 2 positions; PaLM's model
    FLOPs (appendix B) count all T. A training step is 3x this (two backward products per
    forward product)."""
    d, f, h, kv, dh = (self.hidden_size, self.intermediate_size, self.num_heads,
                       self.num_kv_heads, self.dim_per_head)
    projections = d * h * dh * 2 + d * kv * dh * 2 + 3 * d * f
    attention = 2 * h * dh * context
    return 2.0 * (self.num_layers * (projections + attention) + unembed * d * self.vocab_size)


PRESETS = {
    # The default experiment's model: ~4M parameters with the 4096-token tiny tokenizer.
    "tiny": dict(hidden_size=256, num_layers=4, num_heads=4, num_kv_heads=2, intermediate_size=704),
    # Unit tests: compiles in a second or two.
    "test": dict(hidden_size=64, num_layers=2, num_heads=4, num_kv_heads=2, intermediate_size=128),
}


def tiny_config(name: str = "tiny", **overrides) -> ModelConfig:
  """A built-in preset sized for the committed tiny tokenizer ("tiny" or "test")."""
  if name not in PRESETS:
    raise ValueError(f"unknown tiny model preset {name!r}; known: {sorted(PRESETS)}")
  return ModelConfig(**{**PRESETS[name], **overrides})


# --- modules ----------------------------------------------------------------------------------


class ParamInit:
  """Deterministic weight initialiser: every call draws a fresh stream from (seed, counter).

  Values come from a counter-based integer hash (murmur3 finaliser) instead of jax.random:
  XLA on CPU compiles one threefry kernel per weight slowly (tens of seconds for a small model),
  while this hash compiles in milliseconds. Uniform with variance 1/fan_in, like LeCun normal.
  """

  def __init__(self, seed: int = 0):
    self.seed = int(seed) & 0xFFFFFFFF
    self.counter = 0

  def __call__(self, shape: Sequence[int], fan_in: float, dtype) -> Array:
    self.counter += 1
    n = int(np.prod(shape))
    h = jnp.arange(n, dtype=jnp.uint32) * jnp.uint32(0x9E3779B1)
    h = h + jnp.uint32((self.seed * 0x85EBCA6B + self.counter * 0xC2B2AE35) & 0xFFFFFFFF)
    for shift, mult in ((16, 0x85EBCA6B), (13, 0xC2B2AE35)):
      h = (h ^ (h >> shift)) * jnp.uint32(mult)
    h = h ^ (h >> 16)
    uniform = (h >> 8).astype(jnp.float32) * (1.0 / (1 << 24))  # [0, 1)
    values = (uniform * 2.0 - 1.0) * math.sqrt(3.0 / fan_in)
    return values.reshape(shape).astype(dtype)


def _param(init: ParamInit, shape: Sequence[int], axes: tuple[str | None, ...], dtype, scale=None):
  """A random weight (variance 1/fan_in) tagged with logical axis names for sharding."""
  return nnx.Param(init(shape, shape[0] if scale is None else scale, dtype), logical_axes=axes)


def _zeros(shape, axes, dtype):
  return nnx.Param(jnp.zeros(shape, dtype), logical_axes=axes)


def _ones(shape, axes, dtype):
  return nnx.Param(jnp.ones(shape, dtype), logical_axes=axes)


class RMSNorm(nnx.Module):

  def __init__(self, dim: int, eps: float, param_dtype):
    self.weight = _ones((dim,), ("norm",), param_dtype)
    self.eps = eps

  def __call__(self, x: Array) -> Array:
    x32 = x.astype(jnp.float32)
    normed = x32 * jax.lax.rsqrt(jnp.mean(x32 * x32, axis=-1, keepdims=True) + self.eps)
    # Matches HF: normalise in float32, cast back, then scale.
    return self.weight.get_value().astype(x.dtype) * normed.astype(x.dtype)


def rope_frequencies(config: ModelConfig) -> np.ndarray:
  """Inverse frequencies [head_dim/2], with Llama-3 style scaling when configured."""
  dh = config.dim_per_head
  inv_freq = 1.0 / (config.rope_theta ** (np.arange(0, dh, 2, dtype=np.float64) / dh))
  if config.rope_scaling:
    scaling = dict(config.rope_scaling)
    kind = scaling.get("rope_type", scaling.get("type"))
    if kind in ("default", None):
      return inv_freq.astype(np.float32)
    if kind != "llama3":
      raise ValueError(f"unsupported rope_scaling type {kind!r} (supported: default, llama3)")
    factor = scaling["factor"]
    low, high = scaling.get("low_freq_factor", 1.0), scaling.get("high_freq_factor", 4.0)
    old_len = scaling["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old_len / low, old_len / high
    wavelen = 2 * math.pi / inv_freq
    scaled = np.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
    smooth = (old_len / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = (wavelen >= high_wavelen) & (wavelen <= low_wavelen)
    inv_freq = np.where(medium, smoothed, scaled)
  return inv_freq.astype(np.float32)


def apply_rope(x: Array, positions: Array, inv_freq: np.ndarray) -> Array:
  """Rotate-half RoPE (the HF Qwen2/Llama layout). x [B, T, H, Dh], positions [B, T]."""
  freqs = positions.astype(jnp.float32)[..., None] * jnp.asarray(inv_freq)  # [B, T, Dh/2]
  cos = jnp.cos(freqs)[:, :, None, :]
  sin = jnp.sin(freqs)[:, :, None, :]
  x1, x2 = jnp.split(x.astype(jnp.float32), 2, axis=-1)
  out = jnp.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
  return out.astype(x.dtype)


@flax.struct.dataclass
class KVCache:
  """Per-row conversation cache: slot j of row b holds the token at position j of that row.

  keys: one [B, kv_heads, head_dim, S] array per layer, values one [B, kv_heads, S, head_dim];
  lengths [B]: tokens stored per row. The slots are the innermost axis of the keys and the rows of
  the values, so both attention products of a decode step are contiguous matrix products per
  (row, kv head); with [B, S, kv_heads, head_dim] they were strided and decode attention ran
  3-4x slower on the CPU (scripts/bench_decode.py).
  """

  keys: tuple[Array, ...]
  values: tuple[Array, ...]
  lengths: Array

  @property
  def capacity(self) -> int:
    return self.keys[0].shape[-1]

  def prefix(self, span: int) -> "KVCache":
    """The first `span` slots of every row (a copy). A loop that reads the cache many times
    (decoding) runs on this, so each step reads `span` slots without slicing the cache again."""
    if span >= self.capacity:
      return self
    return KVCache(keys=tuple(k[..., :span] for k in self.keys),
                   values=tuple(v[:, :, :span] for v in self.values), lengths=self.lengths)

  def with_prefix(self, prefix: "KVCache") -> "KVCache":
    """This cache with its first slots replaced by `prefix` (from `prefix`, then extended)."""
    if prefix.capacity == self.capacity:
      return prefix
    put = lambda full, part: jax.lax.dynamic_update_slice(full, part, (0,) * full.ndim)
    return KVCache(keys=tuple(map(put, self.keys, prefix.keys)),
                   values=tuple(map(put, self.values, prefix.values)), lengths=prefix.lengths)

  @classmethod
  def create(cls, config: ModelConfig, batch_size: int, capacity: int, dtype=None) -> "KVCache":
    dtype = as_dtype(dtype or config.dtype)
    kv, dh, layers = config.num_kv_heads, config.dim_per_head, config.num_layers
    return cls(keys=tuple(jnp.zeros((batch_size, kv, dh, capacity), dtype) for _ in range(layers)),
               values=tuple(jnp.zeros((batch_size, kv, capacity, dh), dtype) for _ in range(layers)),
               lengths=jnp.zeros((batch_size,), jnp.int32))


# Query block of the cache-free "einsum" attention: the queries of block i attend only to the
# keys of blocks <= i, which the causal mask would hide anyway, so the scores cost (n + 1) / 2n
# of the [T, T] matrix (n = T / block). Same outputs at every query that sees a key; a query
# that sees none (a padding position) averages over fewer keys. 0 = one block.
# scripts/bench_attention.py measures it against 0.
ATTENTION_BLOCK = 256
# Tile edge of the "tiled" attention (rl.models.tiled_attention).
TILE = 128


def _attend_causal(q: Array, keys: Array, values: Array, mask: Array, num_kv_heads: int,
                   block: int) -> Array:
  """`_attend` for causal self-attention (keys = the queries' positions), by query blocks."""
  t = q.shape[1]
  if block <= 0 or t <= block:
    return _attend(q, keys, values, mask, num_kv_heads)
  out = [_attend(q[:, s:s + block], keys[:, :s + block], values[:, :s + block],
                 mask[:, s:s + block, :s + block], num_kv_heads) for s in range(0, t, block)]
  return jnp.concatenate(out, axis=1)


def _attend(q: Array, keys: Array, values: Array, mask: Array, num_kv_heads: int) -> Array:
  """Grouped-query attention. q [B, T, H, Dh], keys/values [B, S, K, Dh], mask [B|1, T, S]."""
  b, t, h, dh = q.shape
  groups = h // num_kv_heads
  q = q.reshape(b, t, num_kv_heads, groups, dh)
  scores = jnp.einsum("btkgd,bskd->bkgts", q, keys).astype(jnp.float32) / math.sqrt(dh)
  scores = jnp.where(mask[:, None, None], scores, jnp.finfo(jnp.float32).min)
  probs = jax.nn.softmax(scores, axis=-1).astype(q.dtype)
  return jnp.einsum("bkgts,bskd->btkgd", probs, values).reshape(b, t, h, dh)


def _fuse_projections() -> bool:
  """Whether q/k/v (and gate/up) are computed as one product over concatenated weights.

  On CPUs the decode step's matrices are small (a few dozen rows) and fewer, wider products are
  faster; in a decode loop the concatenation of the loop-invariant weights is hoisted out of it.
  On accelerators the separate products are as fast and keep each weight's own tensor-parallel
  sharding (a concatenation of differently sharded weights would be gathered).
  """
  return jax.default_backend() == "cpu"


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def split_last(x: Array, sizes: tuple[int, ...]) -> tuple[Array, ...]:
  """`x` cut into consecutive pieces of `sizes` along the last axis, whose gradient is one
  concatenation of the pieces' cotangents. Differentiating plain slices gives one zero-padded
  full-width array per piece, added together: on the CPU those pads and adds ran at about
  0.6 GB/s, 0.28 thread-seconds of a bench_update step against 0.16 for the concatenation."""
  ends = np.cumsum(sizes)
  return tuple(x[..., end - size:end] for size, end in zip(sizes, ends))


def _split_last_fwd(x, sizes):
  return split_last(x, sizes), None


def _split_last_bwd(sizes, _, cotangents):
  return (jnp.concatenate(cotangents, axis=-1),)


split_last.defvjp(_split_last_fwd, _split_last_bwd)


@jax.custom_vjp
def unembed(hidden: Array, unembedding: Array) -> Array:
  """Logits [..., V] = hidden [..., D] @ unembedding [D, V], whose weight gradient is made as a
  [D, V] product (hidden^T @ logit gradient) behind an optimisation barrier. Left to itself, XLA
  folds the tied embedding's transpose into that product and computes it as (logit
  gradient)^T @ hidden, for which its CPU backend first transposes the [tokens, V] logit
  gradient, the largest array of the step (1.05x faster updates, scripts/bench_update.py and
  the default's PPO epochs)."""
  return jnp.einsum("...d,dv->...v", hidden, unembedding)


def _unembed_fwd(hidden, unembedding):
  return unembed(hidden, unembedding), (hidden, unembedding)


def _unembed_bwd(residuals, d_logits):
  hidden, unembedding = residuals
  d_hidden = jnp.einsum("...v,dv->...d", d_logits, unembedding)
  rows = d_logits.reshape(-1, d_logits.shape[-1])
  d_unembedding = jax.lax.optimization_barrier(hidden.reshape(-1, hidden.shape[-1]).T @ rows)
  return d_hidden, d_unembedding.astype(unembedding.dtype)


unembed.defvjp(_unembed_fwd, _unembed_bwd)


class Attention(nnx.Module):

  def __init__(self, config: ModelConfig, init: ParamInit):
    d, h, kv, dh = config.hidden_size, config.num_heads, config.num_kv_heads, config.dim_per_head
    pd = as_dtype(config.param_dtype)
    self.config = config
    self.q_proj = _param(init, (d, h, dh), ("embed", "heads", "head_dim"), pd)
    self.k_proj = _param(init, (d, kv, dh), ("embed", "kv_heads", "head_dim"), pd)
    self.v_proj = _param(init, (d, kv, dh), ("embed", "kv_heads", "head_dim"), pd)
    self.o_proj = _param(init, (h, dh, d), ("heads", "head_dim", "embed"), pd, scale=h * dh)
    if config.qkv_bias:
      self.q_bias = _zeros((h, dh), ("heads", "head_dim"), pd)
      self.k_bias = _zeros((kv, dh), ("kv_heads", "head_dim"), pd)
      self.v_bias = _zeros((kv, dh), ("kv_heads", "head_dim"), pd)
    if config.o_bias:
      self.o_bias = _zeros((d,), ("norm",), pd)

  def __call__(self, x: Array, positions: Array, key_valid: Array | None,
               cache_kv: tuple[Array, Array] | None, write_slots: Array | None,
               attend_len: int | None = None):
    """x [B, T, D]. Without a cache: causal self-attention, key_valid [B, T] masks padding.

    With a cache (KVCache's keys [B, K, Dh, S] and values [B, K, S, Dh]): this chunk's keys go to
    `write_slots` [B, T] (index S = dropped) and queries attend to slots <= their position.
    """
    cfg = self.config
    dt = as_dtype(cfg.dtype)
    x = x.astype(dt)
    b, t, d = x.shape
    h, kv, dh = cfg.num_heads, cfg.num_kv_heads, cfg.dim_per_head
    if _fuse_projections():
      # One [D, (H + 2K) * Dh] product instead of three (see _fuse_projections).
      w = jnp.concatenate([self.q_proj.get_value().reshape(d, h * dh),
                           self.k_proj.get_value().reshape(d, kv * dh),
                           self.v_proj.get_value().reshape(d, kv * dh)], axis=1).astype(dt)
      qkv = x @ w
      if cfg.qkv_bias:
        qkv = qkv + jnp.concatenate([self.q_bias.get_value().reshape(-1), self.k_bias.get_value().reshape(-1),
                                     self.v_bias.get_value().reshape(-1)]).astype(dt)
      q, k, v = split_last(qkv, (h * dh, kv * dh, kv * dh))
      q, k, v = q.reshape(b, t, h, dh), k.reshape(b, t, kv, dh), v.reshape(b, t, kv, dh)
    else:
      q = jnp.einsum("btd,dhk->bthk", x, self.q_proj.get_value().astype(dt))
      k = jnp.einsum("btd,dhk->bthk", x, self.k_proj.get_value().astype(dt))
      v = jnp.einsum("btd,dhk->bthk", x, self.v_proj.get_value().astype(dt))
      if cfg.qkv_bias:
        q = q + self.q_bias.get_value().astype(dt)
        k = k + self.k_bias.get_value().astype(dt)
        v = v + self.v_bias.get_value().astype(dt)
    inv_freq = rope_frequencies(cfg)  # a trace-time constant, not a parameter
    q = apply_rope(q, positions, inv_freq)
    k = apply_rope(k, positions, inv_freq)
    # Integer key_valid = segment ids of packed rows (hidden_states(segment_ids=...)).
    packed = key_valid is not None and jnp.issubdtype(key_valid.dtype, jnp.integer)
    if cache_kv is None and cfg.attention == "tiled":
      segments = None if key_valid is None else key_valid.astype(jnp.int32)
      return self._project_out(tiled_causal_attention(q, k, v, segments, TILE), dt), None
    if cache_kv is None and cfg.attention != "einsum" and not packed:
      out = jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation=cfg.attention)
      return self._project_out(out, dt), None
    if cache_kv is None:
      t = x.shape[1]
      mask = jnp.tril(jnp.ones((t, t), bool))[None]  # [1, Tq, Tk]
      if packed:  # a token sees the earlier tokens of its own sequence only
        mask = mask & (key_valid[:, :, None] == key_valid[:, None, :]) & (key_valid > 0)[:, None, :]
      elif key_valid is not None:
        mask = mask & key_valid[:, None, :].astype(bool)
      if cfg.attention != "einsum":
        if cfg.attention == "cudnn":
          raise ValueError("packed rows (segment_ids) need model.attention 'einsum' or 'xla'")
        out = jax.nn.dot_product_attention(q, k, v, mask=mask[:, None], implementation=cfg.attention)
        return self._project_out(out, dt), None
      return self._project_out(_attend_causal(q, k, v, mask, cfg.num_kv_heads, ATTENTION_BLOCK), dt), None
    cache_k, cache_v = cache_kv  # [B, K, Dh, S] and [B, K, S, Dh] (KVCache)
    rows = jnp.arange(x.shape[0])[:, None]
    # Both scatters take a [B, T, K, Dh] update: the advanced indices (rows, slots) come first.
    cache_k = cache_k.at[rows, :, :, write_slots].set(k.astype(cache_k.dtype), mode="drop")
    cache_v = cache_v.at[rows, :, write_slots].set(v.astype(cache_v.dtype), mode="drop")
    new_cache = (cache_k, cache_v)
    # Only the first `attend_len` slots can hold tokens of this call: reading the whole
    # fixed-capacity cache would make every decode step cost O(capacity).
    capacity = cache_k.shape[-1]
    span = capacity if attend_len is None else min(attend_len, capacity)
    keys, values = cache_k[..., :span].astype(dt), cache_v[:, :, :span].astype(dt)
    slots = jnp.arange(span)
    mask = slots[None, None, :] <= positions[:, :, None]  # [B, Tq, S]
    if key_valid is not None:
      mask = mask & key_valid[:, None, :].astype(bool)
    b, t, h, dh = q.shape
    # Queries (small) are laid out [B, K, G, T, Dh] like the cache, so the products' batch axes
    # lead in every operand and XLA moves no cache-sized data.
    q = q.reshape(b, t, cfg.num_kv_heads, h // cfg.num_kv_heads, dh).transpose(0, 2, 3, 1, 4)
    scores = jnp.einsum("bkgtd,bkds->bkgts", q, keys).astype(jnp.float32) / math.sqrt(dh)
    scores = jnp.where(mask[:, None, None], scores, jnp.finfo(jnp.float32).min)
    probs = jax.nn.softmax(scores, axis=-1).astype(dt)
    out = jnp.einsum("bkgts,bksd->bkgtd", probs, values)
    return self._project_out(out.transpose(0, 3, 1, 2, 4).reshape(b, t, h, dh), dt), new_cache

  def _project_out(self, out: Array, dt) -> Array:
    out = jnp.einsum("bthk,hkd->btd", out, self.o_proj.get_value().astype(dt))
    if self.config.o_bias:
      out = out + self.o_bias.get_value().astype(dt)
    return out


class MLP(nnx.Module):

  def __init__(self, config: ModelConfig, init: ParamInit):
    d, f = config.hidden_size, config.intermediate_size
    pd = as_dtype(config.param_dtype)
    self.dtype = as_dtype(config.dtype)
    self.gate_proj = _param(init, (d, f), ("embed", "mlp"), pd)
    self.up_proj = _param(init, (d, f), ("embed", "mlp"), pd)
    self.down_proj = _param(init, (f, d), ("mlp", "embed"), pd)

  def __call__(self, x: Array) -> Array:
    dt = self.dtype
    if _fuse_projections():  # one [D, 2F] product for gate and up
      f = self.gate_proj.get_value().shape[1]
      gate_up = x @ jnp.concatenate([self.gate_proj.get_value(), self.up_proj.get_value()], axis=1).astype(dt)
      gate, up = split_last(gate_up, (f, f))
    else:
      gate = x @ self.gate_proj.get_value().astype(dt)
      up = x @ self.up_proj.get_value().astype(dt)
    return (jax.nn.silu(gate) * up) @ self.down_proj.get_value().astype(dt)


class Block(nnx.Module):

  def __init__(self, config: ModelConfig, init: ParamInit):
    pd = as_dtype(config.param_dtype)
    self.input_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps, pd)
    self.self_attn = Attention(config, init)
    self.post_attention_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps, pd)
    self.mlp = MLP(config, init)

  def __call__(self, x, positions, key_valid, cache_kv, write_slots, attend_len=None):
    attn, new_cache = self.self_attn(self.input_layernorm(x), positions, key_valid, cache_kv,
                                     write_slots, attend_len)
    x = x + attn
    x = x + self.mlp(self.post_attention_layernorm(x))
    return x, new_cache


class Transformer(nnx.Module):
  """The policy (and, with value_head="shared", its value head). `model(ids)` -> logits [B, T, V]."""

  def __init__(self, config: ModelConfig, *, seed: int = 0, lm_head: bool = True):
    init = ParamInit(seed)
    pd = as_dtype(config.param_dtype)
    self.config = config
    # Std 0.02 embeddings (as HF initialises them), not 1: the tied unembedding reuses them.
    self.embed_tokens = _param(init, (config.vocab_size, config.hidden_size), ("vocab", "embed"),
                               pd, scale=2500.0)
    self.layers = nnx.List([Block(config, init) for _ in range(config.num_layers)])
    self.norm = RMSNorm(config.hidden_size, config.rms_norm_eps, pd)
    self.has_lm_head = lm_head
    if lm_head and not config.tie_word_embeddings:
      self.lm_head = _param(init, (config.hidden_size, config.vocab_size), ("embed", "vocab"), pd)
    if config.value_head != "none":
      # Zero init: the critic starts at V = 0 and does not disturb a pretrained trunk.
      self.value_head = _zeros((config.hidden_size,), ("embed",), pd)
      self.value_bias = _zeros((), (), pd)

  # -- pieces ------------------------------------------------------------------------------------

  def hidden_states(self, input_ids: Array, *, positions: Array | None = None,
                    attention_mask: Array | None = None, cache: KVCache | None = None,
                    num_new: Array | None = None, attend_len: int | None = None,
                    segment_ids: Array | None = None) -> tuple[Array, KVCache | None]:
    """Final-norm hidden states [B, T, D] (and the updated cache).

    Without a cache: `attention_mask` [B, T] (1 = token) masks padding keys; positions default to
    cumsum(mask) - 1, so left or right padding both work. Packed rows instead give `segment_ids`
    [B, T] (1, 2, ... for the sequences laid end to end in a row, 0 = padding): a token attends
    only to earlier tokens of its own sequence, and positions restart at each sequence, so every
    sequence gets the hidden states it would get alone (rl.algo.batching.pack_minibatch).
    With a cache: row b appends its first `num_new[b]` tokens (default all T) at slots
    cache.lengths[b]...; positions are those slots. The rest of the chunk is padding and is dropped.
    `attend_len` (static) bounds the slots read: every row must end at or below it.
    """
    input_ids = jnp.asarray(input_ids)
    if input_ids.ndim != 2:
      raise ValueError(f"input_ids must be [B, T], got shape {input_ids.shape}")
    b, t = input_ids.shape
    cfg = self.config
    write_slots = None
    key_valid = None
    if cache is None and segment_ids is not None:
      if attention_mask is not None:
        raise ValueError("pass either attention_mask or segment_ids, not both")
      key_valid = jnp.asarray(segment_ids).astype(jnp.int32)
      if positions is None:
        index = jnp.broadcast_to(jnp.arange(t, dtype=jnp.int32), (b, t))
        starts = jnp.concatenate([jnp.ones((b, 1), bool), key_valid[:, 1:] != key_valid[:, :-1]], 1)
        positions = index - jax.lax.cummax(jnp.where(starts, index, 0), axis=1)
    elif cache is None:
      if attention_mask is not None:
        key_valid = jnp.asarray(attention_mask).astype(bool)
        if positions is None:
          positions = jnp.maximum(jnp.cumsum(key_valid.astype(jnp.int32), axis=1) - 1, 0)
      if positions is None:
        positions = jnp.broadcast_to(jnp.arange(t, dtype=jnp.int32), (b, t))
    else:
      if num_new is None:
        num_new = jnp.full((b,), t, jnp.int32)
      offsets = jnp.arange(t, dtype=jnp.int32)[None, :]
      positions = cache.lengths[:, None] + offsets
      is_new = offsets < num_new[:, None]
      write_slots = jnp.where(is_new, positions, cache.capacity)  # capacity = out of range, dropped
    x = jnp.take(self.embed_tokens.get_value(), input_ids, axis=0).astype(as_dtype(cfg.dtype))
    new_keys, new_values = [], []
    for i, layer in enumerate(self.layers):
      cache_kv = None if cache is None else (cache.keys[i], cache.values[i])
      if cfg.remat and cache is None:
        graphdef, state = nnx.split(layer)

        def run(state, x, positions, key_valid, graphdef=graphdef):
          return nnx.merge(graphdef, state)(x, positions, key_valid, None, None)[0]

        x = jax.checkpoint(run)(state, x, positions, key_valid)
      else:
        x, new_kv = layer(x, positions, key_valid, cache_kv, write_slots, attend_len)
        if new_kv is not None:
          new_keys.append(new_kv[0])
          new_values.append(new_kv[1])
    x = self.norm(x)
    if cache is not None:
      cache = KVCache(keys=tuple(new_keys), values=tuple(new_values),
                      lengths=cache.lengths + num_new.astype(jnp.int32))
    return x, cache

  def unembedding(self) -> Array:
    """[D, V] output projection (the transposed embedding when tied)."""
    if not self.has_lm_head:
      raise ValueError("this model was built without an lm_head (a critic)")
    if self.config.tie_word_embeddings:
      return self.embed_tokens.get_value().T
    return self.lm_head.get_value()

  def logits_from_hidden(self, hidden: Array) -> Array:
    w = self.unembedding().astype(hidden.dtype)
    return jnp.einsum("...d,dv->...v", hidden, w).astype(jnp.float32)

  def values_from_hidden(self, hidden: Array) -> Array:
    if self.config.value_head == "none":
      raise ValueError("model has no value head (config.value_head='none')")
    v = jnp.einsum("...d,d->...", hidden.astype(jnp.float32),
                   self.value_head.get_value().astype(jnp.float32))
    return v + self.value_bias.get_value().astype(jnp.float32)

  def __call__(self, input_ids: Array, *, positions: Array | None = None,
               attention_mask: Array | None = None) -> Array:
    hidden, _ = self.hidden_states(input_ids, positions=positions, attention_mask=attention_mask)
    return self.logits_from_hidden(hidden)


def make_critic(policy_config: ModelConfig, *, seed: int = 0) -> Transformer:
  """A separate critic: a trunk without lm_head plus a fresh scalar head (copy trunk weights in
  with `copy_trunk`)."""
  return Transformer(policy_config.replace(value_head="shared"), seed=seed, lm_head=False)


def copy_trunk(source: Transformer, target: Transformer) -> None:
  """Copies embedding, layers and final norm of `source` into `target` (value head untouched)."""
  src = nnx.state(source, nnx.Param)
  dst = nnx.state(target, nnx.Param)
  src_flat = dict(nnx.to_flat_state(src))
  updates = []
  for path, var in nnx.to_flat_state(dst):
    if path[0] in ("value_head", "value_bias"):
      continue
    if path not in src_flat:
      raise KeyError(f"critic parameter {'/'.join(map(str, path))} missing from the policy")
    if src_flat[path].get_value().shape != var.get_value().shape:
      raise ValueError(f"shape mismatch at {'/'.join(map(str, path))}")
    updates.append((path, src_flat[path]))
  nnx.update(target, nnx.from_flat_state(updates))


# --- functional core: pure functions of (graphdef, state, ...) ------------------------------------


def forward(graphdef, state, input_ids, attention_mask=None, positions=None) -> Array:
  """Logits [B, T, V] (float32). Pure; jit it with graphdef static."""
  model = nnx.merge(graphdef, state)
  return model(input_ids, attention_mask=attention_mask, positions=positions)


def sampler_support(scaled_logits: Array, top_k: int, top_p: float | Array = 1.0) -> Array:
  """Ids [..., top_k] of the tokens a top-k / top-p sampler can draw from `scaled_logits`
  (already divided by the temperature), -1 in unused slots: the top-k set, then the smallest
  prefix of it whose renormalised mass reaches `top_p` (as rl.env.sampling filters; the top token is
  always kept)."""
  vals, ids = jax.lax.top_k(scaled_logits, top_k)
  probs = jax.nn.softmax(vals, axis=-1)
  keep = (jnp.cumsum(probs, axis=-1) - probs) < top_p
  keep = keep.at[..., 0].set(True)
  return jnp.where(keep, ids, -1).astype(jnp.int32)


def support_logprob(scaled_logits: Array, support: Array, targets: Array, full_logp: Array) -> Array:
  """log p(target) under softmax(scaled_logits) renormalised over `support` ([..., K] ids, -1 =
  unused), the distribution a truncated sampler draws from. A target outside the support (a
  token the policy did not sample, or a tie at the cut) keeps `full_logp`."""
  z = jnp.take_along_axis(scaled_logits, jnp.maximum(support, 0), axis=-1)
  z = jnp.where(support >= 0, z, -jnp.inf)
  z_target = jnp.take_along_axis(scaled_logits, targets[..., None], axis=-1)[..., 0]
  inside = jnp.any(support == targets[..., None], axis=-1)
  return jnp.where(inside, z_target - jax.nn.logsumexp(z, axis=-1), full_logp)


def chunked_logprobs_entropy(hidden: Array, unembedding: Array, targets: Array, *,
                             temperature: float | Array = 1.0, chunk: int = 256,
                             with_entropy: bool = True, support: Array | None = None,
                             support_top_k: int = 0, support_top_p: float | Array = 1.0,
                             gather_ids: Array | None = None, top_logprobs: int = 0,
                             grammar_states: Array | None = None,
                             grammar_table: Array | None = None,
                             needed: Array | None = None) -> tuple:
  """log p(targets) and entropy [B, T] from hidden [B, T, D], one sequence chunk at a time.

  Each chunk's [B, chunk, V] logits are rematerialised in the backward pass, so peak memory is
  O(B * chunk * V) instead of O(B * T * V).

  Truncated sampling (docs/algorithms.md, "Sampler support"): with `support_top_k` > 0 the
  top-k / top-p support of these logits is computed ([B, T, K]) and the log-probs are those of
  the renormalised distribution on it; with a given `support` the log-probs are renormalised on
  that one (the sampling policy's, fixed during the update). `gather_ids` [B, T, K'] asks for the
  full-softmax log-probs of those tokens, and `top_logprobs` = k for the ids and log-probs of each
  position's k most likely tokens (both for the top-k KL). The entropy is always the full
  distribution's. Constrained decoding (rl.env.constrained): with `grammar_states` [B, T] and the
  grammar's next-state table [S, V], each position's logits are first masked to the tokens its
  state allows, so everything above is of the distribution the constrained sampler drew from
  (entropy included). Returns (logp, entropy), plus a dict of extras ("support", "full_logprobs",
  "gathered", "top_ids", "top_logprobs") when any of these is used.

  `needed` [B, T] (bool): only these positions' outputs are used (a loss's mask); the others
  are 0. The positions are reordered with the needed ones first, and a chunk with none of them
  skips its logits: with a quarter of the tokens needed, about a quarter of the work.
  """
  b, t, d = hidden.shape
  shape = (b, t)
  chunk = max(1, min(chunk, t))
  order = None
  if needed is not None:  # one row of the needed positions first, the rest after: [1, B * T]
    order = jnp.argsort(~jnp.asarray(needed, bool).reshape(-1), stable=True)
    flat = lambda x: jnp.asarray(x).reshape((b * t,) + x.shape[2:])[order][None]
    hidden, targets = flat(hidden), flat(targets)
    support, gather_ids, grammar_states, needed = (
        None if x is None else flat(x) for x in (support, gather_ids, grammar_states, needed))
    b, t, chunk = 1, b * t, b * chunk  # the same logits block per chunk as [B, chunk]
  pad = (-t) % chunk
  n = (t + pad) // chunk

  def to_chunks(x, fill=0):  # [B, T, ...] -> [n, B, chunk, ...]
    x = jnp.pad(x, ((0, 0), (0, pad)) + ((0, 0),) * (x.ndim - 2), constant_values=fill) if pad else x
    return x.reshape((b, n, chunk) + x.shape[2:]).swapaxes(0, 1)

  # Only what was asked for is an input or output of the chunk loop: the default path computes
  # the target log-probs and the entropy and nothing else.
  inputs = {"h": to_chunks(hidden), "y": to_chunks(targets)}
  if support is not None:
    inputs["support"] = to_chunks(support, fill=-1)
  if gather_ids is not None:
    inputs["gather_ids"] = to_chunks(gather_ids)
  if grammar_states is not None:
    inputs["grammar_states"] = to_chunks(grammar_states, fill=grammar_table.shape[0] - 1)
  if needed is not None:
    inputs["needed"] = to_chunks(needed, fill=False)
  truncated = support is not None or support_top_k > 0

  def compute(x):
    logits = unembed(x["h"], unembedding.astype(x["h"].dtype)).astype(jnp.float32)
    logits = logits / temperature
    if "grammar_states" in x:
      allowed = grammar_table[x["grammar_states"]] >= 0
      logits = jnp.where(allowed, logits, MASKED_LOGIT)
    logp_all = jax.nn.log_softmax(logits, axis=-1)
    y = x["y"].astype(jnp.int32)
    out = {"logp": jnp.take_along_axis(logp_all, y[..., None], axis=-1)[..., 0]}
    # -sum(p * log p) as a contraction: XLA's CPU backend runs the same sum written as
    # multiply-then-reduce through a library fusion ~12x slower (docs/journal/2026-12-05-speed.md).
    out["ent"] = (-jnp.einsum("btv,btv->bt", jnp.exp(logp_all), logp_all) if with_entropy
                  else jnp.zeros_like(out["logp"]))
    if truncated:
      sup = x.get("support")
      if sup is None:
        sup = sampler_support(jax.lax.stop_gradient(logits), support_top_k, support_top_p)
      out.update(support=sup, full_logprobs=out["logp"],
                 logp=support_logprob(logits, sup, y, out["logp"]))
    if "gather_ids" in x:
      out["gathered"] = jnp.take_along_axis(logp_all, x["gather_ids"].astype(jnp.int32), axis=-1)
    if top_logprobs > 0:
      top_lp, top_ids = jax.lax.top_k(jax.lax.stop_gradient(logp_all), top_logprobs)
      out.update(top_ids=top_ids.astype(jnp.int32), top_logprobs=top_lp)
    return out

  @jax.checkpoint
  def one_chunk(x):
    if "needed" not in x:
      return compute(x)
    skip = lambda x: jax.tree.map(lambda a: jnp.zeros(a.shape, a.dtype), jax.eval_shape(compute, x))
    return jax.lax.cond(jnp.any(x["needed"]), compute, skip, x)

  outs = jax.lax.map(one_chunk, inputs)
  outs = {k: v.swapaxes(0, 1).reshape((b, -1) + v.shape[3:])[:, :t] for k, v in outs.items()}
  if order is not None:  # 0 where not needed, back to [B, T] in the original order
    inverse = jnp.zeros_like(order).at[order].set(jnp.arange(order.size, dtype=order.dtype))
    keep = lambda v: jnp.where(needed.reshape(needed.shape + (1,) * (v.ndim - 2)), v, jnp.zeros((), v.dtype))
    outs = {k: keep(v)[0][inverse].reshape(shape + v.shape[2:]) for k, v in outs.items()}
  logp, ent = outs.pop("logp"), outs.pop("ent")
  return (logp, ent, outs) if outs else (logp, ent)


def token_logprobs(model: Transformer, input_ids: Array, attention_mask: Array | None = None, *,
                   temperature: float | Array = 1.0, chunk: int = 256, with_entropy: bool = True,
                   with_values: bool = False, support: Array | None = None, support_top_k: int = 0,
                   support_top_p: float | Array = 1.0, gather_ids: Array | None = None,
                   top_logprobs: int = 0, grammar_states: Array | None = None,
                   grammar_table: Array | None = None, segment_ids: Array | None = None,
                   needed: Array | None = None) -> dict[str, Array]:
  """Per-token quantities aligned with `input_ids` [B, T] (index 0 has no prediction: zeros).

  `segment_ids` instead of `attention_mask`: packed rows (Transformer.hidden_states). The first
  token of each packed sequence then gets a meaningless prediction from the previous sequence's
  last token; it is a prompt token, which every loss masks.

  Returns {"logprobs": log p(x_t | x_<t), "entropy": H(p(. | x_<t)), and with `with_values`
  "values": V(s_t) read from the hidden state at t-1, the state that predicts token t}.
  With `support_top_k` or `support` (aligned with input_ids, [B, T, K]) the log-probs are those
  of the truncated sampler (chunked_logprobs_entropy), and "support" and "full_logprobs" are
  added; with `gather_ids` ([B, T, K'], aligned the same way) "gathered" holds the full-softmax
  log-probs of those tokens; with `top_logprobs` = k, "top_ids" and "top_logprobs" [B, T, k].
  `grammar_states` ([B, T], aligned the same way) with `grammar_table`: the distributions of a
  constrained sampler (rl.env.constrained). `needed` ([B, T], aligned the same way, e.g. a loss's
  action mask): every per-token output but "values" is computed at these positions only and is
  0 elsewhere (chunked_logprobs_entropy).
  """
  input_ids = jnp.asarray(input_ids)
  hidden, _ = model.hidden_states(input_ids, attention_mask=attention_mask, segment_ids=segment_ids)
  predictors = hidden[:, :-1]
  res = chunked_logprobs_entropy(predictors, model.unembedding(), input_ids[:, 1:],
                                 temperature=temperature, chunk=chunk, with_entropy=with_entropy,
                                 support=None if support is None else support[:, 1:],
                                 support_top_k=support_top_k, support_top_p=support_top_p,
                                 gather_ids=None if gather_ids is None else gather_ids[:, 1:],
                                 top_logprobs=top_logprobs,
                                 grammar_states=None if grammar_states is None else grammar_states[:, 1:],
                                 grammar_table=grammar_table,
                                 needed=None if needed is None else jnp.asarray(needed)[:, 1:] > 0)
  logp, ent = res[:2]
  extras = res[2] if len(res) == 3 else {}
  zeros = jnp.zeros_like(logp[:, :1])
  out = {"logprobs": jnp.concatenate([zeros, logp], 1),
         "entropy": jnp.concatenate([zeros, ent], 1)}
  if "support" in extras:
    out["support"] = jnp.concatenate([jnp.full_like(extras["support"][:, :1], -1), extras["support"]], 1)
    out["full_logprobs"] = jnp.concatenate([zeros, extras["full_logprobs"]], 1)
  for key in ("gathered", "top_ids", "top_logprobs"):
    if key in extras:
      g = extras[key]
      out[key] = jnp.concatenate([jnp.zeros_like(g[:, :1]), g], 1)
  if with_values:
    out["values"] = jnp.concatenate([zeros, model.values_from_hidden(predictors)], 1)
  return out


def token_values(model: Transformer, input_ids: Array, attention_mask: Array | None = None, *,
                 segment_ids: Array | None = None) -> Array:
  """V(s_t) [B, T] aligned with tokens (index 0 = 0), from a value-head model (critic or shared)."""
  hidden, _ = model.hidden_states(jnp.asarray(input_ids), attention_mask=attention_mask,
                                  segment_ids=segment_ids)
  v = model.values_from_hidden(hidden[:, :-1])
  return jnp.concatenate([jnp.zeros_like(v[:, :1]), v], 1)


def init_model(config: ModelConfig, seed: int = 0, *, lm_head: bool = True,
               out_shardings: Any = None) -> Transformer:
  """A randomly initialised model, built inside one jit (eager init compiles op by op).

  `out_shardings` (a State-shaped tree of shardings, see rl.parallel) makes weights born sharded.
  """

  def build():
    return nnx.split(Transformer(config, seed=seed, lm_head=lm_head))

  graphdef = nnx.split(nnx.eval_shape(lambda: Transformer(config, seed=seed, lm_head=lm_head)))[0]
  state = jax.jit(lambda: build()[1], out_shardings=out_shardings)()
  return nnx.merge(graphdef, state)
