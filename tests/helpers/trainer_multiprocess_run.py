"""Runs the tiny training of tests/test_trainer_multiprocess.py as one of several processes.

  python tests/helpers/trainer_multiprocess_run.py TASKS_ROOT WORKDIR COORDINATOR PROCESSES ID

Each process joins JAX's distributed runtime through `config.distributed` (coordinator on
localhost) with the fake CPU devices XLA_FLAGS gives it. RLCODER_KILL_AT (rl.killpoints) kills
a process at a named point, as in tests/helpers/trainer_resume_run.py. At the end each process
prints `RESULT {json}`: its process index and the device counts it saw.
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

# Two processes of one device each split the iteration's 4 tasks and its one mini-batch; the
# held-out evaluation at iteration 2 is split too. Rows over `data` (the update all-reduces
# gradients rather than gathering FSDP's weight shards layer by layer: fewer collectives, which
# are slow between CPU processes) and short trajectories keep the run short.
MULTIPROCESS_RUN = {"sft.enabled": False, "trainer.train_eval_samples": 0, "tasks.max_eval_tasks": 2,
                    "mesh.shape": (-1, 1, 1), "optim.mini_batch_size": 4, "optim.micro_batch_size": 4,
                    "agent.max_tokens_per_trajectory": 512, "sampling.max_cache_len": 512}


def main():
  import jax

  from rl.train import trainer as trainer_lib
  from test_trainer import tiny_config

  tasks_root, workdir, coordinator, processes, process_id = sys.argv[1:6]
  config = tiny_config(tasks_root, iterations=2, **MULTIPROCESS_RUN, **{
      "distributed.coordinator": coordinator, "distributed.num_processes": int(processes),
      "distributed.process_id": int(process_id)})
  summary = trainer_lib.run(config, workdir)
  print("RESULT " + json.dumps({"process": jax.process_index(), "processes": jax.process_count(),
                                "devices": jax.device_count(), "local_devices": jax.local_device_count(),
                                "iterations": summary.get("iterations")}), flush=True)


if __name__ == "__main__":
  main()
