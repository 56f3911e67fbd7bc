r"""Ablation: rules plus the stage-2 LLM judge (needs a judge backend).

An OpenAI-compatible server with a frozen model (vLLM, SGLang), e.g.

  .venv/bin/python train.py --config configs/ablations/judge_on.py --workdir runs/judge_on \
      --config.antihack.judge_base_url=http://127.0.0.1:8000/v1 \
      --config.antihack.judge_model=Qwen/Qwen2.5-7B-Instruct

or a local Hugging Face checkpoint scored through our own model code:

  ... --config.antihack.judge=local --config.antihack.judge_checkpoint=/path/to/checkpoint
"""

from configs import default


def get_config(arg=None):
  c = default.get_config(arg).unlock()
  c.antihack.rules = "default"
  c.antihack.judge = "openai"
  c.antihack.judge_base_url = "http://127.0.0.1:8000/v1"
  c.antihack.judge_model = "judge"
  return c.lock()
