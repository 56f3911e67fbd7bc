"""Hugging Face checkpoint interop: Qwen2/Llama config.json + safetensors <-> our Transformer.

Weights move through explicit regex key maps (HF name -> our parameter path plus a reshape);
any unmatched, missing or mis-shaped tensor fails loudly, naming the file and the key.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from rl.models.transformer import ModelConfig, Transformer, as_dtype

SUPPORTED_MODEL_TYPES = ("qwen2", "llama")
# Buffers some exporters write that carry no learned weights.
_IGNORED_KEYS = (re.compile(r".*rotary_emb\.inv_freq$"),)


class CheckpointError(ValueError):
  """A checkpoint directory that cannot be read into (or written from) our model."""


def config_from_hf(hf: dict[str, Any], *, source: str = "config.json", **overrides) -> ModelConfig:
  """Our ModelConfig from a transformers config.json dictionary."""
  model_type = hf.get("model_type")
  if model_type not in SUPPORTED_MODEL_TYPES:
    raise CheckpointError(f"{source}: unsupported model_type {model_type!r}; supported: "
                          f"{', '.join(SUPPORTED_MODEL_TYPES)}")
  if hf.get("mlp_bias"):
    raise CheckpointError(f"{source}: mlp_bias=true is not supported")
  if model_type == "qwen2" and hf.get("use_sliding_window"):
    raise CheckpointError(f"{source}: use_sliding_window=true is not supported")
  rope = dict(hf.get("rope_parameters") or {})
  rope_theta = hf.get("rope_theta", rope.get("rope_theta", 10000.0))
  scaling = hf.get("rope_scaling") or (rope if rope.get("rope_type", "default") != "default" else None)
  if scaling:
    kind = scaling.get("rope_type", scaling.get("type"))
    if kind not in ("default", "llama3"):
      raise CheckpointError(f"{source}: unsupported rope scaling {kind!r} (supported: llama3)")
    scaling = tuple(sorted((k, v) for k, v in scaling.items() if k != "rope_theta"))
  try:
    num_heads = hf["num_attention_heads"]
    eos = hf.get("eos_token_id")
    config = ModelConfig(
        vocab_size=hf["vocab_size"],
        hidden_size=hf["hidden_size"],
        num_layers=hf["num_hidden_layers"],
        num_heads=num_heads,
        num_kv_heads=hf.get("num_key_value_heads") or num_heads,
        head_dim=hf.get("head_dim") or 0,
        intermediate_size=hf["intermediate_size"],
        rope_theta=float(rope_theta),
        rope_scaling=scaling or None,
        rms_norm_eps=hf.get("rms_norm_eps", 1e-6),
        qkv_bias=True if model_type == "qwen2" else bool(hf.get("attention_bias", False)),
        o_bias=False if model_type == "qwen2" else bool(hf.get("attention_bias", False)),
        tie_word_embeddings=bool(hf.get("tie_word_embeddings", model_type == "qwen2")),
        max_position_embeddings=hf.get("max_position_embeddings", 32768),
        architecture=model_type,
        bos_token_id=hf.get("bos_token_id"),
        eos_token_id=eos[0] if isinstance(eos, list) else eos,
        pad_token_id=hf.get("pad_token_id"),
    )
  except KeyError as e:
    raise CheckpointError(f"{source}: missing required key {e.args[0]!r}") from None
  return config.replace(**overrides) if overrides else config


def config_to_hf(config: ModelConfig, dtype_name: str) -> dict[str, Any]:
  """A transformers config.json dictionary for `config`."""
  arch = config.architecture
  hf = {
      "architectures": ["Qwen2ForCausalLM" if arch == "qwen2" else "LlamaForCausalLM"],
      "model_type": arch,
      "vocab_size": config.vocab_size,
      "hidden_size": config.hidden_size,
      "num_hidden_layers": config.num_layers,
      "num_attention_heads": config.num_heads,
      "num_key_value_heads": config.num_kv_heads,
      "head_dim": config.dim_per_head,
      "intermediate_size": config.intermediate_size,
      "hidden_act": "silu",
      "rms_norm_eps": config.rms_norm_eps,
      "rope_theta": config.rope_theta,
      "max_position_embeddings": config.max_position_embeddings,
      "tie_word_embeddings": config.tie_word_embeddings,
      "bos_token_id": config.bos_token_id,
      "eos_token_id": config.eos_token_id,
      "pad_token_id": config.pad_token_id,
      "torch_dtype": dtype_name,
      "dtype": dtype_name,
      "use_cache": True,
  }
  rope_parameters = {"rope_theta": config.rope_theta, "rope_type": "default"}
  if config.rope_scaling:
    hf["rope_scaling"] = dict(config.rope_scaling)
    rope_parameters.update(dict(config.rope_scaling))
  hf["rope_parameters"] = rope_parameters
  if arch == "llama":
    if config.qkv_bias != config.o_bias:
      raise CheckpointError("llama export needs q/k/v and o biases to agree (attention_bias)")
    hf["attention_bias"] = config.qkv_bias
    hf["mlp_bias"] = False
  else:
    if not config.qkv_bias or config.o_bias:
      raise CheckpointError("qwen2 export needs qkv_bias=True and o_bias=False")
    hf["use_sliding_window"] = False
  return hf


# --- key maps --------------------------------------------------------------------------------------
# Each rule: HF regex, our path template ({0} = layer index), to-ours fn(array, cfg), to-HF fn.


def _heads(n_attr: str):
  def to_ours(w, c):  # [H*Dh, D] -> [D, H, Dh]
    return w.T.reshape(c.hidden_size, getattr(c, n_attr), c.dim_per_head)

  def to_hf(w, c):
    return w.reshape(c.hidden_size, -1).T
  return to_ours, to_hf


def _head_bias(n_attr: str):
  return (lambda b, c: b.reshape(getattr(c, n_attr), c.dim_per_head),
          lambda b, c: b.reshape(-1))


def _out_proj():
  return (lambda w, c: w.T.reshape(c.num_heads, c.dim_per_head, c.hidden_size),
          lambda w, c: w.reshape(-1, c.hidden_size).T)


_identity = (lambda w, c: w, lambda w, c: w)
_transpose = (lambda w, c: w.T, lambda w, c: w.T)
_LAYER = "model.layers.{0}."

# (HF name template, our parameter path template, (to-ours, to-HF) transforms); {0} = layer index.
KEY_MAP: tuple[tuple[str, tuple, tuple[Callable, Callable]], ...] = (
    ("model.embed_tokens.weight", ("embed_tokens",), _identity),
    ("model.norm.weight", ("norm", "weight"), _identity),
    ("lm_head.weight", ("lm_head",), _transpose),
    (_LAYER + "input_layernorm.weight", ("layers", "{0}", "input_layernorm", "weight"), _identity),
    (_LAYER + "post_attention_layernorm.weight",
     ("layers", "{0}", "post_attention_layernorm", "weight"), _identity),
    (_LAYER + "self_attn.q_proj.weight", ("layers", "{0}", "self_attn", "q_proj"),
     _heads("num_heads")),
    (_LAYER + "self_attn.k_proj.weight", ("layers", "{0}", "self_attn", "k_proj"),
     _heads("num_kv_heads")),
    (_LAYER + "self_attn.v_proj.weight", ("layers", "{0}", "self_attn", "v_proj"),
     _heads("num_kv_heads")),
    (_LAYER + "self_attn.q_proj.bias", ("layers", "{0}", "self_attn", "q_bias"),
     _head_bias("num_heads")),
    (_LAYER + "self_attn.k_proj.bias", ("layers", "{0}", "self_attn", "k_bias"),
     _head_bias("num_kv_heads")),
    (_LAYER + "self_attn.v_proj.bias", ("layers", "{0}", "self_attn", "v_bias"),
     _head_bias("num_kv_heads")),
    (_LAYER + "self_attn.o_proj.weight", ("layers", "{0}", "self_attn", "o_proj"), _out_proj()),
    (_LAYER + "self_attn.o_proj.bias", ("layers", "{0}", "self_attn", "o_bias"), _identity),
    (_LAYER + "mlp.gate_proj.weight", ("layers", "{0}", "mlp", "gate_proj"), _transpose),
    (_LAYER + "mlp.up_proj.weight", ("layers", "{0}", "mlp", "up_proj"), _transpose),
    (_LAYER + "mlp.down_proj.weight", ("layers", "{0}", "mlp", "down_proj"), _transpose),
)
_COMPILED = tuple((re.compile(re.escape(name).replace(r"\{0\}", r"(\d+)") + "$"), name, path, fns)
                  for name, path, fns in KEY_MAP)


def _our_path(hf_key: str) -> tuple[tuple | None, Any]:
  """(our parameter path, transforms) for an HF tensor name; (None, None) when no rule matches."""
  for rx, _, template, fns in _COMPILED:
    m = rx.match(hf_key)
    if m:
      return tuple(int(m.group(1)) if p == "{0}" else p for p in template), fns
  return None, None


def _hf_key(path: tuple) -> tuple[str, Any]:
  """(HF tensor name, transforms) for one of our parameter paths (the inverse map)."""
  for _, name, template, fns in _COMPILED:
    if len(template) == len(path) and all(
        (t == "{0}" and isinstance(p, int)) or t == p for t, p in zip(template, path)):
      layer = next((p for t, p in zip(template, path) if t == "{0}"), None)
      return name.format(layer), fns
  raise CheckpointError(f"no Hugging Face name for parameter {'/'.join(map(str, path))}")


# --- reading ---------------------------------------------------------------------------------------


def _safetensor_files(path: str) -> list[str]:
  index = os.path.join(path, "model.safetensors.index.json")
  single = os.path.join(path, "model.safetensors")
  if os.path.exists(index):
    with open(index) as fh:
      weight_map = json.load(fh).get("weight_map")
    if not weight_map:
      raise CheckpointError(f"{index}: no 'weight_map'")
    files = sorted(set(weight_map.values()))
    for f in files:
      if not os.path.exists(os.path.join(path, f)):
        raise CheckpointError(f"{index} names shard {f!r}, which is missing from {path}")
    return [os.path.join(path, f) for f in files]
  if os.path.exists(single):
    return [single]
  others = sorted(f for f in os.listdir(path) if f.endswith(".safetensors"))
  if others:
    return [os.path.join(path, f) for f in others]
  raise CheckpointError(f"{path}: no model.safetensors, model.safetensors.index.json or "
                        "*.safetensors files")


def _read_tensors(files: list[str]):
  """Yields (file, key, numpy float32-or-native array); bf16 is read through jax."""
  from safetensors import safe_open

  for f in files:
    with safe_open(f, framework="flax") as fh:
      for key in fh.keys():
        yield f, key, fh.get_tensor(key)


def load_hf_checkpoint(path: str | os.PathLike, dtype: Any = jnp.float32, *,
                       value_head: str = "none", remat: bool = False, attention: str = "einsum",
                       mesh: Any = None, rules: Any = None) -> Transformer:
  """Reads a Qwen2/Llama Hugging Face directory (config.json + safetensors) into a Transformer.

  Args:
    path: the checkpoint directory.
    dtype: parameter and activation dtype (float32, bfloat16 or float16).
    value_head: "none" or "shared" (adds a zero-initialised scalar head to the trunk).
    remat: rematerialise layers in the backward pass.
    attention: the cache-free attention implementation (ModelConfig.attention).
    mesh: optional jax Mesh: each weight is placed on it, sharded by its logical axes and
      `rules` (default rl.parallel.DEFAULT_RULES), as it is read; None = default device.

  Returns:
    The model; `model(input_ids)` gives logits [B, T, V].
  """
  path = os.fspath(path)
  if not os.path.isdir(path):
    raise CheckpointError(f"checkpoint directory {path!r} does not exist")
  config_path = os.path.join(path, "config.json")
  if not os.path.exists(config_path):
    raise CheckpointError(f"{config_path} is missing")
  with open(config_path) as fh:
    try:
      hf_config = json.load(fh)
    except json.JSONDecodeError as e:
      raise CheckpointError(f"{config_path}: invalid JSON ({e})") from None
  dtype_name = jnp.dtype(as_dtype(dtype)).name
  config = config_from_hf(hf_config, source=config_path, dtype=dtype_name, param_dtype=dtype_name,
                          value_head=value_head, remat=remat, attention=attention)
  shardings = None
  if mesh is not None:
    from rl.parallel import DEFAULT_RULES, hf_param_shardings
    shardings = hf_param_shardings(config, mesh, DEFAULT_RULES if rules is None else rules)
  abstract = nnx.eval_shape(lambda: Transformer(config))
  graphdef, abstract_state = nnx.split(abstract)
  expected = {p: v for p, v in nnx.to_flat_state(abstract_state)}
  loaded: dict[tuple, Any] = {}
  for file, key, tensor in _read_tensors(_safetensor_files(path)):
    if any(rx.match(key) for rx in _IGNORED_KEYS):
      continue
    our, fns = _our_path(key)
    if our is None:
      raise CheckpointError(f"{file}: tensor {key!r} matches no rule of the key map")
    if our == ("lm_head",) and config.tie_word_embeddings:
      continue  # some exporters store the tied matrix twice
    if our not in expected:
      raise CheckpointError(f"{file}: tensor {key!r} maps to {'/'.join(map(str, our))}, which the "
                            f"config ({config_path}) does not have")
    if our in loaded:
      raise CheckpointError(f"{file}: tensor {key!r} appears twice")
    want = expected[our].get_value()
    try:
      value = fns[0](tensor, config)
    except (ValueError, TypeError) as e:
      raise CheckpointError(f"{file}: tensor {key!r} of shape {tuple(tensor.shape)} cannot be "
                            f"reshaped for {'/'.join(map(str, our))} {want.shape}: {e}") from None
    if tuple(value.shape) != tuple(want.shape):
      raise CheckpointError(f"{file}: tensor {key!r} has shape {tuple(tensor.shape)}, expected one "
                            f"that maps to {tuple(want.shape)} for the config in {config_path}")
    if shardings is None:
      value = jnp.asarray(value, dtype=want.dtype)
    else:  # straight from the host to each device's shard: no device holds the whole tensor
      from rl.parallel import global_array
      value = global_array(np.asarray(value, dtype=want.dtype), shardings(our))
    loaded[our] = value
  missing = [p for p in expected if p not in loaded and p[0] not in ("value_head", "value_bias")]
  if missing:
    names = ", ".join(_hf_key(p)[0] for p in missing[:8])
    raise CheckpointError(f"{path}: {len(missing)} weights missing from the safetensors files, e.g. "
                          f"{names}")
  model = nnx.merge(graphdef, abstract_state)
  fresh = {} if value_head == "none" else {
      ("value_head",): jnp.zeros((config.hidden_size,), as_dtype(dtype_name)),
      ("value_bias",): jnp.zeros((), as_dtype(dtype_name))}
  if shardings is not None:
    fresh = {p: jax.device_put(v, shardings(p)) for p, v in fresh.items()}
  nnx.update(model, nnx.from_flat_state({**loaded, **fresh}))
  return model


# --- writing ---------------------------------------------------------------------------------------


def save_hf_checkpoint(model: Transformer, path: str | os.PathLike, tokenizer: Any = None, *,
                       max_shard_bytes: int = 4 << 30) -> None:
  """Writes `model` as a Hugging Face directory (config.json, safetensors, tokenizer files).

  The value head is not part of a causal-LM checkpoint and is left out. Files over
  `max_shard_bytes` are split with a model.safetensors.index.json, as transformers does.
  """
  from safetensors.flax import save_file

  path = os.fspath(path)
  config: ModelConfig = model.config
  if not model.has_lm_head:
    raise CheckpointError("cannot export a critic (no lm_head) as a causal LM")
  os.makedirs(path, exist_ok=True)
  tensors: dict[str, jax.Array] = {}
  dtype_name = None
  for our, var in nnx.to_flat_state(nnx.state(model, nnx.Param)):
    if our[0] in ("value_head", "value_bias"):
      continue
    key, (_, to_hf) = _hf_key(our)
    weight = var.get_value()
    value = jnp.asarray(to_hf(np.asarray(jax.device_get(weight)), config), weight.dtype)
    dtype_name = dtype_name or jnp.dtype(value.dtype).name
    tensors[key] = value
  with open(os.path.join(path, "config.json"), "w") as fh:
    json.dump(config_to_hf(config, dtype_name), fh, indent=2)
  shards: list[dict[str, jax.Array]] = [{}]
  size = 0
  for key in sorted(tensors):
    nbytes = tensors[key].size * tensors[key].dtype.itemsize
    if shards[-1] and size + nbytes > max_shard_bytes:
      shards.append({})
      size = 0
    shards[-1][key] = tensors[key]
    size += nbytes
  if len(shards) == 1:
    save_file(shards[0], os.path.join(path, "model.safetensors"), metadata={"format": "pt"})
  else:
    weight_map = {}
    for i, shard in enumerate(shards):
      name = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
      save_file(shard, os.path.join(path, name), metadata={"format": "pt"})
      weight_map.update({k: name for k in shard})
    total = sum(t.size * t.dtype.itemsize for t in tensors.values())
    with open(os.path.join(path, "model.safetensors.index.json"), "w") as fh:
      json.dump({"metadata": {"total_size": int(total)}, "weight_map": weight_map}, fh, indent=2)
  generation = {"eos_token_id": config.eos_token_id, "pad_token_id": config.pad_token_id}
  if config.bos_token_id is not None:
    generation["bos_token_id"] = config.bos_token_id
  with open(os.path.join(path, "generation_config.json"), "w") as fh:
    json.dump(generation, fh, indent=2)
  if tokenizer is not None:
    tokenizer.save_pretrained(path)
