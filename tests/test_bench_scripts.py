"""Smoke runs of the speed benchmarks on the unit-test model: they run, and their roofline lines
count the model FLOPs of ModelConfig.forward_flops_per_token (no PyTorch side here)."""

import os
import re
import subprocess
import sys

import pytest

from rl.models import tiny_config

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(script: str, *args: str) -> str:
  env = {**os.environ, "RLCODER_TORCH_PYTHON": ""}
  proc = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", script), "--preset", "test",
                         "--repeats", "1", "--roofline", *args], capture_output=True, text=True,
                        env=env, cwd=ROOT, timeout=600)
  assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
  return proc.stdout


def _gflop(out: str) -> float:
  match = re.search(r"roofline: ([\d.]+) GFLOP per", out)
  assert match, out
  return float(match.group(1))


@pytest.mark.slow
def test_bench_update_roofline_counts_policy_and_critic():
  out = _run("bench_update.py", "--batch", "2", "--seq-len", "64")
  config = tiny_config("test")
  context = (64 + 1) / 2
  expected = 3 * 2 * 64 * (config.forward_flops_per_token(context)
                           + config.forward_flops_per_token(context, unembed=False))
  assert _gflop(out) == pytest.approx(expected / 1e9, abs=0.06), out
  assert re.search(r"ours: [\d.]+ GFLOP/s = \d+% of its product's [\d.]+ GFLOP/s", out), out


@pytest.mark.slow
def test_bench_decode_roofline_counts_prompt_and_generated_tokens():
  out = _run("bench_decode.py", "--batch", "4", "--prompt-len", "8", "--new-tokens", "8")
  config = tiny_config("test")
  expected = 4 * (8 * config.forward_flops_per_token(4.5, unembed=False)
                  + 8 * config.forward_flops_per_token(8 + 4.5))
  assert _gflop(out) == pytest.approx(expected / 1e9, abs=0.06), out
  assert re.search(r"ours: [\d.]+ GFLOP/s = \d+% of its product's", out), out
