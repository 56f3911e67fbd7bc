r"""Per-device memory of a config's training on a device mesh, planned without allocating anything.

  .venv/bin/python scripts/memory_plan.py --config configs/experiments/qwen_coder_7b.py \
      --mesh 1,8,1 --devices 8 --device-memory-gb 80

Builds the run's train state abstractly (`jax.eval_shape`) with the shardings the trainer gives
it (rl.algo.update.train_state_shardings) on `--devices` fake CPU devices and prints, per device: the
parameters (policy and critic), both optimizer states, the frozen reference, the sampler's KV
cache for one rollout batch (trainer.tasks_per_iteration x algo.group_size rows of
sampling.max_cache_len), and the update step's working memory for one micro-batch of
agent.max_tokens_per_trajectory tokens per row (or `--seq_len`), twice: XLA's memory analysis of
the step compiled for the CPU (deep models: compiled at 2 and 3 layers, extrapolated linearly),
and an estimate of what an accelerator keeps with remat and flash attention (rl.train.memory_plan);
then whether the sum fits `--device_memory_gb`.

The model's shapes come from `<model.hf_checkpoint>/config.json`, or, when that directory is not
on this machine, from configs/model_shapes/<its name>.json (or `--hf_config`). The CPU's
scheduler does not honour remat, and attention "cudnn" is compiled as "einsum", which
materialises its scores: for long rows the compiled figure is an upper bound, and the total
counts the estimate when the config runs with remat and cudnn attention.
`--json` prints the plan as one JSON object.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from absl import app, flags  # noqa: E402
from ml_collections import config_flags  # noqa: E402

from rl import cli  # noqa: E402
from rl.train import memory_plan  # noqa: E402

_DEFAULT_CONFIG = "configs/default.py"
cli.check_config_args(sys.argv, default=_DEFAULT_CONFIG)
_CONFIG = config_flags.DEFINE_config_file("config", _DEFAULT_CONFIG, "Experiment config file.")
_MESH = flags.DEFINE_string("mesh", "", "Mesh shape D,F,T over (data, fsdp, tensor); default the config's.")
_DEVICES = flags.DEFINE_integer("devices", 8, "Devices to plan for (fake CPU devices here).")
_MEMORY = flags.DEFINE_float("device_memory_gb", 80.0, "Memory of one device, GB (1e9 bytes).")
_HF_CONFIG = flags.DEFINE_string("hf_config", "", "A config.json with the model's shapes (overrides the lookup).")
_SEQ_LEN = flags.DEFINE_integer("seq_len", 0, "Tokens per update row (default agent.max_tokens_per_trajectory).")
_JSON = flags.DEFINE_bool("json", False, "Print the plan as JSON.")

def main(argv):
  if len(argv) > 1:
    cli.fail(f"unexpected arguments: {' '.join(argv[1:])}")
  # Fake CPU devices: set before JAX starts (nothing above imported it).
  os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                             f" --xla_force_host_platform_device_count={_DEVICES.value}").strip()
  os.environ["JAX_PLATFORMS"] = "cpu"
  import jax

  from rl import parallel

  config = _CONFIG.value.unlock()
  if _MESH.value:
    config.mesh.shape = tuple(int(s) for s in _MESH.value.split(","))
  from rl import config as config_lib

  with cli.bad_input_exits(FileNotFoundError):
    config_lib.validate(config, num_devices=_DEVICES.value)
    mesh, rules = parallel.mesh_from_config(config, jax.devices()[:_DEVICES.value])
    result = memory_plan.plan(config, mesh, rules, hf_config=_HF_CONFIG.value, seq_len=_SEQ_LEN.value)
  if _JSON.value:
    print(json.dumps({**dataclasses.asdict(result), "total": result.total,
                      "fits": result.total <= _MEMORY.value * 1e9}))
  else:
    print(memory_plan.render(result, config, _MEMORY.value, _SEQ_LEN.value))


if __name__ == "__main__":
  app.run(main, flags_parser=cli.parse_flags)
