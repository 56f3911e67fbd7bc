"""The persistent compilation cache and the compile-time total (rl.train.compilation), in a fresh
interpreter each: JAX's cache settings are process-wide."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_PROGRAM = r"""
import json, sys
import jax, jax.numpy as jnp
from rl.train import compilation
used = compilation.use_persistent_cache(sys.argv[1], 0.0)
compilation.start_timing()
compilation.start_timing()  # a second call must not count twice

@jax.jit
def f(x):
  for _ in range(30):
    x = jnp.sin(x) @ x
  return x

f(jnp.ones((32, 32))).block_until_ready()
first = compilation.compile_seconds()
f(jnp.ones((32, 32))).block_until_ready()  # in memory: nothing compiles
print(json.dumps({"dir": used, "first": first, "again": compilation.compile_seconds()}))
"""


def _run(cache_dir):
  out = subprocess.run([sys.executable, "-c", _PROGRAM, str(cache_dir)], cwd=ROOT, check=True,
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ROOT})
  return json.loads(out.stdout.strip().splitlines()[-1])


def test_programs_are_kept_and_compile_time_is_counted(tmp_path):
  cache = tmp_path / "jax-cache"
  first = _run(cache)
  assert first["dir"] == str(cache) and first["first"] > 0
  assert first["again"] == first["first"]
  entries = os.listdir(cache)
  assert any(name.startswith("jit_f") for name in entries), entries
  second = _run(cache)  # a new process loads the program instead of compiling it
  assert sorted(os.listdir(cache)) == sorted(entries)
  assert second["first"] > 0  # tracing and the cache read still count


def test_empty_directory_leaves_the_cache_off(tmp_path):
  program = ("import jax; from rl.train import compilation; "
             "print(repr(compilation.use_persistent_cache('', 0.0)), jax.config.jax_compilation_cache_dir)")
  out = subprocess.run([sys.executable, "-c", program], cwd=ROOT, check=True, capture_output=True,
                       text=True, env={**os.environ, "PYTHONPATH": ROOT})
  assert out.stdout.split() == ["''", "None"]
