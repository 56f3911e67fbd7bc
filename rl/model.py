"""The policy/value model: public entry point re-exporting rl.models.

`Transformer` (Qwen2/Llama decoder in Flax NNX, optional shared value head), `tiny_config` presets,
the pure functions the update step and sampler jit, and Hugging Face checkpoint load/save.
"""

from rl.models.hf import (CheckpointError, config_from_hf, config_to_hf, load_hf_checkpoint,
                          save_hf_checkpoint)
from rl.models.transformer import (KVCache, ModelConfig, PRESETS, Transformer, VALUE_HEADS,
                                   as_dtype, chunked_logprobs_entropy, copy_trunk, forward,
                                   init_model, make_critic, sampler_support, support_logprob,
                                   tiny_config, token_logprobs, token_values)

__all__ = [
    "CheckpointError", "KVCache", "ModelConfig", "PRESETS", "Transformer", "VALUE_HEADS",
    "as_dtype", "chunked_logprobs_entropy", "config_from_hf", "config_to_hf", "copy_trunk",
    "forward", "init_model", "load_hf_checkpoint", "make_critic", "sampler_support",
    "save_hf_checkpoint", "support_logprob", "tiny_config", "token_logprobs", "token_values", "build_from_config",
]


def build_from_config(config, *, mesh=None, rules=None, seed: int | None = None):
  """(policy, critic or None, tokenizer) from an experiment config's `model` section.

  `c.model.hf_checkpoint` (a local HF directory) or the `c.model.tiny` preset with the committed
  tokenizer; `c.model.value_head` "shared" puts the head on the policy, "separate" builds a critic
  whose trunk is a copy of the policy's. With `mesh`, weights are placed sharded by `rules`.
  """
  from rl.tokenizer import load_tokenizer

  model_cfg = config.model if hasattr(config, "model") else config
  seed = int(config.seed if seed is None else seed)
  value_head = model_cfg.value_head
  if value_head not in ("none", "shared", "separate"):
    raise ValueError(f"model.value_head must be none, shared or separate, got {value_head!r}")
  policy_head = "shared" if value_head == "shared" else "none"
  if mesh is not None and rules is None and hasattr(config, "mesh"):
    rules = tuple(config.mesh.rules)
  if model_cfg.hf_checkpoint:
    policy = load_hf_checkpoint(model_cfg.hf_checkpoint, dtype=as_dtype(model_cfg.param_dtype),
                                value_head=policy_head, remat=model_cfg.remat,
                                attention=model_cfg.attention, mesh=mesh,
                                rules=rules)
    tokenizer = load_tokenizer(model_cfg.hf_checkpoint)
  else:
    tokenizer = load_tokenizer()
    model_config = tiny_config(model_cfg.tiny, vocab_size=len(tokenizer), dtype=model_cfg.dtype,
                               param_dtype=model_cfg.param_dtype, remat=model_cfg.remat,
                               attention=model_cfg.attention,
                               value_head=policy_head,
                               eos_token_id=tokenizer.eos_token_id,
                               pad_token_id=tokenizer.pad_token_id)
    if mesh is not None:
      from rl.parallel import DEFAULT_RULES, create_sharded_model
      policy = create_sharded_model(model_config, mesh, rules or DEFAULT_RULES, seed=seed)
    else:
      policy = init_model(model_config, seed)
  critic = None
  if value_head == "separate":
    critic = make_critic(policy.config.replace(value_head="none"), seed=seed + 1)
    copy_trunk(policy, critic)
    if mesh is not None:
      from rl.parallel import DEFAULT_RULES, shard_model
      shard_model(critic, mesh, rules or DEFAULT_RULES)
  return policy, critic, tokenizer
