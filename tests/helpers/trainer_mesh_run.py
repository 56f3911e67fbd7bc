"""Runs one tiny training iteration and prints its metrics row (for tests/test_trainer.py).

Run in a subprocess with XLA_FLAGS=--xla_force_host_platform_device_count=N: the trainer then
lays its state out on an N-device mesh (`--mesh D,F,T`, default the config's) and splits each
update's mini-batch across the devices.
  python tests/helpers/trainer_mesh_run.py TASKS_ROOT WORKDIR [--constrained] [--mesh D,F,T]
      [--rows N] [--greedy]
`--rows N`: N rollouts per iteration and mini-batch (divisible by the mesh's batch axes),
rewarded by their pass rate;
`--greedy`: also prints the sampler's greedy continuations of a few prompts under the trained
weights, and each weight's sharding spec.
"""

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("tasks_root")
  parser.add_argument("workdir")
  parser.add_argument("--constrained", action="store_true")
  parser.add_argument("--mesh", default="")
  parser.add_argument("--rows", type=int, default=0)
  parser.add_argument("--greedy", action="store_true")
  args = parser.parse_args()

  import jax
  import numpy as np

  from rl.train import trainer as trainer_lib
  from test_trainer import tiny_config

  extra = {}
  if args.constrained:  # grammar-masked sampling and update, a policy that stays put
    extra = {"agent.constrained_tool_calls": True, "optim.policy_lr": 1e-12}
  if args.mesh:
    extra["mesh.shape"] = tuple(int(s) for s in args.mesh.split(","))
  if args.rows:  # one episode per task, every row in one mini-batch; partial credit for the
    # tests a program passes, so that a random policy's advantages and gradients are not all zero
    extra.update({"trainer.tasks_per_iteration": args.rows, "optim.mini_batch_size": args.rows,
                  "optim.micro_batch_size": args.rows, "reward.scheme": "pass_rate"})
  cfg = tiny_config(args.tasks_root, iterations=1, **{"sft.enabled": False, "trainer.eval_every": 0}, **extra)
  workdir = trainer_lib.prepare_workdir(cfg, args.workdir)
  trainer = trainer_lib.Trainer(cfg, workdir)
  trainer.run()
  row = json.loads((Path(workdir) / "metrics.jsonl").read_text().splitlines()[-1])
  mesh = None if trainer.mesh is None else dict(trainer.mesh.shape)
  out = {"devices": jax.device_count(), "mesh": mesh, "row": row}
  if args.greedy:
    trainer._set_policy(1.0, seed=0)  # pylint: disable=protected-access
    sampler = trainer.model_policy.sampler
    rng = np.random.default_rng(0)
    prompts = [rng.integers(5, 4000, size=n).tolist() for n in (7, 12, 20, 9, 15, 3, 11, 18)]
    result = sampler.sample(prompts, max_new_tokens=12, rng=jax.random.key(0), temperature=0.0)
    out["greedy"] = [list(map(int, t)) for t in result.tokens]
    policy = trainer.state.policy
    out["specs"] = {jax.tree_util.keystr(p): str(x.sharding.spec) if hasattr(x.sharding, "spec") else None
                    for p, x in jax.tree_util.tree_leaves_with_path(policy)}
  print("RESULT " + json.dumps(out))


if __name__ == "__main__":
  main()
