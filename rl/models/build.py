"""One way to build the policy and its critic from an experiment config (`config.model`)."""

from __future__ import annotations

import ml_collections
from flax import nnx

from rl.models.hf import load_hf_checkpoint
from rl.models.transformer import ModelConfig, Transformer, as_dtype, copy_trunk, init_model, make_critic, tiny_config


def build_models(config: ml_collections.ConfigDict, vocab_size: int, eos_id: int, pad_id: int,
                 mesh=None, rules=None, critic: bool = True) -> tuple[ModelConfig, Transformer, Transformer | None]:
  """(model config, policy, critic or None) as NNX modules: from an HF directory
  (`config.model.hf_checkpoint`) or a built-in preset (`config.model.tiny`, sizes overridable);
  `config.model.value_head` "shared" puts the value head on the policy, otherwise a separate
  critic starts from a copy of the policy's trunk (`critic` False: none). With a `mesh`, every weight is born sharded by `rules` (a checkpoint is read shard by shard): no
  device ever holds a whole copy."""
  from rl import parallel

  shared = config.model.value_head == "shared"

  def init(cfg, seed, lm_head=True):
    if mesh is None:
      return init_model(cfg, seed=seed, lm_head=lm_head)
    return parallel.create_sharded_model(cfg, mesh, rules, seed=seed, lm_head=lm_head)

  if config.model.hf_checkpoint:
    loaded = load_hf_checkpoint(config.model.hf_checkpoint,
                                          dtype=as_dtype(config.model.param_dtype),
                                          mesh=mesh, rules=rules)
    cfg = loaded.config.replace(value_head="shared" if shared else "none", remat=config.model.remat,
                                dtype=config.model.dtype, attention=config.model.attention)
    policy = init(cfg, config.seed)
    src = dict(nnx.to_flat_state(nnx.state(loaded, nnx.Param)))
    nnx.update(policy, nnx.from_flat_state([(k, v) for k, v in src.items()]))
  else:
    sizes = {k: int(config.model[k]) for k in ("hidden_size", "num_layers", "intermediate_size")
             if config.model[k]}  # 0: the preset's size
    cfg = tiny_config(config.model.tiny, **sizes, vocab_size=vocab_size, eos_token_id=eos_id,
                                pad_token_id=pad_id, value_head="shared" if shared else "none",
                                remat=config.model.remat, dtype=config.model.dtype,
                                param_dtype=config.model.param_dtype,
                                attention=config.model.attention)
    policy = init(cfg, config.seed)
  value_model = None
  if not shared and critic:  # `critic` False: the policy alone (evaluation)
    if mesh is None:
      value_model = make_critic(cfg, seed=config.seed + 1)
    else:  # make_critic's weights, born sharded
      value_model = init(cfg.replace(value_head="shared"), config.seed + 1, lm_head=False)
    copy_trunk(policy, value_model)
  return cfg, policy, value_model
