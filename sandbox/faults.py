"""Fault injection: any backend made to fail a configured share of its calls, on purpose.

`open_session` wraps the configured backend when `SandboxConfig.fault_injection` has a rate
above 0; `grading.grade` asks the same injector before it grades. A fault is an
`InjectedFault` (a `SandboxError`), raised where the real failure would be, so everything
above the sandbox (rollouts, grading, the trainer) meets the same error as in production.
"""

from __future__ import annotations

import random
import threading
from typing import Any, Callable, Mapping

from sandbox.api import ExecResult, FaultInjection, SandboxConfig, SandboxError, Session

KINDS = ("open", "exec", "grade")


class InjectedFault(SandboxError):
  """A failure made by fault injection (sandbox.fault_injection), not by the code under test."""


class FaultInjector:
  """Decides which calls fail: one seeded random stream per kind of call, shared by threads.

  The n-th call of a kind always gets the same decision for a given seed; with several worker
  threads, which call is the n-th follows the order in which they reach the injector.
  """

  def __init__(self, faults: FaultInjection):
    self.faults = faults
    self._rates = {"open": faults.open_failure_rate, "exec": faults.exec_failure_rate,
                   "grade": faults.grade_failure_rate}
    self._streams = {kind: random.Random(f"{faults.seed}:{kind}") for kind in KINDS}
    self._lock = threading.Lock()
    self.calls = {kind: 0 for kind in KINDS}
    self.failures = {kind: 0 for kind in KINDS}

  def maybe_fail(self, kind: str, what: str) -> None:
    """Raises InjectedFault for the configured share of `kind` calls; `what` names the call."""
    rate = self._rates[kind]
    if rate <= 0:
      return
    with self._lock:
      self.calls[kind] += 1
      fail = self._streams[kind].random() < rate
      if fail:
        self.failures[kind] += 1
    if fail:
      raise InjectedFault(f"injected {kind} failure ({what}; sandbox.fault_injection."
                          f"{kind}_failure_rate={rate})")


# One injector per setting, so every session of a run draws from the same streams.
_injectors: dict[FaultInjection, FaultInjector] = {}
_injectors_lock = threading.Lock()


def injector_for(faults: FaultInjection) -> FaultInjector:
  with _injectors_lock:
    if faults not in _injectors:
      _injectors[faults] = FaultInjector(faults)
    return _injectors[faults]


def reset() -> None:
  """Forgets every injector: the next run's streams start from their seeds again."""
  with _injectors_lock:
    _injectors.clear()


class FaultySession(Session):
  """A session whose calls fail at `exec_failure_rate`; everything else is the wrapped one's."""

  def __init__(self, session: Session, injector: FaultInjector):
    self._session = session
    self._injector = injector
    self.config = session.config

  @property
  def supports_verdict_channel(self) -> bool:
    return getattr(self._session, "supports_verdict_channel", False)

  def exec(self, command: str, timeout: float | None = None,
           env: Mapping[str, str] | None = None, **kwargs) -> ExecResult:
    self._injector.maybe_fail("exec", "exec")
    return self._session.exec(command, timeout=timeout, env=env, **kwargs)

  def read_file(self, path: str) -> str:
    self._injector.maybe_fail("exec", "read_file")
    return self._session.read_file(path)

  def write_file(self, path: str, content: str | bytes) -> None:
    self._injector.maybe_fail("exec", "write_file")
    self._session.write_file(path, content)

  def list_files(self, path: str = ".") -> list[str]:
    self._injector.maybe_fail("exec", "list_files")
    return self._session.list_files(path)

  def export_workspace(self, dest_dir: str) -> None:
    self._session.export_workspace(dest_dir)

  def close(self) -> None:
    self._session.close()

  @property
  def closed(self) -> bool:
    return self._session.closed

  def __getattr__(self, name: str) -> Any:
    # Backend extras (a docker session's container id, ...) stay reachable.
    if name == "_session":  # not set yet (a failed __init__): no recursion
      raise AttributeError(name)
    return getattr(self._session, name)


def with_faults(factory: Callable[[str, SandboxConfig], Session],
                faults: FaultInjection) -> Callable[[str, SandboxConfig], Session]:
  """`factory` (any backend) whose opens fail at `open_failure_rate` and whose sessions'
  calls fail at `exec_failure_rate`; `factory` itself unchanged when no rate is set."""
  if not faults.enabled:
    return factory
  injector = injector_for(faults)

  def open_faulty(workspace_dir: str, config: SandboxConfig) -> Session:
    injector.maybe_fail("open", "open_session")
    session = factory(workspace_dir, config)
    return FaultySession(session, injector) if faults.exec_failure_rate > 0 else session

  return open_faulty
