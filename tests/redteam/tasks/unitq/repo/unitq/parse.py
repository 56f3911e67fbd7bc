"""Reading unit expressions: symbols joined by '*' and '/', left to right, with integer exponents
('^2', '^-1') and parentheses, e.g. 'kg*m/s^2', 'm/s*kg', 'J/(mol*K)', '1/s'."""

import re

from unitq.errors import UnitError
from unitq.quantity import Unit
from unitq.registry import resolve

_TOKEN = re.compile(r"\s*(?:([A-Za-z\u00b5]+)|(\d+)|(\^)|(-)|(\*)|(/)|(\()|(\)))")


def tokenize(text):
  tokens, pos = [], 0
  text = text.rstrip()
  while pos < len(text):
    match = _TOKEN.match(text, pos)
    if not match:
      raise UnitError("unexpected character in unit %r at %d" % (text, pos))
    kind = match.lastindex
    tokens.append(("sym" if kind == 1 else "int" if kind == 2 else "op", match.group(kind)))
    pos = match.end()
  return tokens


class _Parser:

  def __init__(self, text):
    self.text = text
    self.tokens = tokenize(text)
    self.pos = 0

  def peek(self):
    return self.tokens[self.pos] if self.pos < len(self.tokens) else (None, None)

  def take(self):
    tok = self.peek()
    if tok[0] is None:
      raise UnitError("unit %r ends too early" % self.text)
    self.pos += 1
    return tok

  def expr(self):
    unit = self.term()
    divide = False
    while self.peek() in (("op", "*"), ("op", "/")):
      _, op = self.take()
      right = self.term()
      divide = divide or op == "/"
      unit = unit / right if divide else unit * right
    return unit

  def term(self):
    unit = self.atom()
    if self.peek() == ("op", "^"):
      self.take()
      sign = 1
      if self.peek() == ("op", "-"):
        self.take()
        sign = -1
      kind, value = self.take()
      if kind != "int":
        raise UnitError("exponent expected in %r" % self.text)
      unit = unit ** (sign * int(value))
    return unit

  def atom(self):
    kind, value = self.take()
    if kind == "sym":
      scale, dim = resolve(value)
      return Unit(scale, dim, value)
    if kind == "int" and value == "1":
      return Unit.one()
    if (kind, value) == ("op", "("):
      unit = self.expr()
      if self.take() != ("op", ")"):
        raise UnitError("')' expected in %r" % self.text)
      return unit
    raise UnitError("unexpected %r in unit %r" % (value, self.text))


def parse_unit(text):
  """The Unit a unit expression stands for; UnitError for anything else."""
  if isinstance(text, Unit):
    return text
  if not isinstance(text, str):
    raise TypeError("a unit is a string or a Unit, not %s" % type(text).__name__)
  parser = _Parser(text)
  if not parser.tokens:
    raise UnitError("empty unit")
  unit = parser.expr()
  if parser.pos != len(parser.tokens):
    raise UnitError("unexpected %r in unit %r" % (parser.peek()[1], text))
  return unit
