"""Argument checks shared by the estimators and the losses.

They run on concrete arrays only (never on tracers), so they cost one reduction per argument
(no copy, no compilation on CPU) and nothing inside jit; every error is one line naming the
function and the argument.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

Array = Any  # numpy or jax array


def is_concrete(x: Array) -> bool:
  return not isinstance(x, jax.core.Tracer)


def shape_of(x: Array) -> tuple[int, ...]:
  return tuple(np.shape(x))


def _values_ok(x: Array, binary: bool) -> bool:
  """Whether a concrete array holds only 0/1 (`binary`) or only finite numbers."""
  if isinstance(x, jax.Array) and any(d.platform != "cpu" for d in x.devices()):
    # On an accelerator: reduce there and move one bool, not the array.
    return bool(_jit_is_binary(x) if binary else _jit_is_finite(x))
  a = np.asarray(x)  # zero-copy for NumPy and CPU jax arrays
  if binary:
    return bool(np.all((a == 0) | (a == 1)))
  return a.dtype.kind not in "fc" or bool(np.isfinite(a).all())


def check_array(fn: str, name: str, x: Array, *, ndim: int, shape: tuple[int, ...] | None = None,
                finite: bool = True, binary: bool = False) -> None:
  """Raises a ValueError naming `fn` and argument `name` when `x` is unusable.

  Checks the rank, the exact shape (no broadcasting), non-emptiness, and on concrete
  arrays that values are finite (`finite`) or exactly 0/1 (`binary`).
  """
  if x is None:
    raise ValueError(f"{fn}: argument {name!r} is required, got None")
  if not hasattr(x, "shape"):
    x = np.asarray(x)
  if x.ndim != ndim:
    raise ValueError(f"{fn}: {name!r} must be {ndim}-D, got shape {shape_of(x)}")
  if shape is not None and shape_of(x) != tuple(shape):
    raise ValueError(f"{fn}: {name!r} has shape {shape_of(x)} but must have shape {tuple(shape)} "
                     "(arrays are never broadcast)")
  if any(d == 0 for d in shape_of(x)):
    raise ValueError(f"{fn}: {name!r} is empty (shape {shape_of(x)}); empty batches are not allowed")
  if not is_concrete(x):
    return
  if binary and not _values_ok(x, binary=True):
    raise ValueError(f"{fn}: {name!r} must contain only 0 and 1")
  if not binary and finite and not _values_ok(x, binary=False):
    raise ValueError(f"{fn}: {name!r} contains NaN or infinite values")


@jax.jit
def _jit_is_binary(x):
  return jnp.all((x == 0) | (x == 1))


@jax.jit
def _jit_is_finite(x):
  return jnp.all(jnp.isfinite(x)) if jnp.issubdtype(x.dtype, jnp.inexact) else jnp.bool_(True)


def check_scalar(fn: str, name: str, value: Any, lo: float, hi: float) -> None:
  if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.floating, np.integer)):
    raise ValueError(f"{fn}: {name!r} must be a number in [{lo}, {hi}], got {value!r}")
  if not lo <= float(value) <= hi:
    raise ValueError(f"{fn}: {name!r} must be in [{lo}, {hi}], got {value!r}")


def as_float32(x: Array) -> jax.Array:
  return jnp.asarray(x, jnp.float32)


def per_sequence(fn: str, name: str, value: Any, batch: int, lo: float, hi: float) -> Array:
  """A scalar or a [B] array of per-sequence coefficients, as a [B] float32 array.

  Concrete values stay NumPy arrays: building these tiny vectors on the host avoids a
  device dispatch per argument on every call.
  """
  if np.ndim(value) == 0 and is_concrete(value):
    check_scalar(fn, name, value if not hasattr(value, "item") else value.item(), lo, hi)
    return np.full((batch,), float(value), np.float32)
  if np.ndim(value) == 0:
    return jnp.full((batch,), value, jnp.float32)
  check_array(fn, name, value, ndim=1, shape=(batch,))
  if not is_concrete(value):
    return as_float32(value)
  v = np.asarray(value, np.float32)
  if np.any(v < lo) or np.any(v > hi):
    raise ValueError(f"{fn}: {name!r} values must lie in [{lo}, {hi}]")
  return v
