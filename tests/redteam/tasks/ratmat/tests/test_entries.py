from fractions import Fraction as F

import pytest

from ratmat import Matrix, to_fraction

# (entry, the exact Fraction)
ENTRIES = [
    (3, F(3)), (-7, F(-7)), (F(2, 3), F(2, 3)), ("5", F(5)), (" -12 ", F(-12)), ("3/4", F(3, 4)), ("-2/6", F(-1, 3)),
    ("0.1", F(1, 10)), ("0.2", F(1, 5)), ("0.3", F(3, 10)), ("-0.125", F(-1, 8)), ("2.675", F(107, 40)),
    ("1.005", F(201, 200)), ("10.5", F(21, 2)), ("1e3", F(1000)), ("2.5e-2", F(1, 40)), ("1e-3", F(1, 1000)),
    ("+0.7", F(7, 10)), (".5", F(1, 2)), ("-3.", F(-3)), ("100.01", F(10001, 100)),
]

BAD_TYPES = [0.5, 1.0, True, None, [1], complex(1, 0)]
BAD_TEXT = ["", "  ", "abc", "1/0x", "1..2", "1_000", "--1"]


@pytest.mark.parametrize("value, expected", ENTRIES, ids=["entry%d" % i for i in range(len(ENTRIES))])
def test_exact_entries(value, expected):
  got = to_fraction(value)
  assert type(got) is F and got == expected
  assert Matrix([[value]])[0, 0] == expected


@pytest.mark.parametrize("value", BAD_TYPES, ids=["type%d" % i for i in range(len(BAD_TYPES))])
def test_inexact_types(value):
  with pytest.raises(TypeError):
    to_fraction(value)


@pytest.mark.parametrize("text", BAD_TEXT, ids=["text%d" % i for i in range(len(BAD_TEXT))])
def test_bad_text(text):
  with pytest.raises(ValueError):
    to_fraction(text)


def test_decimal_prices():
  # A bill of 0.1 + 0.2 ... in exact arithmetic.
  row = Matrix([["0.1", "0.2", "0.3", "0.35", "1.15"]])
  ones = Matrix([[1]] * 5)
  assert (row * ones)[0, 0] == F(21, 10)
