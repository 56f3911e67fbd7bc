"""The policy/value model: public entry point re-exporting rl.models.

`Transformer` (Qwen2/Llama decoder in Flax NNX, optional shared value head), `tiny_config` presets,
the pure functions the update step and sampler jit, and Hugging Face checkpoint load/save.
"""

from rl.models.hf import (CheckpointError, config_from_hf, config_to_hf, load_hf_checkpoint,
                          save_hf_checkpoint)
from rl.models.transformer import (KVCache, ModelConfig, PRESETS, Transformer, VALUE_HEADS,
                                   as_dtype, chunked_logprobs_entropy, copy_trunk, forward,
                                   init_model, make_critic, tiny_config, token_logprobs,
                                   token_values)

__all__ = [
    "CheckpointError", "KVCache", "ModelConfig", "PRESETS", "Transformer", "VALUE_HEADS",
    "as_dtype", "chunked_logprobs_entropy", "config_from_hf", "config_to_hf", "copy_trunk",
    "forward", "init_model", "load_hf_checkpoint", "make_critic", "save_hf_checkpoint",
    "tiny_config", "token_logprobs", "token_values",
]
