"""Shared pytest set-up: CPU-only JAX, marker-driven skips for docker and gpu tests."""

import functools
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import pytest


@functools.cache
def docker_available() -> tuple[bool, str]:
  try:
    import docker

    client = docker.from_env(timeout=10)
    client.ping()
    return True, ""
  except Exception as e:  # any failure means "no usable engine"
    return False, f"no Docker engine reachable: {type(e).__name__}: {e}"


@functools.cache
def gpu_available() -> bool:
  try:
    import jax

    return any(d.platform == "gpu" for d in jax.devices("gpu"))
  except Exception:
    return False


def pytest_collection_modifyitems(config, items):
  for item in items:
    if "docker" in item.keywords:
      ok, why = docker_available()
      if not ok:
        item.add_marker(pytest.mark.skip(reason=why))
    if "gpu" in item.keywords and not gpu_available():
      item.add_marker(pytest.mark.skip(reason="no GPU visible to JAX"))
