r"""Benchmark: jitted carry-forward GAE against a NumPy reverse loop over T.

The NumPy baseline is vectorised over the batch and loops over tokens, the way the
PyTorch RL frameworks compute GAE. Timings are interleaved (baseline and candidates take
turns) so load from other processes hits all of them alike; medians are printed.

  .venv/bin/python scripts/bench_gae.py                 # B=64, T in {1024, 8192, 32768}
  .venv/bin/python scripts/bench_gae.py --lengths 1024 --repeats 5 --impls chunked,associative
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from rl.algo import advantages  # noqa: E402


def numpy_gae(rewards: np.ndarray, values: np.ndarray, mask: np.ndarray, gamma: float,
              lam: float) -> tuple[np.ndarray, np.ndarray]:
  """Carry-forward GAE as the PyTorch frameworks write it: a Python loop over T."""
  batch, length = rewards.shape
  next_value = np.zeros(batch, np.float32)
  running = np.zeros(batch, np.float32)
  out = np.empty((batch, length), np.float32)
  for t in range(length - 1, -1, -1):
    m = mask[:, t]
    delta = rewards[:, t] + gamma * next_value - values[:, t]
    candidate = delta + gamma * lam * running
    next_value = values[:, t] * m + (1.0 - m) * next_value
    running = candidate * m + (1.0 - m) * running
    out[:, t] = running
  return out, out + values


def make_batch(batch: int, length: int, seed: int = 0):
  """Multi-turn shaped data: action spans separated by observation spans, right padding."""
  rng = np.random.default_rng(seed)
  mask = np.zeros((batch, length), np.float32)
  for b in range(batch):
    t = int(rng.integers(length // 16 + 1))  # prompt
    end = length - int(rng.integers(length // 8 + 1))  # padding
    while t < end:
      span = int(rng.integers(1, 256))
      mask[b, t:min(t + span, end)] = 1.0
      t += span + int(rng.integers(1, 256))  # observation
  rewards = np.zeros((batch, length), np.float32)
  rewards[np.arange(batch), length - 1 - np.argmax(mask[:, ::-1], axis=1)] = rng.random(batch)
  values = rng.normal(size=(batch, length)).astype(np.float32)
  return rewards, values, mask


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--batch", type=int, default=64)
  parser.add_argument("--lengths", default="1024,8192,32768")
  parser.add_argument("--impls", default="chunked,associative",
                      help="comma list of rl.algo.advantages.GAE_IMPLEMENTATIONS")
  parser.add_argument("--repeats", type=int, default=7, help="timed runs of each jitted candidate")
  parser.add_argument("--loop_repeats", type=int, default=3, help="timed runs of the NumPy loop")
  parser.add_argument("--gamma", type=float, default=1.0)
  parser.add_argument("--lam", type=float, default=0.95)
  args = parser.parse_args()
  impls = [s for s in args.impls.split(",") if s]

  print(f"jax {jax.__version__} on {jax.devices()[0].platform}, B={args.batch}, "
        f"gamma={args.gamma}, lam={args.lam}; median seconds (interleaved runs)")
  print(f"{'T':>7} {'candidate':>12} {'jax_s':>10} {'numpy_s':>10} {'speedup':>8} {'max_err':>9} "
        f"{'compile_s':>9}")
  for length in (int(s) for s in args.lengths.split(",")):
    rewards, values, mask = make_batch(args.batch, length)
    device_args = tuple(jnp.asarray(x) for x in (rewards, values, mask))
    reference, _ = numpy_gae(rewards, values, mask, args.gamma, args.lam)

    def candidate(impl):
      return lambda: advantages.gae(*device_args, gamma=args.gamma, lam=args.lam,
                                    implementation=impl)

    runs = {impl: candidate(impl) for impl in impls}
    compile_s, errors = {}, {}
    for impl, fn in runs.items():
      start = time.perf_counter()
      out, _ = jax.block_until_ready(fn())
      compile_s[impl] = time.perf_counter() - start
      errors[impl] = float(np.max(np.abs(np.asarray(out) - reference)))
    times = {impl: [] for impl in impls}
    loop_times = []
    for i in range(max(args.repeats, args.loop_repeats)):
      if i < args.loop_repeats:
        start = time.perf_counter()
        numpy_gae(rewards, values, mask, args.gamma, args.lam)
        loop_times.append(time.perf_counter() - start)
      if i < args.repeats:
        for impl, fn in runs.items():
          start = time.perf_counter()
          jax.block_until_ready(fn())
          times[impl].append(time.perf_counter() - start)
    loop_median = statistics.median(loop_times)
    for impl in impls:
      median = statistics.median(times[impl])
      print(f"{length:>7} {impl:>12} {median:>10.4f} {loop_median:>10.4f} "
            f"{loop_median / median:>7.1f}x {errors[impl]:>9.2e} {compile_s[impl]:>9.2f}", flush=True)


if __name__ == "__main__":
  main()
