"""Sandboxed execution of untrusted code: sessions, backends (bubblewrap, Docker), grading.

`open_session(workspace_dir, config)` copies a workspace into a fresh isolated sandbox of the
backend named by `config.backend`. This package never imports `rl`.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

from sandbox.api import (ExecResult, FaultInjection, SandboxConfig, SandboxError, SandboxPathError,
                         Session)
from sandbox.faults import with_faults
from sandbox.runtime_env import runtime_python

__all__ = ["ExecResult", "FaultInjection", "SandboxConfig", "SandboxError", "SandboxPathError",
           "Session", "open_session", "register_backend", "backend_names", "runtime_python"]

# name -> "module:function" (imported lazily so the docker SDK is only needed for docker).
_BACKENDS: dict[str, Any] = {
    "local": "sandbox.local:open_local",
    "docker": "sandbox.docker_backend:open_docker",
}


def register_backend(name: str, factory: Callable[[str, SandboxConfig], Session]) -> None:
  """Adds a backend: `factory(workspace_dir, config) -> Session`."""
  _BACKENDS[name] = factory


def backend_names() -> list[str]:
  return sorted(_BACKENDS)


def get_backend(name: str) -> Callable[[str, SandboxConfig], Session]:
  if name not in _BACKENDS:
    raise LookupError(f"unknown sandbox backend {name!r}; known sandbox backends: "
                      f"{', '.join(backend_names())}")
  factory = _BACKENDS[name]
  if isinstance(factory, str):
    module, _, attr = factory.partition(":")
    factory = getattr(importlib.import_module(module), attr)
    _BACKENDS[name] = factory
  return factory


def open_session(workspace_dir: str, config: SandboxConfig | Any = None, **overrides: Any) -> Session:
  """Opens a session on a private copy of `workspace_dir` with the configured backend.

  `config` is a SandboxConfig, a mapping such as `config.sandbox`, or None for defaults;
  keyword overrides replace single fields. With `config.fault_injection` set, the backend
  fails that share of opens and session calls on purpose (sandbox.faults).
  """
  if config is None:
    config = SandboxConfig()
  elif not isinstance(config, SandboxConfig):
    config = SandboxConfig.from_mapping(config)
  if overrides:
    config = config.replace(**overrides)
  return with_faults(get_backend(config.backend), config.fault_injection)(workspace_dir, config)
