"""Tokens/s of one policy+value PPO-style update (forward, backward, AdamW step) vs PyTorch.

  .venv/bin/python scripts/bench_update.py --batch 16 --seq-len 512 --compare-transformers

The JAX side is the project's code path: token_logprobs (chunked log-probs + entropy), a separate
critic (or --value-head shared), a clipped-ratio policy loss plus a value loss, optax AdamW, all in
one jit. The PyTorch side runs transformers' Qwen2ForCausalLM and a Qwen2Model critic with a
linear head, the same losses and torch.optim.AdamW, in a subprocess (see bench_decode.py for how
the torch interpreter is found). Medians over --repeats steps after a warm-up step; with
--compare-transformers the two sides alternate for --rounds rounds and the speed-up is the median
of the rounds' ratios.

--roofline also times one float product of the step's most common shape ([B*T, d] x [d, f], the
MLP's) on each side, and prints each side's FLOP rate for the whole step (model FLOPs from
ModelConfig.forward_flops_per_token, causal attention) against that product's rate: a step cannot
run faster than its FLOPs at the rate its products reach, which bounds any speed-up on this CPU.
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
  import numpy as np
  import torch
  import transformers

  torch.manual_seed(0)
  device, dtype = torch_device(), getattr(torch, args.dtype)
  policy = transformers.AutoModelForCausalLM.from_pretrained(args.hf_checkpoint,
                                                             dtype=dtype).to(device).train()
  trunk = transformers.AutoModel.from_pretrained(args.hf_checkpoint, dtype=dtype).to(device).train()
  head = torch.nn.Linear(trunk.config.hidden_size, 1, dtype=dtype, device=device)
  params = list(policy.parameters()) + list(trunk.parameters()) + list(head.parameters())
  optimizer = torch.optim.AdamW(params, lr=1e-5)
  rng = np.random.default_rng(0)
  b, t = args.batch, args.seq_len
  ids = torch.tensor(rng.integers(3, policy.config.vocab_size, size=(b, t)), dtype=torch.long,
                     device=device)
  mask, old, adv, ret = (torch.tensor(x, dtype=torch.float32, device=device) for x in (
      rng.random((b, t - 1)) < 0.7, rng.normal(-8, 1, size=(b, t - 1)),
      rng.normal(size=(b, t - 1)), rng.normal(size=(b, t - 1))))

  def step():
    optimizer.zero_grad(set_to_none=True)
    logits = policy(ids).logits[:, :-1].float()
    logp = torch.log_softmax(logits, -1).gather(-1, ids[:, 1:, None])[..., 0]
    ratio = torch.exp(logp - old)
    surrogate = torch.minimum(ratio * adv, torch.clamp(ratio, 0.8, 1.2) * adv)
    values = head(trunk(ids).last_hidden_state[:, :-1])[..., 0].float()
    loss = (-(surrogate * mask).sum() + 0.5 * (((values - ret) ** 2) * mask).sum()) / mask.sum()
    loss.backward()
    optimizer.step()

  result = {"step_s": median_time(step, args.repeats, ready=torch_sync), "torch_device": str(device),
            "torch_threads": torch.get_num_threads()}
  if args.roofline:
    m, k, n = _product_shape(args, policy.config.hidden_size, policy.config.intermediate_size)
    a, w = (torch.randn(shape, dtype=dtype, device=device) for shape in ((m, k), (k, n)))
    result["product_s"] = median_time(lambda: a @ w, 5 * args.repeats, ready=torch_sync)
  print_result(result)


def _product_shape(args: argparse.Namespace, hidden: int, intermediate: int) -> tuple[int, int, int]:
  """--roofline's product: the MLP's up-projection over the batch, [B*T, d] x [d, f]."""
  return args.batch * args.seq_len, hidden, intermediate


def _run_torch(args: argparse.Namespace, checkpoint: str) -> dict | None:
  return run_worker(__file__, ["--hf-checkpoint", checkpoint, "--batch", str(args.batch), "--seq-len",
                               str(args.seq_len), "--repeats", str(args.repeats), "--dtype", args.dtype,
                               *(["--roofline"] if args.roofline else [])],
                    args.torch_python, "PyTorch")


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--hf-checkpoint", default="")
  parser.add_argument("--preset", default="tiny")
  parser.add_argument("--batch", type=int, default=16)
  parser.add_argument("--seq-len", type=int, default=512)
  parser.add_argument("--repeats", type=int, default=3)
  parser.add_argument("--rounds", type=int, default=3,
                      help="with --compare-transformers: rounds of (ours, PyTorch), alternating")
  parser.add_argument("--value-head", default="separate", choices=("separate", "shared"))
  parser.add_argument("--remat", action="store_true")
  parser.add_argument("--attention", default="tiled", choices=("tiled", "einsum", "xla", "cudnn"),
                      help="ModelConfig.attention: cache-free attention implementation (ours)")
  parser.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"),
                      help="parameters and activations, both sides (AdamW state follows)")
  parser.add_argument("--logits-chunk", type=int, default=256)
  parser.add_argument("--compare-transformers", action="store_true")
  parser.add_argument("--roofline", action="store_true",
                      help="also time the step's MLP product on each side and print FLOP rates")
  parser.add_argument("--torch-python", default="", help=TORCH_PYTHON_HELP)
  parser.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.torch_worker:
    _torch_worker(args)
    return
  if args.compare_transformers:  # no interpreter with torch: say so now, not after the JAX side
    args.torch_python = resolve_torch_python(args.torch_python)

  import jax
  import jax.numpy as jnp
  import numpy as np
  import optax
  from flax import nnx

  from rl.models import (copy_trunk, init_model, load_hf_checkpoint, make_critic,
                        save_hf_checkpoint, tiny_config, token_logprobs, token_values)

  tmp = tempfile.TemporaryDirectory()
  shared = args.value_head == "shared"
  if args.hf_checkpoint:
    policy = load_hf_checkpoint(args.hf_checkpoint, args.dtype, attention=args.attention,
                                value_head="shared" if shared else "none", remat=args.remat)
    checkpoint = args.hf_checkpoint
  else:
    policy = init_model(tiny_config(args.preset, value_head="shared" if shared else "none",
                                    remat=args.remat, dtype=args.dtype, param_dtype=args.dtype,
                                    attention=args.attention),
                        seed=0)
    checkpoint = tmp.name
    save_hf_checkpoint(policy, checkpoint)
  models = {"policy": policy}
  if not shared:
    critic = make_critic(policy.config, seed=1)
    copy_trunk(policy, critic)
    models["critic"] = critic
  graphdefs = {k: nnx.split(m)[0] for k, m in models.items()}
  params = {k: nnx.split(m)[1] for k, m in models.items()}
  optimizer = optax.adamw(1e-5)
  opt_state = optimizer.init(params)
  rng = np.random.default_rng(0)
  b, t = args.batch, args.seq_len
  vocab = policy.config.vocab_size
  batch = {
      "ids": jnp.asarray(rng.integers(3, vocab, size=(b, t)), jnp.int32),
      "mask": jnp.asarray(rng.random((b, t)) < 0.7, jnp.float32),
      "old": jnp.asarray(rng.normal(-8, 1, size=(b, t)), jnp.float32),
      "adv": jnp.asarray(rng.normal(size=(b, t)), jnp.float32),
      "ret": jnp.asarray(rng.normal(size=(b, t)), jnp.float32),
  }

  def loss_fn(params, batch):
    policy = nnx.merge(graphdefs["policy"], params["policy"])
    # No entropy: the PyTorch side does not compute it either (entropy_coef = 0).
    out = token_logprobs(policy, batch["ids"], chunk=args.logits_chunk, with_values=shared,
                         with_entropy=False)
    values = out["values"] if shared else token_values(
        nnx.merge(graphdefs["critic"], params["critic"]), batch["ids"])
    ratio = jnp.exp(out["logprobs"] - batch["old"])
    surrogate = jnp.minimum(ratio * batch["adv"], jnp.clip(ratio, 0.8, 1.2) * batch["adv"])
    mask = batch["mask"].at[:, 0].set(0.0)
    value_loss = 0.5 * ((values - batch["ret"]) ** 2 * mask).sum()
    return (-(surrogate * mask).sum() + value_loss) / mask.sum()

  @jax.jit
  def update(params, opt_state, batch):
    loss, grads = jax.value_and_grad(loss_fn)(params, batch)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss

  def one_update():
    nonlocal params, opt_state
    params, opt_state, loss = update(params, opt_state, batch)
    return loss

  if args.compare_transformers:
    ours_all, torch_all = alternate_rounds(
        lambda: median_time(one_update, args.repeats, ready=jax.block_until_ready),
        lambda: _run_torch(args, checkpoint), args.rounds)
    ours_s = statistics.median(ours_all)
  else:
    ours_s = median_time(one_update, args.repeats, ready=jax.block_until_ready)
  tokens = b * t
  print(f"model: {args.hf_checkpoint or args.preset} ({policy.config.num_params() / 1e6:.1f}M "
        f"params), value head: {args.value_head}, remat: {args.remat}, attention: {args.attention}, "
        f"dtype: {args.dtype}, "
        f"B={b} T={t}; {jax_side()}")
  print(f"ours: {ours_s:.3f} s/update median, {tokens / ours_s:,.0f} tokens/s")
  if args.compare_transformers and torch_all:
    torch_s = statistics.median(r["step_s"] for r in torch_all)
    print(f"pytorch/transformers ({torch_side(torch_all[0])}): {torch_s:.3f} s/update median, "
          f"{tokens / torch_s:,.0f} tokens/s")
    print_rounds("pytorch", ours_all, [r["step_s"] for r in torch_all])
  if args.roofline:
    _print_roofline(args, policy.config, ours_s, torch_all if args.compare_transformers else [])
  tmp.cleanup()


def _print_roofline(args: argparse.Namespace, config, ours_s: float, torch_all: list[dict]) -> None:
  """Each side's step FLOP rate against the rate its own MLP product reaches on this machine."""
  import jax
  import jax.numpy as jnp

  m, k, n = _product_shape(args, config.hidden_size, config.intermediate_size)
  a, w = jnp.ones((m, k), args.dtype), jnp.ones((k, n), args.dtype)
  product = jax.jit(jnp.dot)
  product_s = median_time(lambda: product(a, w), 5 * args.repeats, ready=jax.block_until_ready)
  tokens = args.batch * args.seq_len
  context = (args.seq_len + 1) / 2  # causal: the average token attends over half the sequence
  per_token = config.forward_flops_per_token(context) + (
      config.forward_flops_per_token(context, unembed=False) if args.value_head == "separate" else 0)
  step_flops = 3 * per_token * tokens
  sides = [("ours", ours_s, product_s)]
  if torch_all and "product_s" in torch_all[0]:
    sides.append(("pytorch", statistics.median(r["step_s"] for r in torch_all),
                  statistics.median(r["product_s"] for r in torch_all)))
  models = "policy + critic" if args.value_head == "separate" else "policy"
  print_roofline("step", step_flops, f"[{m}x{k}]x[{k}x{n}] {args.dtype}", 2.0 * m * k * n, sides, 1.5,
                 counted=f"{models}, forward and backward, causal attention")


if __name__ == "__main__":
  main()
