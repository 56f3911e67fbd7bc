"""The trainer as two cooperating processes (JAX's distributed runtime on localhost, one fake CPU
device each): each process runs its own share of an iteration's tasks, the batch path with each
process contributing half the rows equals one process given every row, and a run killed at a
kill point (rl.killpoints) resumes to the uninterrupted run.

Every process is a subprocess (tests/helpers/trainer_multiprocess_run.py,
tests/helpers/trainer_batch_check.py); the runs share JAX's persistent compilation cache.
"""

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from run_logs import assert_same_rows, episode_signatures, metrics_rows

HELPERS = Path(__file__).resolve().parent / "helpers"
RUN = HELPERS / "trainer_multiprocess_run.py"
BATCH_CHECK = HELPERS / "trainer_batch_check.py"


def _free_port() -> int:
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


def _start(script, args, log: Path, cache: Path, kill: str = "", devices: int = 1):
  from rl import killpoints

  env = {**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices}",
         "JAX_COMPILATION_CACHE_DIR": str(cache), "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
         "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0", killpoints.ENV_VAR: kill}
  out = open(log, "w")  # a file, not a pipe: a process's output must never block on a full pipe
  proc = subprocess.Popen([sys.executable, str(script), *map(str, args)], env=env, stdout=out,
                          stderr=subprocess.STDOUT, text=True)
  out.close()
  return proc


def _wait(procs, timeout=600) -> list[int]:
  """Every process's exit status; one that outlives the others by a minute (waiting in a
  collective for a process that died) is killed, as a cluster ends the rest of a broken job."""
  codes = []
  for i, proc in enumerate(procs):
    try:
      codes.append(proc.wait(timeout=timeout if i == 0 else 60))
    except subprocess.TimeoutExpired:
      for p in procs:
        if p.poll() is None:
          p.kill()
      raise
  return codes


def _result(log: Path) -> dict:
  lines = [l for l in log.read_text().splitlines() if l.startswith("RESULT ")]
  assert lines, log.read_text()[-3000:]
  return json.loads(lines[-1][len("RESULT "):])


def _two_process_run(tasks_root, workdir, cache, kill=""):
  coordinator = f"127.0.0.1:{_free_port()}"
  logs = [Path(f"{workdir}.{i}.log") for i in range(2)]
  procs = [_start(RUN, [tasks_root, workdir, coordinator, 2, i], logs[i], cache, kill) for i in range(2)]
  codes = _wait(procs)
  want = -signal.SIGKILL if kill else 0
  for code, log in zip(codes, logs):
    assert code == want, (kill, codes, log.read_text()[-3000:])
  return logs


def _records(workdir) -> dict[int, list[dict]]:
  """Each process's trajectory records (its own log, trajectories-process<p>-*.jsonl)."""
  from rl.env.trajectory import load_trajectories

  files = {p: sorted((Path(workdir) / "trajectories").glob(f"trajectories-process{p}-*.jsonl")) for p in range(2)}
  return {p: [r for f in files[p] for r in load_trajectories(f)] for p in range(2)}


@pytest.fixture(scope="module")
def root(tmp_path_factory):
  return tmp_path_factory.mktemp("multiprocess")


@pytest.fixture(scope="module")
def uninterrupted(root):
  workdir = root / "whole"
  logs = _two_process_run(root / "tasks", workdir, root / "jax_cache")
  return workdir, [_result(log) for log in logs]


@pytest.mark.slow
def test_two_processes_run_their_own_episodes_and_write_metrics_once(uninterrupted):
  workdir, results = uninterrupted
  assert [(r["process"], r["processes"], r["devices"], r["local_devices"]) for r in results] == [
      (0, 2, 2, 1), (1, 2, 2, 1)]
  assert all(r["iterations"] == 2 for r in results)
  rows = metrics_rows(workdir)
  assert [r["step"] for r in rows] == [1, 2]  # process 0 writes; once per iteration
  assert "eval/pass@1" in rows[1]  # the split held-out evaluation
  records = _records(workdir)
  for step in (0, 1):  # the policies of iterations 1 and 2
    mine = {p: [r for r in records[p] if r["model"]["step"] == step] for p in range(2)}
    # 4 tasks of one episode each: process p runs tasks (groups) p and p + 2
    assert {p: sorted(r["group_id"] for r in mine[p]) for p in range(2)} == {0: [0, 2], 1: [1, 3]}
    assert not {r["task_id"] for r in mine[0]} & {r["task_id"] for r in mine[1]}
    # The iteration's metrics count every process's episodes.
    assert rows[step]["rollout/episodes"] == 4
    assert rows[step]["train/episodes"] + rows[step]["train/no_action_episodes"] == 4
  summary = json.loads((workdir / "summary.json").read_text())
  assert summary["iterations"] == 2 and summary["heldout_pass@1_final"] is not None


@pytest.mark.slow
def test_two_process_run_killed_in_an_update_resumes_to_the_uninterrupted_run(root, uninterrupted):
  """Both processes die with SIGKILL in iteration 2's update (checkpoint 1 saved); the same
  command again resumes from checkpoint 1: the uninterrupted run's rows, each once, and its
  episodes, each logged once by the process that ran it."""
  whole, _ = uninterrupted
  part = root / "part"
  _two_process_run(root / "tasks", part, root / "jax_cache", kill="update:2")
  assert sorted(p.name for p in (part / "checkpoints" / "last").iterdir()) == ["0", "1"]
  assert [r["step"] for r in metrics_rows(part)] == [1]
  _two_process_run(root / "tasks", part, root / "jax_cache")
  resumed = metrics_rows(part)
  assert [r["step"] for r in resumed] == [1, 2]
  assert_same_rows(resumed, metrics_rows(whole))
  whole_records, part_records = _records(whole), _records(part)
  for p in range(2):
    assert episode_signatures(part_records[p]) == episode_signatures(whole_records[p])


@pytest.mark.slow
def test_two_process_batch_path_equals_one_process_on_every_row(root):
  """The trainer's batch path (scoring, GAE with batch whitening, the batch's entropy quantile,
  the PPO update, the metrics) on 8 fixed episodes in 4 groups, one of them an infrastructure
  failure (the second process pads its 3 rows to the first's 4): two processes of two devices
  each (the default FSDP mesh over all four), each given the groups a multi-process iteration
  gives it, equal one process given all of them; each process's sampler, on its own two
  devices, decodes what the single device does."""
  coordinator = f"127.0.0.1:{_free_port()}"
  logs = [root / f"batch{i}.log" for i in range(3)]
  procs = [_start(BATCH_CHECK, [root / "tasks", root / "batch2", coordinator, 2, i], logs[i], root / "jax_cache",
                  devices=2) for i in range(2)]
  procs.append(_start(BATCH_CHECK, [root / "tasks", root / "batch1"], logs[2], root / "jax_cache"))
  codes = _wait(procs)
  assert codes == [0, 0, 0], [log.read_text()[-3000:] for log in logs]
  multi, multi1, single = (_result(log) for log in logs)
  assert (multi["processes"], multi["devices"], multi["rows"], multi1["rows"]) == (2, 4, 4, 4)
  assert (single["processes"], single["devices"], single["rows"]) == (1, 1, 8)
  assert multi["sampler_mesh"] == multi1["sampler_mesh"] == {"data": 1, "fsdp": 2, "tensor": 1}
  assert multi["greedy"] == multi1["greedy"] == single["greedy"]
  assert multi1["metrics"] == multi["metrics"]  # every process reports the whole batch's metrics
  assert multi["metrics"]["train/episodes"] == 7 and single["metrics"]["actor/grad_norm"] > 0
  # Several processes also recompute the episodes' rollout metrics from everyone's episodes (one
  # process keeps the engine's, here none).
  assert set(single["metrics"]) <= set(multi["metrics"])
  assert multi["metrics"]["rollout/episodes"] == 8 and multi["metrics"]["infra/failed_episodes"] == 1
  for key, want in single["metrics"].items():
    assert multi["metrics"][key] == pytest.approx(want, rel=2e-3, abs=2e-5), key
  np.testing.assert_allclose(multi["fingerprint"], single["fingerprint"], rtol=2e-4, atol=2e-4)
