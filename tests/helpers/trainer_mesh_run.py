"""Runs one tiny training iteration and prints its metrics row (for tests/test_trainer.py).

Run in a subprocess with XLA_FLAGS=--xla_force_host_platform_device_count=N: the trainer then
lays its state on an N-device mesh and splits each update's mini-batch across the devices.
  python tests/helpers/trainer_mesh_run.py TASKS_ROOT WORKDIR [constrained]
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def main():
  import jax

  from rl import trainer as trainer_lib
  from test_trainer import tiny_config

  tasks_root, workdir = sys.argv[1], sys.argv[2]
  extra = {}
  if sys.argv[3:] == ["constrained"]:  # grammar-masked sampling and update, a policy that stays put
    extra = {"agent.constrained_tool_calls": True, "optim.policy_lr": 1e-12}
  cfg = tiny_config(tasks_root, iterations=1, **{"sft.enabled": False, "trainer.eval_every": 0}, **extra)
  workdir = trainer_lib.prepare_workdir(cfg, workdir)
  trainer = trainer_lib.Trainer(cfg, workdir)
  trainer.run()
  row = json.loads((Path(workdir) / "metrics.jsonl").read_text().splitlines()[-1])
  mesh = None if trainer.mesh is None else dict(trainer.mesh.shape)
  print("RESULT " + json.dumps({"devices": jax.device_count(), "mesh": mesh, "row": row}))


if __name__ == "__main__":
  main()
