"""Per-device memory of a run, planned from abstract arrays (scripts/memory_plan.py prints it).

`plan(config, mesh, rules)` builds the run's train state with `jax.eval_shape` and the shardings
the trainer gives it (rl.algo.update.train_state_shardings) and adds up, per device: parameters, both
optimizer states, the frozen reference, the sampler's KV cache for one rollout batch, and the
update step's scratch memory from XLA's analysis of the compiled step for one mini-batch.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

# config.json files of public checkpoints (shapes only), by checkpoint directory name.
SHAPES_DIR = Path(__file__).resolve().parents[2] / "configs" / "model_shapes"


@dataclasses.dataclass
class Plan:
  """Bytes per device of each part of a run's memory (the largest device's share).

  `update_scratch` is XLA's analysis of the update compiled for the CPU: its scheduler does not
  honour remat and einsum attention materialises its scores, so for long rows it is an upper
  bound. `update_estimate` counts what an accelerator run with remat and flash attention keeps:
  one checkpoint per layer, one layer's working set, a logits chunk, gradients and their
  micro-batch sum. `total` takes the estimate when the config runs that way (remat and cudnn
  attention), else the compiled figure.
  """

  params: int
  opt_state: int
  reference: int
  kv_cache: int
  update_scratch: int | None
  update_estimate: int
  devices: int
  mesh: dict
  model_parameters: int
  uses_estimate: bool
  notes: list

  @property
  def update(self) -> int:
    return self.update_estimate if self.uses_estimate or self.update_scratch is None else self.update_scratch

  @property
  def total(self) -> int:
    return self.params + self.opt_state + self.reference + self.kv_cache + self.update


def model_config_for(config, hf_config: str = ""):
  """The run's ModelConfig (shapes, dtypes) without reading any weights."""
  from rl import models as model_lib
  from rl.models.hf import config_from_hf

  m = config.model
  if hf_config or m.hf_checkpoint:
    path = Path(hf_config) if hf_config else Path(m.hf_checkpoint) / "config.json"
    if not path.exists() and not hf_config:
      path = SHAPES_DIR / f"{Path(m.hf_checkpoint).name}.json"
    if not path.exists():
      raise FileNotFoundError(f"no config.json for {m.hf_checkpoint!r}: not in the checkpoint directory nor "
                              f"in {SHAPES_DIR}; pass --hf_config")
    cfg = config_from_hf(json.loads(path.read_text()), source=str(path))
    return cfg.replace(dtype=m.dtype, param_dtype=m.param_dtype, remat=m.remat, attention=m.attention,
                       value_head="shared" if m.value_head == "shared" else "none")
  from rl import tokenizer as tokenizer_lib

  vocab = len(tokenizer_lib.load_tokenizer(None))
  sizes = {k: int(m[k]) for k in ("hidden_size", "num_layers", "intermediate_size") if m[k]}
  return model_lib.tiny_config(m.tiny, **sizes, vocab_size=vocab, remat=m.remat, dtype=m.dtype,
                               param_dtype=m.param_dtype, attention=m.attention,
                               value_head="shared" if m.value_head == "shared" else "none")


def _abstract_state(config, cfg, mesh, rules):
  """(graphdefs, optimizers, TrainState of sharded ShapeDtypeStructs) of a run with model `cfg`."""
  import jax
  import jax.numpy as jnp
  from flax import nnx

  from rl.algo import update as update_lib
  from rl.models.transformer import Transformer

  policy_def, policy = nnx.split(nnx.eval_shape(lambda: Transformer(cfg)), nnx.Param)
  critic_def = critic = None
  if config.model.value_head != "shared":
    critic_def, critic = nnx.split(nnx.eval_shape(
        lambda: Transformer(cfg.replace(value_head="shared"), lm_head=False)), nnx.Param)
  # The schedules' lengths change no array: any step counts do.
  policy_tx, critic_tx = update_lib.optimizers_from_config(config, 1000, 1000)
  shardings = update_lib.train_state_shardings(policy, critic, policy_tx, critic_tx, mesh, rules)
  abstract = update_lib.TrainState(
      step=jax.ShapeDtypeStruct((), jnp.int32), policy=policy,
      policy_opt=jax.eval_shape(policy_tx.init, policy), critic=critic,
      critic_opt=jax.eval_shape(critic_tx.init, policy if critic is None else critic))
  state = jax.tree.map(lambda x, s: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=s), abstract, shardings)
  return (policy_def, critic_def), (policy_tx, critic_tx), shardings, state


def update_scratch_bytes(config, cfg, mesh, rules, seq_len: int) -> int | None:
  """XLA's scratch memory per device for one update step of a mini-batch of `seq_len` tokens
  per row, from the compiled step (`cfg` as given: compile time grows with its depth)."""
  import jax
  import jax.numpy as jnp

  from rl import parallel
  from rl.algo import update as update_lib

  (policy_def, critic_def), (policy_tx, critic_tx), shardings, state = _abstract_state(config, cfg, mesh, rules)
  settings = update_lib.UpdateSettings.from_config(config)
  step = update_lib.make_update_step(policy_def, critic_def, policy_tx, critic_tx, settings,
                                     state_sharding=shardings,
                                     batch_sharding=parallel.rows_sharding(mesh, rules, 1))
  m, t = config.optim.mini_batch_size, seq_len
  row = lambda shape, dtype=jnp.float32: jax.ShapeDtypeStruct(  # noqa: E731
      shape, dtype, sharding=parallel.rows_sharding(mesh, rules, len(shape)))
  batch = {k: row((m, t)) for k in ("valid", "mask", "advantages", "returns", "old_logprobs", "old_values",
                                     "ref_logprobs", "sampler_logprobs", "token_weights")}
  batch.update(tokens=row((m, t), jnp.int32), sample_weights=row((m,)), has_sampler=row((m,)))
  if settings.truncated:
    batch["support"] = row((m, t, settings.support_top_k), jnp.int32)
  if settings.kl_topk:
    batch["ref_top_ids"] = row((m, t, settings.kl_topk), jnp.int32)
    batch["ref_top_logprobs"] = row((m, t, settings.kl_topk))
  scalar = jax.ShapeDtypeStruct((), jnp.float32)
  scalars = {k: scalar for k in ("num_tokens", "num_sequences", "kl_coef", "temperature", "norm_constant")}
  scratch = update_lib.compiled_temp_bytes(step, state, batch, scalars, True, True)
  return None if scratch is None else int(scratch)


# Deeper models have their update's scratch memory compiled at these two depths and extrapolated
# linearly: compiling a 28-layer step on the CPU takes tens of minutes, and each layer adds the
# same saved activations (and, with remat, the same checkpoint) to the scratch memory.
EXTRAPOLATE_FROM_LAYERS = (2, 3)


def update_estimate_bytes(config, cfg, mesh, rules, seq_len: int, trained_param_bytes: int) -> int:
  """The update's working memory per device on an accelerator with remat and flash attention.

  Per micro-batch row on this device: a [T, D] checkpoint per layer, one layer's recomputed
  working set (attention projections and the MLP's three [T, F] arrays, split over `tensor`),
  and one logits chunk (logits, softmax, gradient in float32); plus the gradients of the model
  being trained and their sum over micro-batches (each as big as its sharded parameters).
  """
  import numpy as np

  from rl import parallel
  from rl.models.transformer import as_dtype

  act = np.dtype(as_dtype(cfg.dtype)).itemsize
  rows = max(1, config.optim.micro_batch_size // parallel.batch_parallel_size(mesh, rules))
  tensor = mesh.shape.get("tensor", 1)
  d, f, t = cfg.hidden_size, cfg.intermediate_size, seq_len
  heads = (cfg.num_heads + 2 * cfg.num_kv_heads) * cfg.dim_per_head
  checkpoints = cfg.num_layers * t * d * act
  layer = t * (4 * d + (2 * heads + 3 * f) // tensor) * act
  logits = 3 * config.model.logits_chunk * (cfg.vocab_size // tensor) * 4
  return int(rows * (checkpoints + layer + logits) + 2 * trained_param_bytes)


def plan(config, mesh, rules, *, hf_config: str = "", seq_len: int = 0, compile_update: bool = True) -> Plan:
  """The memory plan of `config` on `mesh` (abstract arrays only; compiles the update step)."""
  import jax
  import numpy as np

  from rl import parallel
  from rl.models.transformer import as_dtype

  notes = []
  cfg = model_config_for(config, hf_config)
  if cfg.attention == "cudnn":
    cfg = cfg.replace(attention="einsum")
    notes.append("attention cudnn planned as einsum on the CPU: the update scratch is an upper bound")
  _, _, _, state = _abstract_state(config, cfg, mesh, rules)
  needs_ref = config.algo.kl_coef > 0 or config.algo.kl_target > 0
  rows = config.trainer.tasks_per_iteration * config.algo.group_size
  kv_sharding = parallel.kv_cache_sharding(mesh, rules, rows, cfg.num_kv_heads)
  kv_one = jax.ShapeDtypeStruct((rows, cfg.num_kv_heads, config.sampling.max_cache_len, cfg.dim_per_head),
                                as_dtype(cfg.dtype), sharding=kv_sharding)
  scratch = None
  if compile_update:
    t = seq_len or config.agent.max_tokens_per_trajectory
    low, high = EXTRAPOLATE_FROM_LAYERS
    if cfg.num_layers <= high:
      scratch = update_scratch_bytes(config, cfg, mesh, rules, t)
    else:
      a, b = (update_scratch_bytes(config, cfg.replace(num_layers=n), mesh, rules, t) for n in (low, high))
      if a is not None and b is not None:
        scratch = int(b + (b - a) * (cfg.num_layers - high))
        notes.append(f"update scratch compiled at {low} and {high} layers, extrapolated linearly to "
                     f"{cfg.num_layers}")
  t = seq_len or config.agent.max_tokens_per_trajectory
  largest_model = max(parallel.bytes_per_device(state.policy), parallel.bytes_per_device(state.critic))
  estimate = update_estimate_bytes(config, cfg, mesh, rules, t, largest_model)
  uses_estimate = bool(config.model.remat) and config.model.attention == "cudnn"
  if uses_estimate:
    notes.append("the total counts the accelerator estimate of the update (remat, flash attention)")
  return Plan(params=parallel.bytes_per_device((state.policy, state.critic)),
              opt_state=parallel.bytes_per_device((state.policy_opt, state.critic_opt)),
              reference=parallel.bytes_per_device(state.policy) if needs_ref else 0,
              kv_cache=2 * cfg.num_layers * parallel.bytes_per_device(kv_one),
              update_scratch=scratch, update_estimate=estimate, uses_estimate=uses_estimate, devices=int(np.prod(list(mesh.shape.values()))),
              mesh=dict(mesh.shape),
              model_parameters=int(sum(math.prod(x.shape) for x in jax.tree.leaves(state.policy))),
              notes=notes)


def _count(n: int) -> str:
  return f"{n / 1e9:.2f}B" if n >= 1e9 else f"{n / 1e6:.1f}M"


def render(p: Plan, config, device_memory_gb: float, seq_len: int = 0) -> str:
  size = lambda b: f"{b / 1e9:9.2f} GB" if b >= 1e8 else f"{b / 1e6:9.2f} MB"  # noqa: E731
  name = config.model.hf_checkpoint or f"tiny preset {config.model.tiny!r}"
  mesh = " x ".join(f"{k} {v}" for k, v in p.mesh.items())
  rows = config.trainer.tasks_per_iteration * config.algo.group_size
  t = seq_len or config.agent.max_tokens_per_trajectory
  critic = "critic" if config.model.value_head != "shared" else "shared head"
  items = [
      (f"parameters (policy + {critic}, {config.model.param_dtype})", p.params),
      (f"optimizer states ({config.optim.policy_optimizer} policy, adamw critic)", p.opt_state),
      ("reference policy", p.reference),
      (f"KV cache ({rows} rows x {config.sampling.max_cache_len} tokens, {config.model.dtype})", p.kv_cache),
      (f"update, accelerator estimate (micro-batch {config.optim.micro_batch_size} x {t} tokens)",
       p.update_estimate),
  ]
  if p.update_scratch is not None:
    items.append(("update, XLA CPU analysis (upper bound)", p.update_scratch))
  width = max(len(label) for label, _ in items) + 2
  lines = [f"memory plan: {name} ({_count(p.model_parameters)} parameters), {p.devices} devices ({mesh})"]
  lines += [f"  {label:<{width}}{size(value)}" for label, value in items]
  verdict = "fits" if p.total <= device_memory_gb * 1e9 else "DOES NOT FIT"
  lines.append(f"  {'total per device':<{width}}{size(p.total)}  of {device_memory_gb:.0f} GB: {verdict}")
  lines += [f"  note: {n}" for n in p.notes]
  return "\n".join(lines)
