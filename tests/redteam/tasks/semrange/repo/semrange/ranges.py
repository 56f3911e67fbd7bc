"""npm-style version ranges: comparator sets joined by `||`."""

import re

from semrange.version import Version, compare, parse

_COMPARATOR = re.compile(r"(\^|~|>=|<=|>|<|=)?(\S+)")
_TESTS = {
    "=": lambda c: c == 0,
    ">": lambda c: c > 0,
    ">=": lambda c: c >= 0,
    "<": lambda c: c < 0,
    "<=": lambda c: c <= 0,
}


def _primitives(op, version):
  """A comparator of the range grammar as a list of (operator, Version) primitives."""
  if op == "^":
    return [(">=", version), ("<", Version(version.major + 1, 0, 0, ("0",)))]
  if op == "~":
    return [(">=", version), ("<", Version(version.major, version.minor + 1, 0, ("0",)))]
  return [(op or "=", version)]


class Range:
  """A parsed range; `version in Range(text)` tells whether the version satisfies it."""

  def __init__(self, text):
    self.text = text
    self.sets = []  # one (primitives, named versions) pair per comparator set
    for alternative in text.split("||"):
      tokens = alternative.split()
      if not tokens:
        raise ValueError(f"empty comparator set in range {text!r}")
      primitives, named = [], []
      for token in tokens:
        if token == "*":
          continue
        match = _COMPARATOR.fullmatch(token)
        if not match:
          raise ValueError(f"bad comparator {token!r} in range {text!r}")
        version = parse(match.group(2))
        primitives += _primitives(match.group(1), version)
        named.append(version)
      self.sets.append((primitives, named))

  def __contains__(self, version):
    version = parse(version)
    for primitives, named in self.sets:
      if version.pre and not any(v.pre and v.release == version.release for v in named):
        continue
      if all(_TESTS[op](compare(version, bound)) for op, bound in primitives):
        return True
    return False

  def __repr__(self):
    return f"Range({self.text!r})"


def satisfies(version, text):
  """Whether `version` satisfies the range `text`."""
  return parse(version) in Range(text)


def max_satisfying(versions, text):
  """The highest of `versions` that satisfies the range `text`, or None."""
  rng = Range(text)
  best = None
  for version in map(parse, versions):
    if version in rng and (best is None or version > best):
      best = version
  return best
