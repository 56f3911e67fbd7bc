r"""PPO + critic on a 7B-class checkpoint: Qwen2.5-Coder-7B-Instruct on 8 x 80 GB accelerators.

The 1.5B experiment (qwen_coder_1p5b.py) with the 7B checkpoint, its weights and both AdamW
states sharded over the `fsdp` axis of all devices. Plan its per-device memory first, without
any accelerator or download:

  .venv/bin/python scripts/memory_plan.py --config configs/experiments/qwen_coder_7b.py \
      --mesh 1,8,1 --devices 8 --device-memory-gb 80

then train as the 1.5B experiment says, with this config and the 7B checkpoint's directory:

  .venv/bin/python train.py --config configs/experiments/qwen_coder_7b.py:/models/Qwen2.5-Coder-7B-Instruct \
      --workdir runs/qwen7b
"""

from configs.experiments import qwen_coder_1p5b


def get_config(arg=None):
  c = qwen_coder_1p5b.get_config(arg or "/models/Qwen2.5-Coder-7B-Instruct").unlock()
  c.trainer.tasks_per_iteration = 32  # 32 rollouts of up to 16k tokens: the KV cache is ~8 GB per device
  c.optim.mini_batch_size = 16
  c.optim.micro_batch_size = 8  # one 16k-token row per device and micro-batch on 8 devices
  return c.lock()
