"""Semantic versions (semver.org 2.0.0): parsing and precedence."""

import functools
import re

_VERSION = re.compile(r"v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
                      r"(?:-((?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
                      r"(?:\.(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*))?"
                      r"(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?")


@functools.total_ordering
class Version:
  """major.minor.patch with an optional pre-release tag (a tuple of identifiers); build
  metadata is dropped, as it plays no part in precedence."""

  __slots__ = ("major", "minor", "patch", "pre")

  def __init__(self, major, minor, patch, pre=()):
    self.major, self.minor, self.patch, self.pre = major, minor, patch, tuple(pre)

  @property
  def release(self):
    return (self.major, self.minor, self.patch)

  def __eq__(self, other):
    if not isinstance(other, Version):
      return NotImplemented
    return compare(self, other) == 0

  def __lt__(self, other):
    if not isinstance(other, Version):
      return NotImplemented
    return compare(self, other) < 0

  def __hash__(self):
    return hash((self.release, self.pre))

  def __str__(self):
    text = f"{self.major}.{self.minor}.{self.patch}"
    return text + "-" + ".".join(self.pre) if self.pre else text

  def __repr__(self):
    return f"Version({self.major}, {self.minor}, {self.patch}, {self.pre!r})"


def parse(text):
  """The Version that `text` spells (a Version is returned as it is); ValueError if none."""
  if isinstance(text, Version):
    return text
  match = _VERSION.fullmatch(text.strip()) if isinstance(text, str) else None
  if not match:
    raise ValueError(f"not a semantic version: {text!r}")
  major, minor, patch, pre = match.groups()
  return Version(int(major), int(minor), int(patch), pre.split(".") if pre else ())


def _compare_pre(a, b):
  """Precedence of two pre-release tags; an empty tag (a release) ranks above any other."""
  if not a or not b:
    return (not a) - (not b)
  for x, y in zip(a, b):
    if x != y:
      return -1 if x < y else 1
  return (len(a) > len(b)) - (len(a) < len(b))


def compare(a, b):
  """-1, 0 or 1 as version `a` has lower, equal or higher precedence than `b`."""
  a, b = parse(a), parse(b)
  if a.release != b.release:
    return -1 if a.release < b.release else 1
  return _compare_pre(a.pre, b.pre)
