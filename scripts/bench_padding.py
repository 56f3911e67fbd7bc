"""Seconds of an RL iteration's scoring and PPO epochs: padded to the iteration's longest row,
cut per call / mini-batch (`trainer.trim_padding`), and cut plus packed (`trainer.pack_fraction`).

  .venv/bin/python scripts/bench_padding.py --batch 48 --mini-batch 12
  .venv/bin/python scripts/bench_padding.py --attention einsum,tiled --sft-steps 0
  .venv/bin/python scripts/bench_padding.py --update-lanes 1,2

With --attention A,B,... (or --update-lanes 1,2,...) the cut+packed path (the default's) is timed
once per attention implementation (`model.attention`; or per `optim.update_lanes`), each on its
own Trainer with the same weights, alternating; the first one is the baseline of the ratios.

The batch is synthetic: rows whose lengths follow the default experiment's trajectories (a
log-normal fitted to p10 / p50 / p90 = 300 / 370 / 700 tokens, cut at 1536), 30% of each row
action tokens, random tokens and advantages. Both paths run on the same Trainer (the default
experiment's model, or --config), alternating, after one warm-up round that compiles every
shape; the script prints medians over --repeats rounds, the ratios, the largest difference
between the padded and cut paths' scores (the same numbers up to float reduction order), and the
policy parameters' largest differences after the epochs of each path (AdamW steps make float
noise in near-zero gradients lr-sized, so padded vs cut is the yardstick for cut vs packed).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repo root


def main() -> None:
  ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--batch", type=int, default=48)
  ap.add_argument("--mini-batch", type=int, default=12)
  ap.add_argument("--repeats", type=int, default=3)
  ap.add_argument("--max-len", type=int, default=1536)
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--attention", default="",
                  help="comma-separated model.attention values to compare on the cut+packed path")
  ap.add_argument("--update-lanes", default="",
                  help="comma-separated optim.update_lanes values to compare on the cut+packed path "
                       "(1: one update program; 2: the policy's and the critic's gradients in two "
                       "threads, rl.lanes)")
  ap.add_argument("--sft-steps", type=int, default=40,
                  help="also time this many SFT steps, cut against cut+packed (0: skip)")
  args = ap.parse_args()

  import jax
  import numpy as np

  from configs import default
  from rl.algo import batching
  from rl.train import trainer as trainer_lib

  c = default.get_config().unlock()
  c.tasks.num_synthetic = 12
  c.tasks.eval_sources = ()
  c.trainer.tasks_per_iteration = args.batch
  c.optim.mini_batch_size = args.mini_batch
  c.trainer.tensorboard = False
  workdir = tempfile.mkdtemp(prefix="bench_padding_")
  c.tasks.root = os.path.join(workdir, "tasks")
  c = c.lock()
  if args.attention:
    compare_variants(c, workdir, args, "model.attention", args.attention.split(","))
    return
  if args.update_lanes:
    compare_variants(c, workdir, args, "optim.update_lanes", [int(v) for v in args.update_lanes.split(",")])
    return
  trainer = trainer_lib.Trainer(c, trainer_lib.prepare_workdir(c, os.path.join(workdir, "run")))

  rng = np.random.default_rng(args.seed)
  batch, lengths = synthetic_batch(c, args, rng)
  B, T = batch.tokens.shape
  run = make_run(trainer, batch, lengths, rng)

  print(f"batch {B} rows, padded T {T}, lengths p10/p50/p90/max "
        f"{np.percentile(lengths, 10):.0f}/{np.percentile(lengths, 50):.0f}/"
        f"{np.percentile(lengths, 90):.0f}/{lengths.max()}, mini-batch {args.mini_batch}, "
        f"{c.optim.ppo_epochs} epochs, devices {jax.device_count()}")
  variants = {"padded": (False, False), "cut": (True, False), "cut+packed": (True, True)}
  params = {}
  for name, (trim, pack) in variants.items():  # warm-up: compiles every shape of every path
    scores = run(trim, pack)[2]
    params[name] = jax.tree.map(np.asarray, trainer.state.policy)
    if name == "padded":
      full_scores = scores
    elif name == "cut":
      trim_scores = scores
  m = batch.action_mask > 0
  diff = max(float(np.abs(full_scores[k] - trim_scores[k])[m].max()) for k in ("logprobs", "values"))
  def pdiff(a, b):
    return max(float(np.abs(x - y).max()) for x, y in zip(jax.tree.leaves(params[a]), jax.tree.leaves(params[b])))
  times = {name: [] for name in variants}
  for _ in range(args.repeats):
    for name, (trim, pack) in variants.items():
      times[name].append(run(trim, pack)[:2])
  med = {name: (np.median([t[0] for t in ts]), np.median([t[1] for t in ts]), np.median([sum(t) for t in ts]))
         for name, ts in times.items()}
  for i, part in enumerate(("score", "ppo epochs", "total")):
    print(f"{part:10s}  " + "   ".join(f"{name} {med[name][i]:7.2f} s" for name in variants) +
          f"   cut/padded {med['padded'][i] / med['cut'][i]:.2f}x"
          f"   packed/cut {med['cut'][i] / med['cut+packed'][i]:.2f}x")
  print(f"largest score difference between the padded and cut paths (log-probs, values): {diff:.2e}")
  # AdamW turns a float-noise difference in a near-zero gradient into a step of about lr, so
  # the padded and cut paths (the same math) are the yardstick for the packed one.
  print(f"largest policy-parameter difference after the epochs: padded vs cut {pdiff('padded', 'cut'):.2e}, "
        f"cut vs packed {pdiff('cut', 'cut+packed'):.2e} (lr {c.optim.policy_lr:g}, "
        f"{c.optim.ppo_epochs * -(-args.batch // args.mini_batch)} AdamW steps)")
  if args.sft_steps:
    bench_sft(trainer, batch, args.sft_steps, np.random.default_rng(args.seed + 1))


def synthetic_batch(c, args, rng):
  """Rows with the default experiment's lengths: log-normal through p50 = 370 and p90 = 700."""
  import numpy as np

  from rl.algo import batching

  lengths = np.clip(np.exp(np.log(370) + np.log(700 / 370) / 1.2816 * rng.standard_normal(args.batch)),
                    64, args.max_len).astype(int)
  B, T = args.batch, batching.round_up(int(lengths.max()), c.trainer.pad_multiple)
  tokens = rng.integers(3, 4000, size=(B, T)).astype(np.int32)
  valid = (np.arange(T)[None] < lengths[:, None]).astype(np.float32)
  mask = valid * (rng.random((B, T)) < 0.3) * (np.arange(T)[None] > 0)
  batch = batching.RolloutBatch(
      tokens=tokens, valid=valid, action_mask=mask.astype(np.float32),
      sampler_logprobs=np.zeros((B, T), np.float32), turn_rewards=np.zeros((B, T), np.float32),
      turn_ids=np.zeros((B, T), np.int32), scores=rng.random(B).astype(np.float32),
      group_ids=np.arange(B, dtype=np.int32), durations=np.ones(B, np.float32),
      truncated=np.zeros(B, bool), success=np.zeros(B, bool), lengths=lengths.astype(np.int32))
  return batch, lengths


def make_run(trainer, batch, lengths, rng):
  """`run(trim, pack) -> (score s, ppo epochs s, scores)`, each from the trainer's first state."""
  import jax
  import numpy as np

  from rl.algo.batch import TrainBatch

  state0 = trainer.state
  B, T = batch.tokens.shape
  advantages = rng.standard_normal((B, T)).astype(np.float32) * batch.action_mask
  returns = rng.random((B, T)).astype(np.float32) * batch.action_mask

  def run(trim: bool, pack: bool = False) -> tuple[float, float, dict]:
    trainer.state = jax.tree.map(lambda x: x.copy(), state0)
    t0 = time.perf_counter()
    scored = trainer._score(batch, 0.7, trim=trim)  # pylint: disable=protected-access
    t1 = time.perf_counter()
    train = TrainBatch(
        tokens=batch.tokens, valid=batch.valid, mask=batch.action_mask, advantages=advantages,
        returns=returns, old_logprobs=scored["logprobs"] * batch.action_mask,
        old_values=scored["values"] * batch.action_mask,
        ref_logprobs=scored["logprobs"] * batch.action_mask,
        sampler_logprobs=scored["logprobs"] * batch.action_mask,
        token_weights=np.ones((B, T), np.float32), sample_weights=np.ones(B, np.float32),
        has_sampler=np.ones(B, np.float32), lengths=np.asarray(lengths, np.int32),
        full_logprobs=scored["logprobs"])
    trainer.ppo_epochs(train, 0.7, True, True, rng=np.random.default_rng(1), trim=trim, pack=pack)
    jax.block_until_ready(trainer.state)
    return t1 - t0, time.perf_counter() - t1, scored

  return run


def compare_variants(c, workdir, args, field: str, values: list) -> None:
  """Scoring and PPO epochs on the cut+packed path, one Trainer per value of config `field`
  (e.g. "model.attention"), alternating; the first value is the baseline of the ratios."""
  import jax
  import numpy as np

  from rl.train import trainer as trainer_lib

  section, leaf = field.split(".")
  names = [str(v) for v in values]
  rng = np.random.default_rng(args.seed)
  batch, lengths = synthetic_batch(c, args, rng)
  runs, scores, compile_s, trainers = {}, {}, {}, {}
  for name, value in zip(names, values):
    cfg = c.unlock()
    cfg[section][leaf] = value
    cfg = cfg.lock()
    trainer = trainer_lib.Trainer(cfg, trainer_lib.prepare_workdir(cfg, os.path.join(workdir, f"run-{name}")))
    runs[name] = make_run(trainer, batch, lengths, np.random.default_rng(args.seed + 1))
    t0 = time.perf_counter()
    scores[name] = runs[name](True, True)[2]  # compiles every shape
    compile_s[name] = time.perf_counter() - t0
    trainers[name] = trainer
  times = {name: [] for name in names}
  for _ in range(args.repeats):
    for name in names:
      times[name].append(runs[name](True, True)[:2])
  B, T = batch.tokens.shape
  print(f"batch {B} rows, padded T {T}, cut+packed, mini-batch {args.mini_batch}, "
        f"{c.optim.ppo_epochs} epochs, {jax.device_count()} devices, {field} in {names}; medians of "
        f"{args.repeats}")
  base = names[0]
  med = {n: (np.median([t[0] for t in ts]), np.median([t[1] for t in ts])) for n, ts in times.items()}
  m = batch.action_mask > 0
  base_policy = jax.tree.leaves(jax.tree.map(np.asarray, trainers[base].state.policy))
  for name in names:
    diff = max(float(np.abs(scores[name][k] - scores[base][k])[m].max()) for k in ("logprobs", "values"))
    policy = jax.tree.leaves(jax.tree.map(np.asarray, trainers[name].state.policy))
    pdiff = max(float(np.abs(a - b).max()) for a, b in zip(policy, base_policy))
    print(f"{name:>8}: score {med[name][0]:6.2f} s ({med[base][0] / med[name][0]:.2f}x)   "
          f"ppo epochs {med[name][1]:6.2f} s ({med[base][1] / med[name][1]:.2f}x)   first round "
          f"(compiles) {compile_s[name]:6.1f} s   scores vs {base} {diff:.1e}   policy after the "
          f"epochs vs {base} {pdiff:.1e}")


def bench_sft(trainer, batch, steps: int, rng) -> None:
  """SFT steps as `Trainer.run_sft` takes them (random rows of the demonstration batch, each
  mini-batch cut to its longest row), with and without packing, on the same rows. The first
  pass includes compiling each new shape, as a run does; the second runs compiled shapes."""
  import dataclasses

  import jax
  import numpy as np

  from rl.algo import update as update_lib

  c = trainer.config
  tx = update_lib.make_optimizer(c.sft.lr, schedule="constant", total_steps=steps, grad_clip=c.optim.grad_clip)
  settings = dataclasses.replace(trainer.settings, micro_batch_size=min(c.optim.micro_batch_size, c.sft.batch_size))
  step_fn = update_lib.make_sft_step(trainer.policy_graphdef, tx, settings)
  plan = [rng.choice(batch.tokens.shape[0], size=c.sft.batch_size, replace=False) for _ in range(steps)]
  minibatch = trainer._sft_minibatch  # pylint: disable=protected-access
  real_packed = trainer._packed  # pylint: disable=protected-access
  results = {}
  for name in ("cut", "cut+packed"):
    trainer._packed = real_packed if name == "cut+packed" else (lambda mb, *a: mb)  # pylint: disable=protected-access
    shapes, passes = set(), []
    for _ in range(2):
      params = jax.tree.map(lambda x: x.copy(), trainer.state.policy)
      opt = tx.init(params)
      slots = 0
      t0 = time.perf_counter()
      for rows in plan:
        mb = minibatch(batch, rows)
        shapes.add(tuple(mb["tokens"].shape))
        slots += mb["tokens"].size
        params, opt, m = step_fn(params, opt, mb)
      jax.block_until_ready(params)
      passes.append(time.perf_counter() - t0)
    results[name] = (passes, slots, sorted(shapes))
  trainer._packed = real_packed  # pylint: disable=protected-access
  for name, (passes, slots, shapes) in results.items():
    print(f"sft {name:10s}  first pass {passes[0]:6.2f} s   compiled {passes[1]:6.2f} s   "
          f"{slots / steps:7.0f} token slots per step   {len(shapes)} shapes {shapes}")
  (a, _, _), (b, _, _) = results["cut"], results["cut+packed"]
  print(f"sft packed/cut speed-up: first pass {a[0] / b[0]:.2f}x, compiled {a[1] / b[1]:.2f}x "
        f"({steps} steps of {c.sft.batch_size} rows, micro-batch {settings.micro_batch_size})")


if __name__ == "__main__":
  main()
