"""Recursive-descent evaluation of the tokens of tokenizer.py, with Python's precedence."""

import operator

from exprcalc.tokenizer import tokenize

_ADDITIVE = {"+": operator.add, "-": operator.sub}
_MULTIPLICATIVE = {"*": operator.mul, "/": operator.truediv, "//": operator.floordiv, "%": operator.mod}


class _Parser:

  def __init__(self, tokens):
    self.tokens = tokens
    self.pos = 0

  def peek(self):
    return self.tokens[self.pos] if self.pos < len(self.tokens) else None

  def take(self):
    token = self.peek()
    if token is None:
      raise ValueError("unexpected end of expression")
    self.pos += 1
    return token

  def peek_op(self, table):
    token = self.peek()
    return token[1] if token is not None and token[0] == "op" and token[1] in table else None

  def expr(self):
    value = self.term()
    while (op := self.peek_op(_ADDITIVE)) is not None:
      self.take()
      value = _ADDITIVE[op](value, self.term())
    return value

  def term(self):
    value = self.power()
    while (op := self.peek_op(_MULTIPLICATIVE)) is not None:
      self.take()
      value = _MULTIPLICATIVE[op](value, self.power())
    return value

  def power(self):
    value = self.unary()
    while self.peek() == ("op", "**"):
      self.take()
      value = value ** self.unary()
    return value

  def unary(self):
    token = self.peek()
    if token == ("op", "-"):
      self.take()
      return -self.unary()
    if token == ("op", "+"):
      self.take()
      return +self.unary()
    return self.atom()

  def atom(self):
    kind, value = self.take()
    if kind == "num":
      return value
    if value == "(":
      inner = self.expr()
      if self.take() != ("op", ")"):
        raise ValueError("expected ')'")
      return inner
    raise ValueError(f"unexpected {value!r}")


def evaluate(text):
  """The value of the arithmetic expression `text`, as Python computes it."""
  parser = _Parser(tokenize(text))
  if not parser.tokens:
    raise ValueError("empty expression")
  value = parser.expr()
  if parser.peek() is not None:
    raise ValueError(f"unexpected {parser.peek()[1]!r} after the expression")
  return value
