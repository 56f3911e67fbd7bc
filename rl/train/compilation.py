"""XLA compilation in a run: a persistent on-disk cache of compiled programs, and a running total
of the seconds spent tracing, lowering and compiling.

A run compiles the sampler per chunk width and decode span, the scorer per padded length and the
update per mini-batch shape; on a 2-core CPU that is minutes of a short run. With
`trainer.compilation_cache_dir` set, every program that took at least
`trainer.compilation_cache_min_s` to compile is written there and loaded by the next run that
needs it (another seed, a resumed run, a test suite), instead of being compiled again. Entries
are keyed by the program, the shapes, the compiler options and the JAX version, so a stale entry
is never used. `compile_seconds()` feeds the trainer's `time/compile_s` metric.
"""

from __future__ import annotations

import os
import threading

import jax
from jax import monitoring

# The stages jax.jit goes through on a cache miss of its in-memory cache: tracing to a jaxpr,
# lowering to MLIR, and the backend compile (or the load from the persistent cache).
_EVENTS = ("/jax/core/compile/jaxpr_trace_duration",
           "/jax/core/compile/jaxpr_to_mlir_module_duration",
           "/jax/core/compile/backend_compile_duration")

_lock = threading.Lock()
_total_s = 0.0
_listening = False


def _record(event: str, duration_s: float, **_) -> None:
  global _total_s
  if event in _EVENTS:
    with _lock:
      _total_s += duration_s


def start_timing() -> None:
  """Starts summing compile time (once per process; later calls do nothing)."""
  global _listening
  with _lock:
    if _listening:
      return
    _listening = True
  monitoring.register_event_duration_secs_listener(_record)


def compile_seconds() -> float:
  """Seconds spent compiling since `start_timing()` (all threads)."""
  with _lock:
    return _total_s


def use_persistent_cache(directory: str, min_compile_s: float) -> str:
  """Points JAX's persistent compilation cache at `directory` ("~" expanded; "" leaves the
  cache off). Returns the directory used."""
  if not directory:
    return ""
  directory = os.path.abspath(os.path.expanduser(directory))
  os.makedirs(directory, exist_ok=True)
  jax.config.update("jax_compilation_cache_dir", directory)
  jax.config.update("jax_persistent_cache_min_compile_time_secs", float(min_compile_s))
  jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
  return directory
