"""Decode throughput of rl.env.sampling.Sampler, against transformers' generate in the same run.

  .venv/bin/python scripts/bench_decode.py --batch 64 --prompt-len 64 --new-tokens 128 \
      --compare-transformers --multi-turn

Without --hf-checkpoint the tiny preset (~4M parameters, random weights) is used and exported to a
temporary Hugging Face directory for transformers. PyTorch runs in a subprocess: the current
interpreter if it has torch, else --torch-python, else $RLCODER_TORCH_PYTHON (make one with
`python3 -m venv /path/torch-venv && /path/torch-venv/bin/pip install torch --index-url
https://download.pytorch.org/whl/cpu transformers`). Every row decodes exactly --new-tokens
tokens (no stop ids), sampling at temperature 1. Medians over --repeats timed runs after a
warm-up (compile) run; with --compare-transformers the two sides alternate for --rounds rounds
and the speed-up is the median of the rounds' ratios (the machine's load moves between rounds).
With --multi-turn as well, the turns are also timed against transformers' generate continuing
from its own cache each turn (a `DynamicCache` kept across turns), alternating the same way.

--roofline also times one float product of a decode step's most common shape ([B, d] x [d, f], the
MLP's) on each side and prints each side's single-turn FLOP rate (model FLOPs from
ModelConfig.forward_flops_per_token: the prompts' forward pass, then every generated token's with
the unembedding) against that product's rate.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile

import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repo root: rl

from torch_compare import (TORCH_PYTHON_HELP, alternate_rounds, jax_side, median_time, print_result,
                           print_roofline, print_rounds, resolve_torch_python, run_worker, torch_device,
                           torch_side, torch_sync)


def _torch_worker(args: argparse.Namespace) -> None:
  """Runs in an interpreter with torch: times transformers' generate, prints one JSON line."""
  import numpy as np
  import torch
  import transformers

  torch.manual_seed(0)
  device = torch_device()
  model = transformers.AutoModelForCausalLM.from_pretrained(
      args.hf_checkpoint, dtype=getattr(torch, args.dtype)).to(device).eval()
  rng = np.random.default_rng(0)
  vocab = model.config.vocab_size
  results = {}
  with torch.inference_mode():
    ids = torch.tensor(rng.integers(3, vocab, size=(args.batch, args.prompt_len)), dtype=torch.long,
                       device=device)

    def generate():
      return model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=True, top_k=0,
                            top_p=1.0, temperature=1.0, max_new_tokens=args.new_tokens,
                            min_new_tokens=args.new_tokens, eos_token_id=None, pad_token_id=0)

    if args.measure == "single":
      assert generate().shape[1] == args.prompt_len + args.new_tokens
      results["single_s"] = median_time(generate, args.repeats, ready=torch_sync)
      if args.roofline:
        config = model.config
        a, w = (torch.randn(shape, dtype=getattr(torch, args.dtype), device=device)
                for shape in ((args.batch, config.hidden_size), (config.hidden_size, config.intermediate_size)))
        results["product_s"] = median_time(lambda: a @ w, 200, ready=torch_sync)
    else:  # turns of generation with observations between, the cache kept across turns
      observations = [torch.tensor(o, dtype=torch.long, device=device)
                      for o in _observations(rng, args, vocab)]

      def multi_turn():
        cache, history = transformers.DynamicCache(), ids
        for observation in observations:
          # generate feeds only what the cache does not hold: the last sampled token and the
          # observation (the same work as our sampler's turn).
          out = model.generate(history, attention_mask=torch.ones_like(history), past_key_values=cache,
                               do_sample=True, top_k=0, top_p=1.0, temperature=1.0,
                               max_new_tokens=args.turn_tokens, min_new_tokens=args.turn_tokens,
                               eos_token_id=None, pad_token_id=0)
          history = torch.cat([out, observation], dim=1)
        return history

      expected = args.prompt_len + args.turns * (args.turn_tokens + args.obs_tokens)
      assert multi_turn().shape[1] == expected
      results["multi_turn_s"] = median_time(multi_turn, args.repeats, ready=torch_sync)
  results["torch_threads"] = torch.get_num_threads()
  results["torch_device"] = str(device)
  print_result(results)


def _observations(rng, args: argparse.Namespace, vocab: int) -> list:
  """The multi-turn benchmark's observations: per turn, [batch, obs_tokens] token ids."""
  return [rng.integers(3, vocab, size=(args.batch, args.obs_tokens)).tolist() for _ in range(args.turns)]


def _run_torch(args: argparse.Namespace, checkpoint: str, measure: str = "single") -> dict | None:
  return run_worker(__file__, ["--hf-checkpoint", checkpoint, "--batch", str(args.batch), "--prompt-len",
                               str(args.prompt_len), "--new-tokens", str(args.new_tokens), "--repeats",
                               str(args.repeats), "--dtype", args.dtype, "--measure", measure,
                               "--turns", str(args.turns), "--turn-tokens", str(args.turn_tokens),
                               "--obs-tokens", str(args.obs_tokens),
                               *(["--roofline"] if args.roofline else [])], args.torch_python,
                    "transformers")


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--hf-checkpoint", default="")
  parser.add_argument("--preset", default="tiny")
  parser.add_argument("--batch", type=int, default=64)
  parser.add_argument("--prompt-len", type=int, default=64)
  parser.add_argument("--new-tokens", type=int, default=128)
  parser.add_argument("--repeats", type=int, default=3)
  parser.add_argument("--rounds", type=int, default=3,
                      help="with --compare-transformers: rounds of (ours, transformers), alternating")
  parser.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"),
                      help="parameters and activations, both sides")
  parser.add_argument("--compare-transformers", action="store_true")
  parser.add_argument("--torch-python", default="", help=TORCH_PYTHON_HELP)
  parser.add_argument("--multi-turn", action="store_true",
                      help="also time turns of generation with observations in between, with "
                           "the conversation cache against re-prefilling the history each turn")
  parser.add_argument("--ragged", action="store_true",
                      help="also time multi-turn rollouts whose observations are skewed like tool "
                           "outputs (most short, a few long), with ragged prefill against one "
                           "batch-wide chunk per turn")
  parser.add_argument("--roofline", action="store_true",
                      help="also time a decode step's MLP product on each side and print FLOP rates")
  parser.add_argument("--turns", type=int, default=10)
  parser.add_argument("--turn-tokens", type=int, default=32)
  parser.add_argument("--obs-tokens", type=int, default=32)
  parser.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
  parser.add_argument("--measure", default="single", choices=("single", "multi-turn"),
                      help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.torch_worker:
    _torch_worker(args)
    return
  if args.compare_transformers:  # no interpreter with torch: say so now, not after the JAX side
    args.torch_python = resolve_torch_python(args.torch_python)

  import jax
  import numpy as np

  from rl.models import init_model, load_hf_checkpoint, save_hf_checkpoint, tiny_config
  from rl.env.sampling import Sampler

  tmp = tempfile.TemporaryDirectory()
  if args.hf_checkpoint:
    model = load_hf_checkpoint(args.hf_checkpoint, args.dtype)
    checkpoint = args.hf_checkpoint
  else:
    model = init_model(tiny_config(args.preset, dtype=args.dtype, param_dtype=args.dtype), seed=0)
    checkpoint = tmp.name
    save_hf_checkpoint(model, checkpoint)
  config = model.config
  rng = np.random.default_rng(0)
  prompts = rng.integers(3, config.vocab_size, size=(args.batch, args.prompt_len)).tolist()
  sampler = Sampler(model, max_cache_len=args.prompt_len + args.new_tokens)
  print(f"model: {args.hf_checkpoint or args.preset} ({config.num_params() / 1e6:.1f}M params, "
        f"vocab {config.vocab_size}, {args.dtype} on both sides); {jax_side()}; sampler lanes "
        f"{sampler.lanes_for(args.batch)} (rl.lanes)")
  calls = iter(range(10**6))

  def ours():
    out = sampler.sample(prompts, max_new_tokens=args.new_tokens,
                         rng=jax.random.key(next(calls)))
    assert all(len(t) == args.new_tokens for t in out.tokens)

  generated = args.batch * args.new_tokens
  if args.compare_transformers:
    ours_all, torch_all = alternate_rounds(lambda: median_time(ours, args.repeats),
                                           lambda: _run_torch(args, checkpoint), args.rounds)
    ours_s = statistics.median(ours_all)
  else:
    ours_s = median_time(ours, args.repeats)
  print(f"ours: batch {args.batch} prompt {args.prompt_len} new {args.new_tokens}: "
        f"{ours_s:.3f} s median, {generated / ours_s:,.0f} tokens/s")
  if args.compare_transformers and torch_all:
    torch_s = statistics.median(r["single_s"] for r in torch_all)
    print(f"transformers generate ({torch_side(torch_all[0])}): "
          f"{torch_s:.3f} s median, {generated / torch_s:,.0f} tokens/s")
    print_rounds("transformers", ours_all, [r["single_s"] for r in torch_all])
  if args.roofline:
    _print_roofline(args, config, ours_s, torch_all if args.compare_transformers else [])

  if args.multi_turn:
    capacity = args.prompt_len + args.turns * (args.turn_tokens + args.obs_tokens) + 8
    turn_sampler = Sampler(model, max_cache_len=capacity)
    observations = _observations(rng, args, config.vocab_size)

    def multi_turn():
      conv = turn_sampler.new_conversations(args.batch)
      new = prompts
      for turn in range(args.turns):
        turn_sampler.generate(conv, new, max_new_tokens=args.turn_tokens,
                              rng=jax.random.key(turn))
        new = observations[turn]

    def re_prefill():
      history = [list(p) for p in prompts]
      for turn in range(args.turns):
        out = turn_sampler.sample(history, max_new_tokens=args.turn_tokens,
                                  rng=jax.random.key(turn))
        history = [h + t + o for h, t, o in zip(history, out.tokens, observations[turn])]

    if args.compare_transformers:
      cached_all, torch_turns = alternate_rounds(lambda: median_time(multi_turn, args.repeats),
                                                 lambda: _run_torch(args, checkpoint, "multi-turn"),
                                                 args.rounds)
      cached_s = statistics.median(cached_all)
    else:
      cached_s = median_time(multi_turn, args.repeats)
    prefill_s = median_time(re_prefill, args.repeats)
    tokens = args.batch * args.turns * args.turn_tokens
    print(f"multi-turn ({args.turns} turns x {args.turn_tokens} new, {args.obs_tokens} observation "
          f"tokens between): cache {cached_s:.3f} s ({tokens / cached_s:,.0f} tokens/s), "
          f"re-prefill {prefill_s:.3f} s ({tokens / prefill_s:,.0f} tokens/s), "
          f"speed-up {prefill_s / cached_s:.2f}x")
    if args.compare_transformers and torch_turns:
      torch_s = statistics.median(r["multi_turn_s"] for r in torch_turns)
      print(f"multi-turn, transformers generate with its cache kept across turns "
            f"({torch_side(torch_turns[0])}): {torch_s:.3f} s median ({tokens / torch_s:,.0f} tokens/s)")
      print_rounds("transformers (multi-turn)", cached_all, [r["multi_turn_s"] for r in torch_turns])

  if args.ragged:
    # Observation lengths drawn like the default experiment's tool outputs (p50 ~30, p90 ~65,
    # a long file or test log in one row of ten, up to 400 tokens).
    short = rng.integers(10, 60, size=(args.turns, args.batch))
    long = rng.integers(150, 400, size=(args.turns, args.batch))
    lengths = np.where(rng.random((args.turns, args.batch)) < 0.1, long, short)
    observations = [[rng.integers(3, config.vocab_size, size=int(n)).tolist() for n in row]
                    for row in lengths]
    capacity = args.prompt_len + args.turns * (args.turn_tokens + 400) + 8
    timings = {}
    for ragged in (False, True):
      ragged_sampler = Sampler(model, max_cache_len=capacity, ragged_prefill=ragged)

      def skewed(ragged_sampler=ragged_sampler):
        conv = ragged_sampler.new_conversations(args.batch)
        new = prompts
        for turn in range(args.turns):
          ragged_sampler.generate(conv, new, max_new_tokens=args.turn_tokens, rng=jax.random.key(turn))
          new = observations[turn]

      timings[ragged] = median_time(skewed, args.repeats)
    tokens = args.batch * args.turns * args.turn_tokens
    print(f"skewed observations ({args.turns} turns x {args.turn_tokens} new; observation tokens "
          f"p50 {np.percentile(lengths, 50):.0f}, p90 {np.percentile(lengths, 90):.0f}, max "
          f"{lengths.max()}): one chunk {timings[False]:.3f} s, ragged prefill {timings[True]:.3f} s "
          f"({tokens / timings[True]:,.0f} tokens/s), speed-up {timings[False] / timings[True]:.2f}x")
  tmp.cleanup()


def _print_roofline(args: argparse.Namespace, config, ours_s: float, torch_all: list[dict]) -> None:
  """Each side's single-turn FLOP rate against the rate of a decode step's MLP product."""
  import jax
  import jax.numpy as jnp

  b, d, f = args.batch, config.hidden_size, config.intermediate_size
  a, w = jnp.ones((b, d), args.dtype), jnp.ones((d, f), args.dtype)
  product = jax.jit(jnp.dot)
  product_s = median_time(lambda: product(a, w), 200, ready=jax.block_until_ready)
  p, n = args.prompt_len, args.new_tokens
  # The prompt's causal forward pass (logits at its last position only), then n tokens with the
  # unembedding, the i-th attending over p + i positions (the mean over i is exact: linear).
  flops = b * (p * config.forward_flops_per_token((p + 1) / 2, unembed=False)
               + n * config.forward_flops_per_token(p + (n + 1) / 2))
  sides = [("ours", ours_s, product_s)]
  if torch_all and "product_s" in torch_all[0]:
    sides.append(("transformers", statistics.median(r["single_s"] for r in torch_all),
                  statistics.median(r["product_s"] for r in torch_all)))
  print_roofline("call", flops, f"[{b}x{d}]x[{d}x{f}] {args.dtype}", 2.0 * b * d * f, sides, 3.0,
                 counted="the prompts' forward pass, then every generated token's")


if __name__ == "__main__":
  main()
