"""Seconds of a training step's forward and backward pass with cache-free attention by query
blocks (`rl.models.transformer.ATTENTION_BLOCK`) against one block (the whole [T, T] scores),
and with the "tiled" attention (rl.models.tiled_attention; `tiled:N` = tiles of N tokens).

  .venv/bin/python scripts/bench_attention.py --blocks 0,256,tiled:128,tiled:256 --repeats 5

Rows are packed like the trainer's PPO mini-batches (sequences of log-normal lengths, p50 ~370
and p90 ~700 tokens, laid end to end with `segment_ids`); each shape is timed for the policy
(log-probs and entropy of every token, vocabulary logits included) and for the critic (values)
of the default experiment's model (2 layers, width 128), or the --tiny preset with --width /
--layers. The blocks alternate within each round after one compiling call each; the script
prints medians, each block's ratio to the first in --blocks, its compile-and-first-call time,
and the largest difference of its log-probs (values) from the first's at real tokens. The
policy/needed rows compute the logits of --action-fraction of the tokens only (`needed`, as the
trainer's losses do) and compare with the plain policy rows' first block.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repo root


def main() -> None:
  ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--blocks", default="0,256,tiled:256",
                  help="einsum query block sizes (0 = one block, the baseline) and tiled:N variants")
  ap.add_argument("--shapes", default="4x1024,8x512,4x1536", help="ROWSxT of one micro-batch")
  ap.add_argument("--repeats", type=int, default=5)
  ap.add_argument("--width", type=int, default=128)
  ap.add_argument("--layers", type=int, default=2)
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--action-fraction", type=float, default=0.25,
                  help="share of the real tokens in the policy/needed rows' loss (`needed`)")
  args = ap.parse_args()

  import jax
  import jax.numpy as jnp
  import numpy as np
  from flax import nnx

  from rl.models import transformer

  blocks = args.blocks.split(",")
  shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")]
  config = transformer.tiny_config("tiny", hidden_size=args.width, num_layers=args.layers,
                                   intermediate_size=3 * args.width)
  params = nnx.split(transformer.init_model(config, seed=args.seed))[1]
  critic_params = nnx.split(transformer.make_critic(config, seed=args.seed + 1))[1]
  # The graph (which carries the attention setting) per variant; the weights are shared.
  graphdefs = {a: nnx.split(transformer.init_model(config.replace(attention=a), seed=args.seed))[0]
               for a in ("einsum", "tiled")}
  critic_graphdefs = {a: nnx.split(transformer.make_critic(config.replace(attention=a), seed=args.seed + 1))[0]
                      for a in ("einsum", "tiled")}

  def use(variant: str) -> str:
    """Sets the module constant the variant reads when tracing; returns its attention setting."""
    if variant.startswith("tiled:"):
      transformer.TILE = int(variant.split(":")[1])
      return "tiled"
    transformer.ATTENTION_BLOCK = int(variant)
    return "einsum"
  rng = np.random.default_rng(args.seed)

  def packed_row(T: int) -> np.ndarray:
    """Segment ids of one row filled with log-normal sequence lengths, then padding."""
    seg, pos, s = np.zeros(T, np.int32), 0, 1
    while pos < T:
      n = int(np.clip(np.exp(np.log(370) + 0.5 * rng.standard_normal()), 64, T))
      if pos + n > T:
        break
      seg[pos:pos + n], pos, s = s, pos + n, s + 1
    return seg

  def policy_loss(p, tokens, segments, needed=None, attention="einsum"):
    out = transformer.token_logprobs(nnx.merge(graphdefs[attention], p), tokens, segment_ids=segments,
                                     chunk=256, with_entropy=True, needed=needed)
    used = segments > 0 if needed is None else needed
    return jnp.sum(jnp.where(used, out["logprobs"] + 0.01 * out["entropy"], 0.0)), out["logprobs"]

  def critic_loss(p, tokens, segments, attention="einsum"):
    values = transformer.token_values(nnx.merge(critic_graphdefs[attention], p), tokens,
                                      segment_ids=segments)
    return jnp.sum(jnp.where(segments > 0, values ** 2, 0.0)), values

  print(f"model: {config.num_layers} layers, width {config.hidden_size}, "
        f"{config.num_params() / 1e6:.2f}M parameters; {jax.devices()[0].platform}")
  print(f"{'shape':>10} {'part':>13} {'attention':>10} {'median ms':>10} {'ratio':>6} {'compile s':>10} {'max |diff|':>12}")
  for rows, T in shapes:
    tokens = jnp.asarray(rng.integers(3, config.vocab_size, (rows, T)), jnp.int32)
    segments = jnp.asarray(np.stack([packed_row(T) for _ in range(rows)]))
    needed = (segments > 0) & jnp.asarray(rng.random((rows, T)) < args.action_fraction)
    # policy/needed: as the trainer's losses do, only the action tokens' logits.
    parts = (("policy", policy_loss, params),
             ("policy/needed", functools.partial(policy_loss, needed=needed), params),
             ("critic", critic_loss, critic_params))
    for part, loss, p in parts:
      steps, compile_s, outs = {}, {}, {}
      for block in blocks:  # read when tracing: one jit per variant
        attention = use(block)
        steps[block] = jax.jit(jax.value_and_grad(functools.partial(loss, attention=attention),
                                                  has_aux=True))
        t0 = time.perf_counter()
        (_, outs[block]), _ = jax.block_until_ready(steps[block](p, tokens, segments))
        compile_s[block] = time.perf_counter() - t0
      times = {b: [] for b in blocks}
      for _ in range(args.repeats):
        for block in blocks:
          t0 = time.perf_counter()
          jax.block_until_ready(steps[block](p, tokens, segments))
          times[block].append(time.perf_counter() - t0)
      if part != "policy/needed":  # which is compared with the plain policy's first block
        base, base_out = float(np.median(times[blocks[0]])), outs[blocks[0]]
      real = np.asarray(needed if part == "policy/needed" else segments > 0)
      for block in blocks:
        med = float(np.median(times[block]))
        diff = float(np.abs(np.asarray(outs[block]) - np.asarray(base_out))[real].max())
        print(f"{rows:>4}x{T:<5} {part:>13} {block:>10} {med * 1000:>10.0f} {base / med:>6.2f} "
              f"{compile_s[block]:>10.1f} {diff:>12.2e}")


if __name__ == "__main__":
  main()
