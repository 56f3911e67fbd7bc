"""Strict reads of one config section, for library modules that must stay light (no JAX).

configs/default.py is the one place a config field gets a default value: code reads each field
it uses from the config, and a missing one is a `ConfigError` naming it, never a default of the
code's own that could disagree with the config. `rl.config.validate` checks a whole config at
load; `read` and `from_section` check the section a library object is built from (a
ConfigDict such as `default.get_config().reward` with fields changed, or a mapping of every
field).
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


class ConfigError(ValueError):
  """An invalid config field; the message names the field."""


def missing(dotted: str) -> ConfigError:
  """The error for a field absent from a config: `dotted` as "algo.lam"."""
  return ConfigError(f"config.{dotted} is missing (every field of configs/default.py must be set; "
                     "derive a config from it)")


def read(section: Any, name: str, path: str) -> Any:
  """`section[name]`, where `section` is `config.<path>` (a ConfigDict or a mapping)."""
  try:
    return section[name]
  except (KeyError, TypeError):
    raise missing(f"{path}.{name}") from None


def from_section(cls: type[T], section: Any, path: str) -> T:
  """The dataclass `cls` with each of its fields read from `section` (`read`); the section's
  other fields are left alone."""
  return cls(**{f.name: read(section, f.name, path) for f in dataclasses.fields(cls)})
