"""Config validation: every mistake is reported before anything is compiled.

`validate(config)` checks that every field of configs/default.py is set, names
against the registries, enumerations, numeric ranges and batch arithmetic, and
raises `ConfigError` naming the field. It is called by `train.py` before any
model is built. The code reads fields directly, with no second default of its
own: a field missing from a config is an error here, at load.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
import os
import re
from pathlib import Path
from typing import Any

import ml_collections

from rl import config_fields, registry
from rl.algo import batching
from rl.algo import losses
from rl.config_fields import ConfigError  # re-exported: the error of every config check


_ENUMS = {
    "model.value_head": ("shared", "separate"),
    "model.attention": ("einsum", "tiled", "xla", "cudnn"),
    "agent.mode": ("multi_turn", "single_turn"),
    "agent.tool_prompt": ("compact", "schema"),
    "algo.kl_in": ("loss", "reward"),
    "algo.discount_per": ("token", "turn"),
    "algo.truncation": ("bootstrap", "terminal"),
    "algo.error_masking": batching.ERROR_MASKING,
    "algo.logprob_support": ("full", "sampler"),
    "tasks.verify_with": ("sandbox", "subprocess"),
    "algo.loss_agg": losses.AGG_MODES,
    "algo.gspo_loss_agg": losses.AGG_MODES,
    "antihack.response": ("fake", "block", "terminate"),
    "optim.schedule": ("constant", "cosine", "linear"),
    "sft.schedule": ("constant", "cosine", "linear"),
    "optim.policy_optimizer": ("adamw", "sgd"),
    "trainer.task_sampling": ("epoch", "replacement"),
    "model.dtype": ("float32", "bfloat16", "float16"),
    "model.param_dtype": ("float32", "bfloat16", "float16"),
}

_REGISTRY_FIELDS = {
    "algo.advantage_estimator": registry.ADVANTAGE_ESTIMATORS,
    "algo.policy_loss": registry.POLICY_LOSSES,
    "algo.value_loss": registry.VALUE_LOSSES,
    "algo.kl_kind": registry.KL_ESTIMATORS,
    "algo.duration_weight": registry.DURATION_WEIGHTS,
    "reward.scheme": registry.REWARD_SCHEMES,
    "antihack.rules": registry.ANTIHACK_RULES,
    "antihack.judge": registry.JUDGES,
    "instrumentation.backend": registry.INSTRUMENTERS,
}

# (field, lower bound, upper bound, lower inclusive)
_RANGES = (
    ("optim.policy_lr", 0.0, math.inf, False),
    ("optim.critic_lr", 0.0, math.inf, False),
    ("optim.grad_clip", 0.0, math.inf, True),
    ("optim.policy_adam_eps", 0.0, math.inf, False),
    ("optim.adam_b2", 0.0, 1.0, True),
    ("optim.ppo_epochs", 1, math.inf, True),
    ("optim.mini_batch_size", 1, math.inf, True),
    ("optim.micro_batch_size", 1, math.inf, True),
    ("algo.gamma", 0.0, 1.0, True),
    ("algo.lam", 0.0, 1.0, True),
    ("algo.value_lam", 0.0, 1.0, True),
    ("algo.clip_low", 0.0, 1.0, True),
    ("algo.clip_high", 0.0, math.inf, True),
    ("algo.gspo_clip_low", 0.0, 1.0, True),
    ("algo.gspo_clip_high", 0.0, math.inf, True),
    ("algo.negative_advantage_scale", 0.0, 1.0, True),
    ("algo.positive_advantage_scale", 0.0, 1.0, True),
    ("sft.ptx_steps", 0, math.inf, True),
    ("trainer.train_eval_samples", 0, math.inf, True),
    ("trainer.pack_fraction", 0.0, 1.0, True),
    ("trainer.compilation_cache_min_s", 0.0, math.inf, True),
    ("algo.group_size", 1, math.inf, True),
    ("algo.entropy_coef", -math.inf, math.inf, True),
    ("algo.kl_coef", 0.0, math.inf, True),
    ("algo.kl_target", 0.0, math.inf, True),
    ("trainer.iterations", 0, math.inf, True),
    ("trainer.tasks_per_iteration", 1, math.inf, True),
    ("agent.max_turns", 1, math.inf, True),
    ("agent.max_tokens_per_turn", 1, math.inf, True),
    ("agent.max_thought_bytes", 0, math.inf, True),
    ("agent.max_live_episodes", 0, math.inf, True),
    ("sandbox.exec_timeout_s", 0.0, math.inf, False),
    ("sandbox.fault_injection.open_failure_rate", 0.0, 1.0, True),
    ("sandbox.fault_injection.exec_failure_rate", 0.0, 1.0, True),
    ("sandbox.fault_injection.grade_failure_rate", 0.0, 1.0, True),
    ("sampling.temperature", 0.0, math.inf, True),
    ("sampling.top_p", 0.0, 1.0, False),
    ("sampling.lanes", 0, math.inf, True),
    ("optim.update_lanes", 0, math.inf, True),
    ("reward.invalid_call_penalty", -math.inf, 0.0, True),
    ("reward.tool_error_penalty", -math.inf, 0.0, True),
    ("sft.expert_explore_prob", 0.0, 1.0, True),
    ("sft.expert_read_prob", -1.0, 1.0, True),
    ("sft.expert_run_prob", 0.0, 1.0, True),
    ("sft.expert_write_prob", 0.0, 1.0, True),
    ("sft.expert_thought_prob", 0.0, 1.0, True),
    ("sft.expert_give_up_prob", 0.0, 1.0, True),
    ("sft.expert_give_up_within", 0, math.inf, True),
    ("sft.expert_mistake_prob", 0.0, 1.0, True),
    ("sft.expert_program_fault_prob", 0.0, 1.0, True),
    ("algo.kl_topk", 0, math.inf, True),
    ("algo.entropy_token_fraction", 0.0, 1.0, False),
)

_GROUP_ESTIMATORS = ("grpo", "drgrpo", "rloo")


def get_field(config: ml_collections.ConfigDict, dotted: str) -> Any:
  node = config
  for part in dotted.split("."):
    if part not in node:
      raise config_fields.missing(dotted)
    node = node[part]
  return node


DEFAULT_CONFIG = Path(__file__).resolve().parents[1] / "configs" / "default.py"


def load_config(spec: str | os.PathLike | None = None) -> ml_collections.ConfigDict:
  """The config of `path/to/config.py[:arg]` (its `get_config(arg)`), or configs/default.py: the
  one loader of experiment files (library modules never import `configs`). The default config is
  also the schema: every field it has is one the code reads (`required_fields`)."""
  path, _, arg = str(spec or DEFAULT_CONFIG).partition(":")
  if not os.path.isfile(path):
    raise FileNotFoundError(f"config file {path!r} does not exist")
  module_spec = importlib.util.spec_from_file_location(f"_config_{Path(path).stem}", path)
  module = importlib.util.module_from_spec(module_spec)
  module_spec.loader.exec_module(module)
  return module.get_config() if spec is None else module.get_config(arg or None)


def required_fields() -> list[str]:
  """Every field of configs/default.py, dotted ("algo.lam"): the fields the code reads."""
  return list(_required_fields())


@functools.lru_cache(maxsize=1)
def _required_fields() -> tuple[str, ...]:
  def leaves(node: ml_collections.ConfigDict, prefix: str):
    for key in node.keys():
      if isinstance(node[key], ml_collections.ConfigDict):
        yield from leaves(node[key], f"{prefix}{key}.")
      else:
        yield f"{prefix}{key}"

  return tuple(sorted(leaves(load_config(), "")))


def validate(config: ml_collections.ConfigDict, *, num_devices: int | None = None,
             num_processes: int | None = None) -> None:
  """Raises ConfigError for the first invalid field (all checks are cheap)."""
  for field in required_fields():
    get_field(config, field)
  for field, choices in _ENUMS.items():
    value = get_field(config, field)
    if value not in choices:
      raise ConfigError(f"config.{field}={value!r} is not one of {list(choices)}")
  for field, lo, hi, lo_inclusive in _RANGES:
    value = get_field(config, field)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(value):
      raise ConfigError(f"config.{field}={value!r} must be a number")
    if value > hi or value < lo or (value == lo and not lo_inclusive):
      bound = f"{'>=' if lo_inclusive else '>'} {lo}" + (f" and <= {hi}" if hi != math.inf else "")
      raise ConfigError(f"config.{field}={value!r} must be {bound}")
  _check_batch_arithmetic(config, num_devices)
  if num_processes is not None:
    check_process_split(config, num_processes)
  if config.sft.carry_optimizer_state and config.optim.policy_optimizer != "adamw":
    raise ConfigError("config.sft.carry_optimizer_state needs optim.policy_optimizer='adamw' (SFT's "
                      f"optimiser), got {config.optim.policy_optimizer!r}")
  if config.algo.kl_target > 0 and not config.algo.kl_coef > 0:
    # The adaptive controller multiplies the coefficient: from 0 it never switches on.
    raise ConfigError(f"config.algo.kl_target={config.algo.kl_target} needs algo.kl_coef > 0 (the starting "
                      f"coefficient the adaptive controller scales), got {config.algo.kl_coef}")
  if config.algo.kl_topk > 0 and config.algo.kl_in != "loss":
    raise ConfigError("config.algo.kl_topk > 0 is a KL in the loss: it needs algo.kl_in='loss', "
                      f"got {config.algo.kl_in!r}")
  if config.algo.logprob_support == "sampler" and config.sampling.top_k <= 0:
    raise ConfigError("config.algo.logprob_support='sampler' needs sampling.top_k > 0 (the size of "
                      f"the support the update renormalises on), got {config.sampling.top_k}")
  if config.agent.constrained_tool_calls and config.agent.mode != "multi_turn":
    raise ConfigError("config.agent.constrained_tool_calls constrains tool calls: it needs "
                      f"agent.mode='multi_turn', got {config.agent.mode!r}")
  try:
    re.compile(config.optim.policy_trainable)
  except re.error as e:
    raise ConfigError(f"config.optim.policy_trainable={config.optim.policy_trainable!r} is not a "
                      f"regular expression: {e}") from None
  if config.optim.policy_trainable and config.sft.carry_optimizer_state:
    raise ConfigError("config.sft.carry_optimizer_state carries SFT's moments of every parameter; it "
                      "cannot be combined with optim.policy_trainable (a frozen subset)")
  import sandbox  # pylint: disable=import-outside-toplevel  # its own backend registry
  if config.sandbox.backend not in sandbox.backend_names():
    raise ConfigError(f"config.sandbox.backend: unknown sandbox backend {config.sandbox.backend!r}; known "
                      f"sandbox backends: {', '.join(sandbox.backend_names())}")
  for field, reg in _REGISTRY_FIELDS.items():
    value = get_field(config, field)
    try:
      reg.get(value)
    except LookupError as e:
      raise ConfigError(f"config.{field}: {e}") from None
  for field in ("sources", "eval_sources"):
    for entry in config.tasks[field]:
      name, weight = (entry, 1.0) if isinstance(entry, str) else entry
      try:
        registry.TASK_SOURCES.get(str(name).partition(":")[0])
      except LookupError as e:
        raise ConfigError(f"config.tasks.{field}: {e}") from None
      if not weight > 0:
        raise ConfigError(f"config.tasks.{field}: weight of {name!r} must be > 0, got {weight}")
  from rl.tasks.synthetic.generator import LIBRARIES  # pylint: disable=import-outside-toplevel
  library = config.tasks.synthetic_library
  if library not in LIBRARIES:
    raise ConfigError(f"config.tasks.synthetic_library={library!r}: unknown; known: {', '.join(LIBRARIES)}")
  if config.tasks.eval_num_synthetic < 0:
    raise ConfigError(f"config.tasks.eval_num_synthetic={config.tasks.eval_num_synthetic} must be >= 0")



def _check_batch_arithmetic(config: ml_collections.ConfigDict, num_devices: int | None) -> None:
  algo, optim, trainer = config.algo, config.optim, config.trainer
  if algo.advantage_estimator in _GROUP_ESTIMATORS and algo.group_size < 2:
    raise ConfigError(
        f"config.algo.group_size={algo.group_size}: estimator {algo.advantage_estimator!r} "
        "compares episodes of the same task and needs group_size >= 2")
  batch = trainer.tasks_per_iteration * algo.group_size
  if batch % optim.mini_batch_size:
    raise ConfigError(
        f"config.optim.mini_batch_size={optim.mini_batch_size} must divide the rollout batch "
        f"trainer.tasks_per_iteration * algo.group_size = {batch}")
  if optim.mini_batch_size % optim.micro_batch_size:
    raise ConfigError(
        f"config.optim.micro_batch_size={optim.micro_batch_size} must divide "
        f"optim.mini_batch_size={optim.mini_batch_size}")
  if len(config.mesh.shape) != len(config.mesh.axes):
    raise ConfigError(f"config.mesh.shape {tuple(config.mesh.shape)} and config.mesh.axes "
                      f"{tuple(config.mesh.axes)} differ in length")
  if sum(1 for s in config.mesh.shape if s == -1) > 1:
    raise ConfigError(f"config.mesh.shape {tuple(config.mesh.shape)}: at most one -1")
  if num_devices is not None:
    known = math.prod(s for s in config.mesh.shape if s != -1)
    if num_devices % known:
      raise ConfigError(f"config.mesh.shape {tuple(config.mesh.shape)} does not fit {num_devices} devices")
    data_parallel = 1
    for axis, size in zip(config.mesh.axes, config.mesh.shape):
      if axis in ("data", "fsdp"):
        data_parallel *= num_devices // known if size == -1 else size
    if optim.micro_batch_size % data_parallel:
      raise ConfigError(
          f"config.optim.micro_batch_size={optim.micro_batch_size} must be divisible by the "
          f"mesh's batch-parallel size {data_parallel} (axes data x fsdp of {tuple(config.mesh.shape)})")


def check_process_split(config: ml_collections.ConfigDict, num_processes: int) -> None:
  """Several processes split each iteration's tasks (each runs whole groups of episodes) and each
  mini-batch's and micro-batch's rows evenly between them."""
  if num_processes <= 1:
    return
  for field in ("trainer.tasks_per_iteration", "optim.mini_batch_size", "optim.micro_batch_size"):
    value = get_field(config, field)
    if value % num_processes:
      raise ConfigError(f"config.{field}={value} must be divisible by the {num_processes} processes: "
                        "each process runs an equal share of the tasks and contributes an equal "
                        "share of every batch's rows")


def to_json(config: ml_collections.ConfigDict) -> str:
  return json.dumps(config.to_dict(), indent=2, sort_keys=True, default=list)
