import ast
import operator
import random

import pytest

from exprcalc import evaluate, tokenize

TABLE = [
    ("1 + 2 * 3", 7), ("(1 + 2) * 3", 9), ("10 - 4 - 3", 3), ("2 * 3 + 4 * 5", 26), ("7 // 2", 3),
    ("-7 // 2", -4), ("7 % 3", 1), ("7 / 2", 3.5), ("1.5 * 4", 6.0), (".5 + 7.", 7.5), ("8 / 4 / 2", 1.0),
    ("2 ** 10", 1024), ("2 ** 3 ** 2", 512), ("2 ** 2 ** 3", 256), ("3 ** 2 ** 0", 3), ("-2 ** 2", -4),
    ("-3 ** 2", -9), ("(-2) ** 2", 4), ("2 ** -1", 0.5), ("-2 ** -2", -0.25), ("+4 ** 2", 16),
    ("2 * 3 ** 2", 18), ("-2 ** 3 ** 2", -512), ("1 + -2 ** 2", -3), ("(2 ** 3) ** 2", 64),
    ("10 - 2 ** 2 ** 2", -6), ("2 ** 3 * 2", 16), ("--2", 2), ("2 * -3", -6), ("-(1 + 2) * 3", -9),
]


@pytest.mark.parametrize("text,expected", TABLE)
def test_table(text, expected):
  got = evaluate(text)
  assert got == pytest.approx(expected)
  assert isinstance(got, float) == isinstance(expected, float)


_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}


def trusted(text):
  """Python's own reading of `text`, evaluated node by node (numbers and arithmetic only)."""

  def walk(node):
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
      return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
      value = walk(node.operand)
      return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
      return _BINARY[type(node.op)](walk(node.left), walk(node.right))
    raise TypeError(f"not arithmetic: {ast.dump(node)}")

  return walk(ast.parse(text, mode="eval").body)


SUM, PRODUCT, UNARY, POWER, ATOM = range(1, 6)
LEVELS = {"+": SUM, "-": SUM, "*": PRODUCT, "/": PRODUCT, "//": PRODUCT, "%": PRODUCT}


class TooBig(Exception):
  pass


def power_chain(rng, length):
  """'b ** b ** ... ** k' with small integer bases: (text, value)."""
  base = rng.randint(0, 4) if length > 1 or rng.random() < 0.5 else rng.randint(1, 3)
  if length == 1:
    exponent = -rng.randint(1, 3) if base and rng.random() < 0.3 else rng.randint(0, 3)
    return f"{base} ** {exponent}", base ** exponent
  text, exponent = power_chain(rng, length - 1)
  if exponent > 30:
    raise TooBig(text)
  return f"{base} ** {text}", base ** exponent


def wrap(part, level):
  text, own = part
  return text if own >= level else f"({text})"


def expression(rng, depth):
  """(text, level) of a random expression; level is how tightly its outermost operator binds."""
  roll = rng.random()
  if depth == 0 or roll < 0.2:
    return str(rng.randint(0, 9)), ATOM
  if roll < 0.45:
    return power_chain(rng, rng.randint(1, 3))[0], POWER
  if roll < 0.6:
    return "-" + wrap(expression(rng, depth - 1), UNARY), UNARY
  symbol = rng.choice(sorted(LEVELS))
  level = LEVELS[symbol]
  left, right = expression(rng, depth - 1), expression(rng, depth - 1)
  return f"{wrap(left, level)} {symbol} {wrap(right, level + 1)}", level


def random_cases(seed, count=150):
  rng = random.Random(seed)
  cases = []
  while len(cases) < count:
    try:
      text = expression(rng, 4)[0]
      cases.append((text, trusted(text)))
    except (TooBig, ZeroDivisionError):
      continue
  return cases


@pytest.mark.parametrize("seed", [22, 27, 75])
def test_random_expressions(seed):
  for text, expected in random_cases(seed):
    got = evaluate(text)
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-12), text
    assert isinstance(got, float) == isinstance(expected, float), text


def test_tokens():
  assert tokenize("2**-3 //4.5") == [("num", 2), ("op", "**"), ("op", "-"), ("num", 3), ("op", "//"), ("num", 4.5)]


def test_errors():
  for text in ("", "  ", "2 **", "(1 + 2", "1 + 2)", "3 $ 4", "* 2", "2 3", "()"):
    with pytest.raises(ValueError):
      evaluate(text)
  for text in ("1 / 0", "5 // (2 - 2)", "0 ** -1", "3 % 0"):
    with pytest.raises(ZeroDivisionError):
      evaluate(text)
