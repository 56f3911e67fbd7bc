"""Splits an arithmetic expression into ("num", value) and ("op", symbol) tokens."""

import re

# A number (12, 3.5, .5, 7.) or an operator; '**' and '//' before their one-character prefixes.
_TOKEN = re.compile(r"\s*(?:(\d+\.\d*|\.\d+|\d+)|(\*\*|//|[-+*/%()]))")


def tokenize(text):
  """The tokens of `text`; ValueError on a character that starts no token."""
  tokens = []
  body = text.rstrip()
  pos = 0
  while pos < len(body):
    match = _TOKEN.match(body, pos)
    if match is None:
      raise ValueError(f"unexpected character at {pos}: {body[pos:]!r}")
    number, op = match.groups()
    if number is not None:
      tokens.append(("num", float(number) if "." in number else int(number)))
    else:
      tokens.append(("op", op))
    pos = match.end()
  return tokens
