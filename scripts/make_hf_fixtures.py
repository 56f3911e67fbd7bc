r"""Regenerates the tiny Hugging Face parity fixtures in tests/fixtures/hf_* (needs PyTorch).

Creates random Qwen2 (tied, qkv bias) and Llama (untied, llama3 rope scaling, sharded
safetensors) checkpoints with transformers, plus their reference logits and greedy continuations,
so the parity tests run without torch. In a separate virtualenv with torch (the project's own
has none):

  python3 -m venv /path/torch-venv && /path/torch-venv/bin/pip install torch \
      --index-url https://download.pytorch.org/whl/cpu transformers==5.23.0 safetensors numpy
  /path/torch-venv/bin/python scripts/make_hf_fixtures.py --out tests/fixtures
"""

import argparse
import os

import numpy as np
import torch
import transformers

VOCAB = 256


def _randomize(model: torch.nn.Module, seed: int) -> None:
  # HF initialises biases and norms to constants; random values make the parity test see them.
  gen = torch.Generator().manual_seed(seed)
  with torch.no_grad():
    for name, p in model.named_parameters():
      scale = 0.5 if "norm" in name else 0.2
      base = 1.0 if "norm" in name else 0.0
      p.copy_(base + scale * torch.randn(p.shape, generator=gen))


def _write(model, out_dir: str, seed: int, **save_kwargs) -> None:
  os.makedirs(out_dir, exist_ok=True)
  model.save_pretrained(out_dir, **save_kwargs)
  rng = np.random.default_rng(seed)
  ids = rng.integers(0, VOCAB, size=(2, 12)).astype(np.int32)
  mask = np.ones_like(ids)
  mask[1, 9:] = 0  # right padding on row 1
  with torch.no_grad():
    logits = model(torch.tensor(ids, dtype=torch.long)).logits.float().numpy()
    masked = model(torch.tensor(ids, dtype=torch.long),
                   attention_mask=torch.tensor(mask, dtype=torch.long)).logits.float().numpy()
    generated = model.generate(torch.tensor(ids[:, :6], dtype=torch.long), do_sample=False,
                               max_new_tokens=8, min_new_tokens=8, eos_token_id=None,
                               pad_token_id=0).numpy()
  np.save(os.path.join(out_dir, "reference_input_ids.npy"), ids)
  np.save(os.path.join(out_dir, "reference_attention_mask.npy"), mask.astype(np.int32))
  np.save(os.path.join(out_dir, "reference_logits.npy"), logits.astype(np.float32))
  np.save(os.path.join(out_dir, "reference_masked_logits.npy"), masked.astype(np.float32))
  np.save(os.path.join(out_dir, "reference_greedy.npy"), generated[:, 6:].astype(np.int32))
  print("wrote", out_dir, sorted(os.listdir(out_dir)))


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests",
                                                    "fixtures"))
  args = parser.parse_args()
  torch.manual_seed(0)
  qwen = transformers.Qwen2Config(
      vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
      num_attention_heads=4, num_key_value_heads=2, rope_theta=1_000_000.0, rms_norm_eps=1e-6,
      tie_word_embeddings=True, max_position_embeddings=128, eos_token_id=2, pad_token_id=0)
  model = transformers.Qwen2ForCausalLM(qwen).float().eval()
  _randomize(model, 1)
  _write(model, os.path.join(args.out, "hf_qwen2"), 1)

  llama = transformers.LlamaConfig(
      vocab_size=VOCAB, hidden_size=48, intermediate_size=96, num_hidden_layers=2,
      num_attention_heads=6, num_key_value_heads=2, head_dim=16, rope_theta=10000.0,
      rms_norm_eps=1e-5, tie_word_embeddings=False, max_position_embeddings=64,
      rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                    "high_freq_factor": 4.0, "original_max_position_embeddings": 16},
      bos_token_id=1, eos_token_id=2, pad_token_id=0)
  model = transformers.LlamaForCausalLM(llama).float().eval()
  _randomize(model, 2)
  _write(model, os.path.join(args.out, "hf_llama"), 2, max_shard_size="40KB")


if __name__ == "__main__":
  main()
