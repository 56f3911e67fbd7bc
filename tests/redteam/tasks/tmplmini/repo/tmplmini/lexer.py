"""Splitting a template's source into text and tags, with whitespace control."""

import re

from tmplmini.errors import TemplateSyntaxError

_TAG = re.compile(r"\{\{(.*?)\}\}|\{%(.*?)%\}|\{#(.*?)#\}", re.S)
_OPENERS = ("{{", "{%", "{#")


def _check_text(text, source, offset):
  for opener in _OPENERS:
    where = text.find(opener)
    if where >= 0:
      line = source.count("\n", 0, offset + where) + 1
      raise TemplateSyntaxError(f"unclosed {opener!r} tag on line {line}")


def tokenize(source):
  """The source as a list of (kind, value) tokens: ('text', str), ('var', expression) and
  ('block', statement); comments are dropped. A '-' just inside a tag's delimiter removes the
  whitespace next to the tag on that side."""
  tokens = []
  pos = 0
  strip_next = False
  for m in _TAG.finditer(source):
    text = source[pos:m.start()]
    _check_text(text, source, pos)
    kind = "var" if m.group(1) is not None else "block" if m.group(2) is not None else "comment"
    inner = m.group(1) if kind == "var" else m.group(2) if kind == "block" else m.group(3)
    strip_left = inner.startswith("-")
    if strip_left:
      inner = inner[1:]
    strip_right = inner.endswith("-")
    if strip_right:
      inner = inner[:-1]
    if strip_next:
      text = text.lstrip(" \t")
    if strip_left:
      text = text.rstrip()
    if text:
      tokens.append(("text", text))
    if kind != "comment":
      tokens.append((kind, inner.strip()))
    strip_next = strip_right
    pos = m.end()
  text = source[pos:]
  _check_text(text, source, pos)
  if strip_next:
    text = text.lstrip(" \t")
  if text:
    tokens.append(("text", text))
  return tokens
