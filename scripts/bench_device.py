r"""Accelerator benchmark: update-step MFU and sampler tokens/s for a ~0.5B Qwen2 config.

  bash scripts/bench_device.sh            # on a GPU/TPU machine; a few minutes

Builds a Qwen2.5-0.5B-shaped checkpoint with random weights (no download), then runs
scripts/bench_update.py and scripts/bench_decode.py on it and prints MFU from the measured
update tokens/s: MFU = 6 * N * tokens/s / peak FLOP/s (N = parameters; attention FLOPs are
left out, so this slightly understates utilisation).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Dense bf16 peak FLOP/s per chip, by the device kind JAX reports.
PEAK_FLOPS = {"H200": 989e12, "H100": 989e12, "A100": 312e12, "L4": 121e12, "TPU v5 lite": 197e12,
              "TPU v5p": 459e12, "TPU v4": 275e12, "cpu": 1e12}

QWEN_05B = dict(vocab_size=151936, hidden_size=896, num_layers=24, num_heads=14, num_kv_heads=2,
                intermediate_size=4864, rope_theta=1_000_000.0, tie_word_embeddings=True, qkv_bias=True)


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--batch", type=int, default=8)
  parser.add_argument("--seq-len", type=int, default=2048)
  parser.add_argument("--decode-batch", type=int, default=64)
  parser.add_argument("--new-tokens", type=int, default=256)
  args = parser.parse_args()
  import jax

  from rl import model as model_lib

  kind = jax.devices()[0].device_kind
  peak = next((v for k, v in PEAK_FLOPS.items() if k.lower() in kind.lower()), None)
  print(f"device: {kind} x {jax.device_count()}; peak bf16 {peak and peak / 1e12:.0f} TFLOP/s per chip")
  with tempfile.TemporaryDirectory() as tmp:
    config = model_lib.ModelConfig(**QWEN_05B, dtype="bfloat16", remat=True)
    model = model_lib.init_model(config, seed=0)
    n_params = config.num_params()
    model_lib.save_hf_checkpoint(model, tmp)
    del model
    print(f"random Qwen2.5-0.5B-shaped checkpoint: {n_params / 1e6:.0f}M parameters")
    update = subprocess.run([sys.executable, str(ROOT / "scripts/bench_update.py"), "--hf-checkpoint", tmp,
                             "--batch", str(args.batch), "--seq-len", str(args.seq_len), "--remat"],
                            capture_output=True, text=True, cwd=ROOT)
    print(update.stdout[-3000:], update.stderr[-2000:] if update.returncode else "")
    match = re.search(r"([\d,]+) tokens/s", update.stdout)
    if match and peak:
      tokens_per_s = float(match.group(1).replace(",", ""))
      # Policy + critic: two models of N parameters each, forward and backward (6 N per token).
      mfu = 2 * 6 * n_params * tokens_per_s / (peak * jax.device_count())
      print(f"update MFU: {100 * mfu:.1f}% ({tokens_per_s:,.0f} tokens/s, policy + critic)")
    decode = subprocess.run([sys.executable, str(ROOT / "scripts/bench_decode.py"), "--hf-checkpoint", tmp,
                             "--batch", str(args.decode_batch), "--prompt-len", "128",
                             "--new-tokens", str(args.new_tokens)], capture_output=True, text=True, cwd=ROOT)
    print(decode.stdout[-3000:], decode.stderr[-2000:] if decode.returncode else "")


if __name__ == "__main__":
  main()
