import pytest

from exprcalc import evaluate, tokenize


def test_precedence_of_products():
  assert evaluate("1 + 2 * 3") == 7
  assert evaluate("(1 + 2) * 3") == 9


def test_division_kinds():
  assert evaluate("7 / 2") == 3.5
  assert evaluate("7 // 2") == 3 and isinstance(evaluate("7 // 2"), int)


def test_tokens():
  assert tokenize("2**3") == [("num", 2), ("op", "**"), ("num", 3)]


def test_malformed():
  with pytest.raises(ValueError):
    evaluate("2 +")
