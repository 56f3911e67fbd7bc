"""The policy/value model: the Qwen2/Llama decoder in Flax NNX (optional value head), its presets,
the pure functions the update step and the sampler jit, Hugging Face checkpoint load/save, and
`build_models` (the policy and critic of an experiment config)."""

from rl.models.build import build_models
from rl.models.hf import (CheckpointError, config_from_hf, config_to_hf, load_hf_checkpoint,
                          save_hf_checkpoint)
from rl.models.transformer import (KVCache, ModelConfig, PRESETS, Transformer, VALUE_HEADS,
                                   as_dtype, chunked_logprobs_entropy, copy_trunk, forward,
                                   init_model, make_critic, sampler_support, support_logprob,
                                   tiny_config, token_logprobs, token_values)

__all__ = [
    "CheckpointError", "KVCache", "ModelConfig", "PRESETS", "Transformer", "VALUE_HEADS",
    "as_dtype", "build_models", "chunked_logprobs_entropy", "config_from_hf", "config_to_hf",
    "copy_trunk", "forward", "init_model", "load_hf_checkpoint", "make_critic", "sampler_support",
    "save_hf_checkpoint", "support_logprob", "tiny_config", "token_logprobs", "token_values",
]
