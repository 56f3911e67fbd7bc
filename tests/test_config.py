"""Configs load, overrides apply, and invalid fields fail early with the field's name."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from configs import default
from rl import config as config_lib
from rl import registry

ROOT = Path(__file__).resolve().parents[1]


def test_registry_lists_known_names_on_unknown():
  reg = registry.Registry("widget")
  reg.register("a", 1)
  reg.register("b")(2)
  assert reg.get("b") == 2
  with pytest.raises(LookupError, match=r"unknown widget 'c'; known widgets: a, b"):
    reg.get("c")
  with pytest.raises(KeyError, match="already registered"):
    reg.register("a", 3)


def test_default_config_is_locked_and_shorthand_overrides():
  c = default.get_config("algo.clip_high=0.28,sft.enabled=false")
  assert c.algo.clip_high == 0.28 and c.sft.enabled is False
  with pytest.raises(AttributeError):
    c.algo.new_field = 1


@pytest.mark.parametrize(
    "field,value,message",
    [
        ("optim.policy_lr", -1e-4, "optim.policy_lr"),
        ("algo.gamma", 1.5, "algo.gamma"),
        ("antihack.response", "ignore", "antihack.response"),
        ("optim.mini_batch_size", 5, "mini_batch_size"),
        ("sandbox.backend", "chroot", "sandbox.backend"),
        ("algo.negative_advantage_scale", 1.5, "algo.negative_advantage_scale"),
        ("algo.positive_advantage_scale", -0.5, "algo.positive_advantage_scale"),
        ("optim.policy_optimizer", "lion", "optim.policy_optimizer"),
        ("algo.logprob_support", "nucleus", "algo.logprob_support"),
        ("sft.schedule", "step", "sft.schedule"),
        ("sft.expert_give_up_prob", 1.5, "sft.expert_give_up_prob"),
        ("tasks.synthetic_library", "stdlib", "tasks.synthetic_library"),
        ("tasks.eval_num_synthetic", -1, "tasks.eval_num_synthetic"),
        ("tasks.eval_sources", (("nowhere", 1.0),), "tasks.eval_sources"),
    ],
)
def test_invalid_fields_are_named(field, value, message):
  c = default.get_config().unlock()
  section, leaf = field.split(".")
  c[section][leaf] = value
  with pytest.raises(config_lib.ConfigError, match=message):
    config_lib.validate(c)


def test_topk_kl_is_a_loss_term():
  c = default.get_config().unlock()
  c.algo.kl_coef, c.algo.kl_topk, c.algo.kl_in = 0.1, 16, "reward"
  with pytest.raises(config_lib.ConfigError, match="kl_in='loss'"):
    config_lib.validate(c)
  c.algo.kl_in = "loss"
  config_lib.validate(c)


def test_sampler_support_needs_a_top_k():
  c = default.get_config().unlock()
  c.algo.logprob_support = "sampler"
  with pytest.raises(config_lib.ConfigError, match="sampling.top_k > 0"):
    config_lib.validate(c)
  c.sampling.top_k = 16
  config_lib.validate(c)


def test_group_estimator_needs_groups_and_mesh_must_divide_batch():
  c = default.get_config().unlock()
  c.algo.advantage_estimator = "grpo"
  c.algo.group_size = 1
  if "grpo" in registry.ADVANTAGE_ESTIMATORS:
    with pytest.raises(config_lib.ConfigError, match="group_size"):
      config_lib.validate(c)
  c = default.get_config().unlock()
  c.optim.micro_batch_size = 2
  c.optim.mini_batch_size = 2
  with pytest.raises(config_lib.ConfigError, match="batch-parallel"):
    config_lib.validate(c, num_devices=8)


def test_several_processes_split_tasks_and_rows_evenly():
  c = default.get_config().unlock()  # 48 tasks, mini-batches of 12 rows, micro-batches of 1
  with pytest.raises(config_lib.ConfigError, match="micro_batch_size=1 must be divisible by the 2 processes"):
    config_lib.validate(c, num_processes=2)
  c.optim.micro_batch_size = 4
  config_lib.validate(c, num_processes=2)
  config_lib.validate(c, num_processes=4)
  with pytest.raises(config_lib.ConfigError, match="micro_batch_size=4 must be divisible by the 3 processes"):
    config_lib.validate(c, num_processes=3)
  with pytest.raises(config_lib.ConfigError, match="mini_batch_size=12 must be divisible by the 8 processes"):
    config_lib.validate(c, num_processes=8)
  c.trainer.tasks_per_iteration = 36
  with pytest.raises(config_lib.ConfigError, match="tasks_per_iteration=36 must be divisible by the 8"):
    config_lib.validate(c, num_processes=8)


def test_train_py_rejects_bad_override_before_compiling(tmp_path):
  proc = subprocess.run(
      [sys.executable, "train.py", "--config", "configs/default.py", "--workdir", str(tmp_path / "run"),
       "--config.optim.policy_lr=-1.0"],
      cwd=ROOT, capture_output=True, text=True, timeout=120)
  assert proc.returncode != 0
  assert "optim.policy_lr" in proc.stderr
  assert not (tmp_path / "run" / "checkpoints").exists()


@pytest.mark.parametrize("path", sorted(str(p.relative_to(ROOT)) for p in (ROOT / "configs").rglob("*.py")
                                        if p.name not in ("__init__.py",)))
def test_every_config_file_loads_and_validates(path):
  import importlib

  module = importlib.import_module(path[:-3].replace("/", "."))
  config = module.get_config()
  config_lib.validate(config)


def test_carrying_sft_moments_needs_adamw():
  c = default.get_config().unlock()
  c.sft.carry_optimizer_state = True
  config_lib.validate(c)  # AdamW on both sides: fine
  c.optim.policy_optimizer = "sgd"
  with pytest.raises(config_lib.ConfigError, match="carry_optimizer_state"):
    config_lib.validate(c)


def test_adaptive_kl_needs_a_coefficient_to_adapt():
  """kl_target > 0 scales kl_coef multiplicatively: from 0 it could never switch on."""
  c = default.get_config().unlock()
  c.algo.kl_target = 0.05
  with pytest.raises(config_lib.ConfigError, match=r"^config.algo.kl_target=0.05 needs algo.kl_coef > 0"):
    config_lib.validate(c)
  c.algo.kl_coef = 0.01
  config_lib.validate(c)


@pytest.mark.parametrize("field", ["algo.lam", "algo.whiten_advantages", "trainer.pack_fraction", "tasks.verify_with",
                                   "reward.turn_reward_min", "antihack.judge_max_section_chars",
                                   "instrumentation.llm_timeout_s", "agent.max_live_episodes"])
def test_a_missing_field_is_one_error_naming_it(field):
  """The code reads every field directly (no second default in rl/): a config without one of
  configs/default.py's fields fails at validation, in one line naming the field."""
  c = default.get_config().unlock()
  section, leaf = field.split(".")
  del c[section][leaf]
  with pytest.raises(config_lib.ConfigError, match=rf"^config\.{field} is missing") as e:
    config_lib.validate(c)
  assert "\n" not in str(e.value)
