"""Parsing and formatting of compact duration strings such as '1h 30m' or '2m 5ms'."""

import re

# Unit name -> length in seconds. register_unit() adds to this table.
UNITS = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1, "ms": 0.001}

# The units format_duration() writes, largest first, with their length in milliseconds.
_FORMAT_UNITS = (("w", 604800000), ("d", 86400000), ("h", 3600000), ("m", 60000), ("s", 1000), ("ms", 1))


def register_unit(name, seconds):
  """Makes `name` (ASCII letters) a unit of `seconds` seconds for parse_duration()."""
  if not name or not name.isascii() or not name.isalpha():
    raise ValueError(f"a unit name is one or more ASCII letters: {name!r}")
  if not seconds > 0:
    raise ValueError(f"a unit must be longer than zero seconds: {seconds!r}")
  UNITS[name] = seconds


def _part_pattern():
  units = "|".join(re.escape(name) for name in UNITS)
  return re.compile(r"\s*(\d+(?:\.\d+)?)\s*(" + units + r")")


def parse_duration(text):
  """Seconds (a float) in a duration string: '1h 30m' -> 5400.0, '-2m' -> -120.0."""
  body = text.strip()
  sign = 1
  if body.startswith("-"):
    sign, body = -1, body[1:]
  if not body:
    raise ValueError(f"not a duration: {text!r}")
  pattern = _part_pattern()
  total, pos = 0.0, 0
  while pos < len(body):
    match = pattern.match(body, pos)
    if match is None:
      raise ValueError(f"not a duration: {text!r} (at {body[pos:]!r})")
    total += float(match.group(1)) * UNITS[match.group(2)]
    pos = match.end()
  return sign * total


def format_duration(seconds):
  """The shortest duration string for `seconds`, to the millisecond: 5400 -> '1h 30m'."""
  sign = "-" if seconds < 0 else ""
  rest = round(abs(seconds) * 1000)
  parts = []
  for name, size in _FORMAT_UNITS:
    count, rest = divmod(rest, size)
    if count:
      parts.append(f"{count}{name}")
  return sign + (" ".join(parts) or "0s")
