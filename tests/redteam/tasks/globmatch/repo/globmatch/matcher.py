"""Translating glob patterns into regular expressions, and matching paths with them."""

import functools
import re

from globmatch.braces import expand_braces


def _translate_one(pattern):
  """The regular expression of one brace-free pattern."""
  out = []
  i, n = 0, len(pattern)
  while i < n:
    c = pattern[i]
    if c == "*":
      if pattern.startswith("**", i):
        out.append(".*")
        i += 2
        continue
      out.append("[^/]*")
    elif c == "?":
      out.append("[^/]")
    elif c == "\\" and i + 1 < n:
      out.append("\\" + pattern[i + 1])
      i += 2
      continue
    elif c == "[":
      j = pattern.find("]", i + 2)
      if j < 0:
        out.append("\\[")
      else:
        out.append(pattern[i:j + 1])
        i = j + 1
        continue
    else:
      out.append(c)
    i += 1
  return "".join(out)


def translate(pattern):
  """The regular expression (source text) that matches exactly the paths `pattern` matches."""
  alternatives = [_translate_one(p) for p in expand_braces(pattern)]
  return "(?s:" + "|".join("(?:%s)" % a for a in alternatives) + r")\Z"


@functools.lru_cache(maxsize=512)
def compile(pattern):
  """The compiled regular expression of `pattern` (cached)."""
  return re.compile(translate(pattern))


def match(pattern, path):
  """Whether the whole of `path` matches `pattern`."""
  return compile(pattern).match(path) is not None


def filter_paths(paths, patterns):
  """The paths (in their order) that `patterns` select. `patterns` is one pattern or a list; in a
  list, a pattern starting with "!" excludes what it matches, and the last pattern that matches a
  path decides (a path no pattern matches is not selected)."""
  if isinstance(patterns, str):
    patterns = [patterns]
  rules = [(p.startswith("!"), compile(p[1:] if p.startswith("!") else p)) for p in patterns]
  selected = []
  for path in paths:
    keep = False
    for negated, regex in rules:
      if regex.match(path) is not None:
        keep = not negated
    if keep:
      selected.append(path)
  return selected
