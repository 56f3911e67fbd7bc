"""Shared by the benchmarks that compare against PyTorch/transformers in a second interpreter.

The comparison runs the calling script again with `--torch-worker` in an interpreter that has
torch, which prints one `TORCH_RESULT {json}` line. That interpreter is this one when it can
import torch, else `--torch-python`, else $RLCODER_TORCH_PYTHON; a comparison asked for with
none of them stops at once with one line saying so (TORCH_PYTHON_HELP: how to make one).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Callable, Sequence

TORCH_PYTHON_ENV = "RLCODER_TORCH_PYTHON"
RESULT_PREFIX = "TORCH_RESULT "
TORCH_PYTHON_HELP = (
    "an interpreter with torch and transformers for the comparison (default: this one if it has "
    f"torch, else ${TORCH_PYTHON_ENV}); make one with: python3 -m venv /path/torch-venv && "
    "/path/torch-venv/bin/pip install torch --index-url https://download.pytorch.org/whl/cpu transformers")


def has_torch() -> bool:
  try:
    import torch  # noqa: F401  # pylint: disable=import-outside-toplevel,unused-import
    return True
  except ImportError:
    return False


def resolve_torch_python(given: str | None) -> str:
  """The interpreter that runs the torch side: this one if it has torch, else `given`
  (--torch-python), else $RLCODER_TORCH_PYTHON. Exits with status 2 and one line on stderr when
  there is none or it does not exist, before any benchmark work starts."""
  if has_torch():
    return sys.executable
  python = given or os.environ.get(TORCH_PYTHON_ENV, "")
  if not python:
    _fail(f"the PyTorch comparison needs torch: this interpreter has none; pass --torch-python PATH or set "
          f"{TORCH_PYTHON_ENV} (make one: python3 -m venv /path/torch-venv && /path/torch-venv/bin/pip install "
          "torch --index-url https://download.pytorch.org/whl/cpu transformers)")
  if not os.path.isfile(python) or not os.access(python, os.X_OK):
    _fail(f"the torch interpreter {python} (from {'--torch-python' if given else TORCH_PYTHON_ENV}) is not "
          "an executable file")
  return python


def _fail(message: str) -> None:
  print(f"{os.path.basename(sys.argv[0])}: error: {message}", file=sys.stderr, flush=True)
  raise SystemExit(2)


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


def alternate_rounds(ours: Callable[[], float], theirs: Callable[[], dict | None],
                     rounds: int) -> tuple[list[float], list[dict]]:
  """Times both sides `rounds` times, alternating (ours, theirs, ours, ...), so that a change in
  machine load lands on both sides of a round instead of on one side of the comparison.
  `ours()` returns seconds; `theirs()` a worker result, or None when the worker failed (the
  rounds stop there). Returns our times and the worker results."""
  ours_s, results = [], []
  for _ in range(rounds):
    ours_s.append(ours())
    result = theirs()
    if result is None:
      break
    results.append(result)
  return ours_s, results


def print_rounds(label: str, ours_s: Sequence[float], theirs_s: Sequence[float]) -> None:
  """Per-round seconds and speed-ups, then the median speed-up over rounds and its range."""
  ratios = [t / o for o, t in zip(ours_s, theirs_s)]
  for i, (o, t, r) in enumerate(zip(ours_s, theirs_s, ratios)):
    print(f"  round {i + 1}: ours {o:.3f} s, {label} {t:.3f} s, {r:.2f}x")
  if ratios:
    print(f"speed-up vs {label}: {statistics.median(ratios):.2f}x median over {len(ratios)} rounds "
          f"(range {min(ratios):.2f}x-{max(ratios):.2f}x)")


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
  """The worker's one result line, with the versions and thread count it ran with."""
  import torch  # pylint: disable=import-outside-toplevel
  import transformers  # pylint: disable=import-outside-toplevel
  result = {**result, "torch_version": torch.__version__, "transformers_version": transformers.__version__,
            "torch_threads": torch.get_num_threads()}
  print(RESULT_PREFIX + json.dumps(result))


def jax_side() -> str:
  """What the JAX side runs with, for the benchmark's header line."""
  import jax  # pylint: disable=import-outside-toplevel
  import jaxlib  # pylint: disable=import-outside-toplevel
  cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
  return (f"jax {jax.__version__} (jaxlib {jaxlib.__version__}) on {jax.devices()[0].platform}, "
          f"{cores} CPU cores available to XLA's thread pool")


def torch_side(result: dict) -> str:
  """What the worker ran with (print_result's fields)."""
  return (f"torch {result.get('torch_version', '?')}, transformers {result.get('transformers_version', '?')}, "
          f"{result.get('torch_device', '?')}, {result.get('torch_threads', '?')} threads")


def run_worker(script: str, worker_args: Sequence[str], torch_python: str, label: str) -> dict | None:
  """Runs `script --torch-worker *worker_args` under `torch_python` (`resolve_torch_python`'s
  answer); its result, or None when the worker failed (its output is printed)."""
  python = torch_python
  proc = subprocess.run([python, os.path.abspath(script), "--torch-worker", *worker_args],
                        capture_output=True, text=True)
  for line in proc.stdout.splitlines():
    if line.startswith(RESULT_PREFIX):
      return json.loads(line[len(RESULT_PREFIX):])
  print(f"{label} comparison failed:\n" + proc.stdout[-2000:] + proc.stderr[-4000:])
  return None


def print_roofline(work: str, flops: float, product: str, product_flops: float,
                   sides: Sequence[tuple[str, float, float]], target: float, counted: str = "") -> None:
  """Each side's FLOP rate over the whole timed call against the rate of one product of the
  call's most common shape on the same side, timed alone; then what `target` times the second
  side's speed needs. `sides`: (label, call seconds, product seconds), ours first; `counted`: what
  the FLOPs cover."""
  print(f"roofline: {flops / 1e9:.1f} GFLOP per {work}{f' ({counted})' if counted else ''}; product {product}")
  for label, call_s, product_s in sides:
    rate, product_rate = flops / call_s, product_flops / product_s
    print(f"  {label}: {rate / 1e9:.1f} GFLOP/s = {100 * rate / product_rate:.0f}% of its product's "
          f"{product_rate / 1e9:.1f} GFLOP/s")
  if len(sides) == 2:
    best_rate = max(product_flops / product_s for _, _, product_s in sides)
    need = target * flops / sides[1][1]
    print(f"  {target:g}x {sides[1][0]} needs {need / 1e9:.1f} GFLOP/s over the whole {work}: "
          f"{100 * need / best_rate:.0f}% of the faster side's product rate")
