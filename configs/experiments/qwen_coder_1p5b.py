r"""PPO + critic on a real checkpoint: Qwen2.5-Coder-1.5B-Instruct on accelerators.

Download the checkpoint to a local directory first (nothing is fetched at run time), build
the Docker sandbox image (scripts/build_sandbox_image.py), then:

  .venv/bin/python train.py --config configs/experiments/qwen_coder_1p5b.py:/models/Qwen2.5-Coder-1.5B-Instruct \
      --workdir runs/qwen15b

The argument after ":" is the checkpoint directory. The mesh puts the batch over
(data, fsdp) and shards weights over fsdp; adjust `mesh.shape` to the slice.
"""

from configs import default


def get_config(arg=None):
  c = default.get_config().unlock()
  c.model.hf_checkpoint = arg or "/models/Qwen2.5-Coder-1.5B-Instruct"
  c.init_from = ""  # the checkpoint above is the model (the default's tiny base does not fit it)
  c.model.dtype = "bfloat16"
  c.model.param_dtype = "float32"
  c.model.remat = True
  c.model.attention = "cudnn"  # fused flash attention on NVIDIA GPUs; "xla" on TPU
  c.model.logits_chunk = 512
  c.model.value_head = "separate"
  c.mesh.shape = (1, -1, 1)
  c.sampling.max_cache_len = 16384
  c.sampling.temperature = 1.0
  c.sandbox.backend = "docker"
  c.sandbox.pool_size = 32
  c.sandbox.max_concurrency = 32
  c.agent.max_turns = 30
  c.agent.max_tokens_per_turn = 1024
  c.agent.max_tokens_per_trajectory = 16384
  c.agent.observation_max_chars = 8192
  c.agent.num_workers = 32
  c.tasks.num_synthetic = 2000
  c.trainer.iterations = 500
  c.trainer.tasks_per_iteration = 64
  c.trainer.eval_every = 25
  c.trainer.checkpoint_every = 25
  c.trainer.pad_multiple = 1024
  c.optim.policy_lr = 1e-6
  c.optim.critic_lr = 5e-6
  c.optim.schedule = "cosine"
  c.optim.warmup_steps = 10
  c.optim.mini_batch_size = 16
  c.optim.micro_batch_size = 8  # divisible by the batch-parallel device count
  c.optim.critic_warmup_iterations = 5
  c.algo.kl_coef = 0.001
  c.algo.entropy_coef = 0.0
  c.algo.clip_high = 0.28
  c.sft.enabled = False
  c.antihack.judge = "none"  # set "openai" with judge_base_url/judge_model for stage 2
  return c.lock()
