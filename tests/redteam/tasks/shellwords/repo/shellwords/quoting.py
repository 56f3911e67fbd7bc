"""Quoting words so that split() reads them back."""

import re

_SAFE = re.compile(r"[A-Za-z0-9_@%+=:,./-]*\Z")


def quote(s):
  """`s` as one shell word: itself when every character is safe, otherwise in single quotes."""
  if not isinstance(s, str):
    raise TypeError("quote() takes a str")
  if _SAFE.match(s):
    return s
  return "'" + s.replace("'", "'\"'\"'") + "'"


def join(words):
  """The quoted words separated by single spaces: split(join(words)) == words."""
  return " ".join(quote(w) for w in words)
