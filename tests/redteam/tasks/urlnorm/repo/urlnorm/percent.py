"""Percent-encoding normalisation."""

from urllib.parse import unquote


def normalize_percent(text):
  """`text` with its percent-escapes in normal form."""
  return unquote(text)
