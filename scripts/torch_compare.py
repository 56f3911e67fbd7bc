"""Shared by the benchmarks that compare against PyTorch/transformers in a second interpreter.

The comparison runs the calling script again with `--torch-worker` in an interpreter that has
torch (this one, or `--torch-python`), which prints one `TORCH_RESULT {json}` line.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Callable, Sequence

DEFAULT_TORCH_PYTHON = "/work/torchenv/bin/python"
RESULT_PREFIX = "TORCH_RESULT "


def median_time(fn: Callable[[], Any], repeats: int, *, ready: Callable[[Any], Any] = lambda out: out) -> float:
  """Median wall time of `fn()` over `repeats` calls after one warm-up (compile) call;
  `ready(out)` waits for asynchronous results (e.g. `jax.block_until_ready`)."""
  ready(fn())
  times = []
  for _ in range(repeats):
    start = time.perf_counter()
    ready(fn())
    times.append(time.perf_counter() - start)
  return statistics.median(times)


def torch_device():
  """The worker's torch device: the first GPU when torch sees one, else the CPU."""
  import torch  # pylint: disable=import-outside-toplevel
  return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def torch_sync(out: Any = None) -> Any:
  """`ready` for median_time on the torch side: waits for queued GPU work (no-op on CPU)."""
  import torch  # pylint: disable=import-outside-toplevel
  if torch.cuda.is_available():
    torch.cuda.synchronize()
  return out


def print_result(result: dict) -> None:
  print(RESULT_PREFIX + json.dumps(result))


def run_worker(script: str, worker_args: Sequence[str], torch_python: str, label: str) -> dict | None:
  """Runs `script --torch-worker *worker_args` under a torch interpreter; its result or None."""
  try:
    import torch  # noqa: F401  # pylint: disable=import-outside-toplevel,unused-import
    python = sys.executable
  except ImportError:
    python = torch_python
    if not python or not os.path.exists(python):
      print(f"{label} comparison skipped: no torch here and no interpreter at {python!r}")
      return None
  proc = subprocess.run([python, os.path.abspath(script), "--torch-worker", *worker_args],
                        capture_output=True, text=True)
  for line in proc.stdout.splitlines():
    if line.startswith(RESULT_PREFIX):
      return json.loads(line[len(RESULT_PREFIX):])
  print(f"{label} comparison failed:\n" + proc.stdout[-2000:] + proc.stderr[-4000:])
  return None
