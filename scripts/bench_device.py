r"""Accelerator benchmark: update-step MFU and sampler tokens/s for a ~0.5B Qwen2 config.

  bash scripts/bench_device.sh            # on a GPU/TPU machine; a few minutes
  python scripts/bench_device.py --num-layers 2 --vocab-size 4096 --batch 2 --seq-len 128 \
      --decode-batch 4 --new-tokens 8      # a CPU smoke run of the same path

Builds a Qwen2.5-0.5B-shaped checkpoint with random weights (no download), then runs
scripts/bench_update.py and scripts/bench_decode.py on it in bfloat16, each against PyTorch and
transformers on the same device in the same run when there is an interpreter with torch (this
one, --torch-python or $RLCODER_TORCH_PYTHON; see --help for how to make one). The update runs once per --update-variants entry (rematerialisation on or off,
einsum or fused attention). MFU counts model FLOPs per token as in PaLM (appendix B): 6 N for the policy
(its tied embedding is also the output layer), 6 N' for the critic (N' = N without the embedding,
which the critic only looks up) and 12 L d T per model for attention, over the chip's dense bf16
peak. Rematerialisation's extra forward pass is not counted.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from torch_compare import TORCH_PYTHON_ENV, TORCH_PYTHON_HELP, has_torch  # noqa: E402  (scripts/)

# The benchmarks below run as child processes (and PyTorch beside JAX): without this each JAX
# process would reserve 75% of the accelerator's memory up front.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

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
  parser.add_argument("--num-layers", type=int, default=QWEN_05B["num_layers"])
  parser.add_argument("--vocab-size", type=int, default=QWEN_05B["vocab_size"])
  parser.add_argument("--repeats", type=int, default=3)
  parser.add_argument("--update-variants", default="",
                      help="comma list of remat|noremat / einsum|xla|cudnn (ModelConfig.remat, "
                           ".attention); default remat/einsum, and on a GPU also noremat/cudnn and "
                           "remat/cudnn (noremat/einsum needs 163 GB at the default shape). "
                           "PyTorch runs beside the first.")
  parser.add_argument("--torch-python", default="",
                      help=TORCH_PYTHON_HELP + "; without any, the PyTorch baselines are left out")
  args = parser.parse_args()
  import jax

  from rl import models as model_lib

  kind = jax.devices()[0].device_kind
  peak = next((v for k, v in PEAK_FLOPS.items() if k.lower() in kind.lower()), None)
  print(f"device: {kind} x {jax.device_count()}; peak bf16 {peak and peak / 1e12:.0f} TFLOP/s per chip")
  with tempfile.TemporaryDirectory() as tmp:
    shape = {**QWEN_05B, "num_layers": args.num_layers, "vocab_size": args.vocab_size}
    config = model_lib.ModelConfig(**shape, dtype="bfloat16", param_dtype="bfloat16")
    model = model_lib.init_model(config, seed=0)
    n_params = config.num_params()
    model_lib.save_hf_checkpoint(model, tmp)
    del model
    print(f"random Qwen2.5-0.5B-shaped checkpoint: {n_params / 1e6:.0f}M parameters, "
          f"{config.num_layers} layers, vocab {config.vocab_size}", flush=True)
    common = ["--hf-checkpoint", tmp, "--dtype", "bfloat16", "--repeats", str(args.repeats)]
    torch_python = args.torch_python or os.environ.get(TORCH_PYTHON_ENV, "") or (sys.executable if has_torch() else "")
    torch_args = ["--compare-transformers", "--torch-python", torch_python] if torch_python else []
    if not torch_python:
      print(f"PyTorch baselines left out: no torch here, no --torch-python, no ${TORCH_PYTHON_ENV}", flush=True)
    variants = args.update_variants.split(",") if args.update_variants else (
        ["remat/einsum"] + (["noremat/cudnn", "remat/cudnn"] if jax.default_backend() == "gpu" else []))
    for i, variant in enumerate(variants):
      remat, attention = variant.split("/")
      update = _run("bench_update.py", *common, *(torch_args if i == 0 else []), "--batch",
                    str(args.batch), "--seq-len", str(args.seq_len), "--attention", attention,
                    *(["--remat"] if remat == "remat" else []))
      match = re.search(r"ours: .* ([\d,]+) tokens/s", update)
      if match and peak:
        tokens_per_s = float(match.group(1).replace(",", ""))
        # PaLM's model FLOPs: attention over all T positions; the policy and the critic (no unembedding).
        flops_per_token = 3 * (config.forward_flops_per_token(args.seq_len)
                               + config.forward_flops_per_token(args.seq_len, unembed=False))
        mfu = flops_per_token * tokens_per_s / (peak * jax.device_count())
        print(f"update MFU ({variant}): {100 * mfu:.1f}% ({tokens_per_s:,.0f} tokens/s, policy + "
              f"critic, {flops_per_token / 1e9:.2f} GFLOP/token)", flush=True)
    _run("bench_decode.py", *common, *torch_args, "--batch", str(args.decode_batch), "--prompt-len", "128",
         "--new-tokens", str(args.new_tokens))


def _run(script: str, *argv: str) -> str:
  """Runs one benchmark script as a child process, echoes its output and returns its stdout."""
  proc = subprocess.run([sys.executable, str(ROOT / "scripts" / script), *argv], capture_output=True,
                        text=True, cwd=ROOT)
  print(f"--- {script} (exit {proc.returncode})\n{proc.stdout[-3000:]}", flush=True)
  if proc.returncode:
    print(proc.stderr[-3000:], flush=True)
  return proc.stdout


if __name__ == "__main__":
  main()
