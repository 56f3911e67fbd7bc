"""Brace expansion: "{src,lib}/*.py" -> ["src/*.py", "lib/*.py"]."""


def _closing(pattern, start):
  """(index of the "}" closing the "{" at `start`, indexes of its top-level commas), or None
  when it is never closed."""
  depth = 0
  commas = []
  i = start
  while i < len(pattern):
    c = pattern[i]
    if c == "\\":
      i += 2
      continue
    if c == "{":
      depth += 1
    elif c == "}":
      depth -= 1
      if depth == 0:
        return i, commas
    elif c == "," and depth == 1:
      commas.append(i)
    i += 1
  return None


def expand_braces(pattern):
  """Every pattern that `pattern`'s braces stand for, in order (duplicates kept). Braces may nest;
  a "{" that is never closed, and an escaped "\\{", stay as they are."""
  i = 0
  while i < len(pattern):
    c = pattern[i]
    if c == "\\":
      i += 2
      continue
    if c == "{":
      found = _closing(pattern, i)
      if found is not None:
        close, commas = found
        head, tail = pattern[:i], pattern[close + 1:]
        bounds = [i] + commas + [close]
        tails = expand_braces(tail)
        out = []
        for a, b in zip(bounds, bounds[1:]):
          for alternative in expand_braces(pattern[a + 1:b]):
            out.extend(head + alternative + rest for rest in tails)
        return out
    i += 1
  return [pattern]
