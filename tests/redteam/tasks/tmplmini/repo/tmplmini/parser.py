"""Parsing tokens into a tree of nodes, and expressions into a path or literal and its filters."""

import re

from tmplmini.errors import TemplateSyntaxError
from tmplmini.filters import FILTERS

_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+))*\Z")
_INT = re.compile(r"-?[0-9]+\Z")
_FILTER = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\Z", re.S)
_FOR = re.compile(r"for\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\s+(.+)\Z", re.S)


class Expr:
  """A path (a list of names) or a literal, then filters [(name, args)]."""

  def __init__(self, path, literal, filters):
    self.path = path
    self.literal = literal
    self.filters = filters


class Cond:
  def __init__(self, negate, expr):
    self.negate = negate
    self.expr = expr


class Text:
  def __init__(self, text):
    self.text = text


class Output:
  def __init__(self, expr):
    self.expr = expr


class For:
  def __init__(self, name, expr):
    self.name = name
    self.expr = expr
    self.body = []
    self.else_body = []
    self.in_else = False


class If:
  def __init__(self, cond):
    self.branches = [(cond, [])]
    self.else_body = []
    self.in_else = False


def split_outside_quotes(text, separator):
  """`text` split at every `separator` that is not inside a quoted string."""
  parts, current, quote = [], [], None
  for ch in text:
    if quote:
      if ch == quote:
        quote = None
    elif ch in "'\"":
      quote = ch
    elif ch == separator:
      parts.append("".join(current))
      current = []
      continue
    current.append(ch)
  if quote:
    raise TemplateSyntaxError(f"unterminated string in {text!r}")
  parts.append("".join(current))
  return parts


def parse_literal(text):
  """A string in single or double quotes (taken as it is written: no escapes) or an int."""
  text = text.strip()
  if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
    return text[1:-1]
  if _INT.match(text):
    return int(text)
  raise TemplateSyntaxError(f"not a literal: {text!r}")


def parse_expression(text):
  parts = split_outside_quotes(text, "|")
  base = parts[0].strip()
  if not base:
    raise TemplateSyntaxError(f"empty expression: {text!r}")
  if _PATH.match(base):
    expr = Expr(base.split("."), None, [])
  else:
    expr = Expr(None, parse_literal(base), [])
  for part in parts[1:]:
    m = _FILTER.match(part.strip())
    if not m:
      raise TemplateSyntaxError(f"bad filter: {part.strip()!r}")
    name, arg_text = m.group(1), m.group(2)
    if name not in FILTERS:
      raise TemplateSyntaxError(f"unknown filter: {name!r}")
    args = ()
    if arg_text is not None and arg_text.strip():
      args = tuple(parse_literal(arg) for arg in arg_text.split(","))
    _, fewest, most = FILTERS[name]
    if not fewest <= len(args) <= most:
      raise TemplateSyntaxError(f"{name} takes {fewest} to {most} arguments, not {len(args)}")
    expr.filters.append((name, args))
  return expr


def parse_condition(text):
  negate = False
  if text.startswith("not ") or text.startswith("not\t"):
    negate, text = True, text[4:]
  return Cond(negate, parse_expression(text))


def _body(node):
  if isinstance(node, For):
    return node.else_body if node.in_else else node.body
  if isinstance(node, If):
    return node.else_body if node.in_else else node.branches[-1][1]
  return node


def parse(tokens):
  """Tokens -> a list of nodes (Text, Output, For, If)."""
  root = []
  stack = [root]
  for kind, value in tokens:
    if kind == "text":
      _body(stack[-1]).append(Text(value))
      continue
    if kind == "var":
      _body(stack[-1]).append(Output(parse_expression(value)))
      continue
    word = value.split(None, 1)[0] if value.split() else ""
    top = stack[-1]
    if word == "for":
      m = _FOR.match(value)
      if not m:
        raise TemplateSyntaxError(f"bad for tag: {value!r}")
      node = For(m.group(1), parse_expression(m.group(2)))
      _body(top).append(node)
      stack.append(node)
    elif word == "if":
      node = If(parse_condition(value[2:].strip()))
      _body(top).append(node)
      stack.append(node)
    elif word == "elif":
      if not isinstance(top, If) or top.in_else:
        raise TemplateSyntaxError("elif outside an if block")
      top.branches.append((parse_condition(value[4:].strip()), []))
    elif word == "else" and value == "else":
      if not isinstance(top, (If, For)) or top.in_else:
        raise TemplateSyntaxError("else outside an if or for block")
      top.in_else = True
    elif word in ("endfor", "endif") and value == word:
      if not isinstance(top, For if word == "endfor" else If):
        raise TemplateSyntaxError(f"unexpected {word}")
      stack.pop()
    else:
      raise TemplateSyntaxError(f"unknown tag: {value!r}")
  if len(stack) > 1:
    raise TemplateSyntaxError(f"unclosed {'for' if isinstance(stack[-1], For) else 'if'} block")
  return root
