"""Name-keyed registries: everything swappable is chosen by a config string.

Registration is a decorator; lookups of unknown names raise a `LookupError` that
lists the known names, so a typo in a config fails at load time with a useful
message instead of deep inside a training step.

    @ADVANTAGE_ESTIMATORS.register("gae")
    def gae_estimator(...): ...

    fn = ADVANTAGE_ESTIMATORS.get(config.algo.advantage_estimator)

Sandbox backends have their own registry in `sandbox` (`sandbox.register_backend`), which never
imports `rl`; the config check reads its names.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Iterator, TypeVar

T = TypeVar("T")


class Registry:
  """A mapping from names to objects (functions or classes) of one kind."""

  def __init__(self, kind: str):
    self.kind = kind
    self._entries: dict[str, Any] = {}

  def register(self, name: str, obj: Any = None, *, override: bool = False):
    """Registers `obj` under `name`; usable as a decorator when `obj` is None."""

    def _add(o: T) -> T:
      if not isinstance(name, str) or not name:
        raise ValueError(f"{self.kind}: registry names must be non-empty strings, got {name!r}")
      if name in self._entries and not override and self._entries[name] is not o:
        raise KeyError(f"{self.kind} {name!r} is already registered")
      self._entries[name] = o
      return o

    return _add if obj is None else _add(obj)

  def get(self, name: str) -> Any:
    _import_builtin_modules()
    try:
      return self._entries[name]
    except KeyError:
      raise LookupError(
          f"unknown {self.kind} {name!r}; known {self.kind}s: {', '.join(sorted(self._entries)) or '(none)'}"
      ) from None

  def names(self) -> list[str]:
    _import_builtin_modules()
    return sorted(self._entries)

  def __contains__(self, name: str) -> bool:
    _import_builtin_modules()
    return name in self._entries

  def __iter__(self) -> Iterator[str]:
    return iter(self.names())

  def __repr__(self) -> str:
    return f"Registry({self.kind!r}, {sorted(self._entries)})"


ADVANTAGE_ESTIMATORS = Registry("advantage estimator")
POLICY_LOSSES = Registry("policy loss")
VALUE_LOSSES = Registry("value loss")
KL_ESTIMATORS = Registry("kl estimator")
DURATION_WEIGHTS = Registry("duration weighting")
REWARD_SCHEMES = Registry("reward scheme")
ANTIHACK_RULES = Registry("anti-hack rule set")
JUDGES = Registry("judge backend")
INSTRUMENTERS = Registry("instrumenter")
TASK_SOURCES = Registry("task source")
# Plans of the scripted expert for task families that need their own (a task names its plan in
# metadata["expert_plan"]; rl.env.actors.ScriptedExpert follows it): plan(expert, request, rng)
# -> the messages of the episode.
EXPERT_PLANS = Registry("expert plan")

ALL_REGISTRIES = {
    "advantage_estimators": ADVANTAGE_ESTIMATORS,
    "policy_losses": POLICY_LOSSES,
    "value_losses": VALUE_LOSSES,
    "kl_estimators": KL_ESTIMATORS,
    "duration_weights": DURATION_WEIGHTS,
    "reward_schemes": REWARD_SCHEMES,
    "antihack_rules": ANTIHACK_RULES,
    "judges": JUDGES,
    "instrumenters": INSTRUMENTERS,
    "task_sources": TASK_SOURCES,
    "expert_plans": EXPERT_PLANS,
}

# Modules whose import registers built-in entries. A module that does not exist
# yet (a part of the project not built) is skipped; any other import error is real
# and propagates.
BUILTIN_MODULES = (
    "rl.algo.advantages",
    "rl.algo.losses",
    "rl.outcome.rewards",
    "rl.antihack",
    "rl.antihack.judge",
    "rl.env.instrumentation",
    "rl.tasks",
    "rl.tasks.mle",
    "rl.tasks.long_horizon",
)

_imported = False


def _import_builtin_modules() -> None:
  global _imported
  if _imported:
    return
  _imported = True
  for module in BUILTIN_MODULES:
    try:
      importlib.import_module(module)
    except ModuleNotFoundError as e:
      if e.name != module and not module.startswith(str(e.name) + "."):
        raise
