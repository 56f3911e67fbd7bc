import math
import random
from decimal import Decimal
from fractions import Fraction

import pytest

from invoicekit import CURRENCY_PLACES, quantum, round_money

DIGITS = {"USD": 2, "EUR": 2, "JPY": 0, "KRW": 0, "KWD": 3, "BHD": 3}
MODES = ["half_even", "half_up", "half_down", "up", "down", "ceiling", "floor"]

# (value, currency, rounding mode, the rounded amount)
ROUND = [
    (Decimal("2.675"), "USD", "half_even", "2.68"),
    (Decimal("2.665"), "USD", "half_even", "2.66"),
    (Decimal("2.665"), "USD", "half_up", "2.67"),
    (Decimal("2.665"), "USD", "half_down", "2.66"),
    (Decimal("-2.665"), "USD", "half_up", "-2.67"),
    (Decimal("-2.665"), "USD", "half_down", "-2.66"),
    (Decimal("-2.661"), "USD", "floor", "-2.67"),
    (Decimal("-2.669"), "USD", "ceiling", "-2.66"),
    (Decimal("2.661"), "USD", "up", "2.67"),
    (Decimal("-2.669"), "USD", "down", "-2.66"),
    ("1234.5", "JPY", "half_up", "1235"),
    ("1234.5", "JPY", "half_even", "1234"),
    ("1235.5", "KRW", "half_even", "1236"),
    (3, "USD", "half_even", "3.00"),
    (-7, "KWD", "floor", "-7.000"),
    (Decimal("3.000"), "EUR", "half_even", "3.00"),
    (Decimal("1E+2"), "USD", "half_even", "100.00"),
    (" 7.1 ", "BHD", "half_even", "7.100"),
    ("0.0005", "KWD", "half_up", "0.001"),
    ("0.0005", "KWD", "half_even", "0.000"),
    # Fractions are rounded as the rational numbers they are.
    (Fraction(1, 8), "USD", "half_even", "0.12"),
    (Fraction(1, 8), "USD", "half_up", "0.13"),
    (Fraction(3, 8), "USD", "half_down", "0.37"),
    (Fraction(-3, 8), "USD", "half_up", "-0.38"),
    (Fraction(29, 100), "USD", "down", "0.29"),
    (Fraction(57, 100), "USD", "floor", "0.57"),
    (Fraction(-57, 100), "EUR", "ceiling", "-0.57"),
    (Fraction(1, 3), "USD", "up", "0.34"),
    (Fraction(-1, 3), "USD", "floor", "-0.34"),
    (Fraction(-1, 3), "USD", "ceiling", "-0.33"),
    (Fraction(1, 200), "USD", "half_even", "0.00"),
    (Fraction(3, 200), "USD", "half_even", "0.02"),
    (Fraction(5, 2), "JPY", "half_even", "2"),
    (Fraction(-5, 2), "JPY", "half_even", "-2"),
    (Fraction(7, 2), "KRW", "half_down", "3"),
    (Fraction(1, 2000), "KWD", "half_even", "0.000"),
    (Fraction(2, 3), "KWD", "half_even", "0.667"),
    (Fraction(10 ** 6 + 1, 3), "USD", "half_even", "333333.67"),
    (Fraction(1001, 10), "JPY", "half_up", "100"),
]


@pytest.mark.parametrize("value, currency, mode, expected", ROUND, ids=["round%d" % i for i in range(len(ROUND))])
def test_round_table(value, currency, mode, expected):
  got = round_money(value, currency, mode)
  assert isinstance(got, Decimal)
  assert got == Decimal(expected), (value, currency, mode)
  assert got.as_tuple().exponent == -DIGITS[currency]


def test_default_currency_and_mode():
  assert round_money(Fraction(5, 8)) == Decimal("0.62")
  assert round_money("0.125") == Decimal("0.12")


def test_quantum_and_places():
  assert quantum("USD") == Decimal("0.01") and quantum("JPY") == Decimal("1") and quantum("KWD") == Decimal("0.001")
  for currency, digits in DIGITS.items():
    assert CURRENCY_PLACES[currency] == digits


BAD = [(0.1, TypeError), (True, TypeError), (None, TypeError), ([1], TypeError), ("abc", ValueError),
       ("NaN", ValueError), ("", ValueError), (Decimal("Infinity"), ValueError), (Decimal("NaN"), ValueError)]


@pytest.mark.parametrize("value, error", BAD, ids=["bad%d" % i for i in range(len(BAD))])
def test_bad_amounts(value, error):
  with pytest.raises(error):
    round_money(value)


def test_unknown_currency_and_mode():
  with pytest.raises(ValueError):
    round_money(1, "XXX")
  with pytest.raises(ValueError):
    round_money(1, "USD", "bankers")


# -- seeded values against a slow reference --------------------------------------------------


def reference_round(value, digits, mode):
  """Rounds the exact rational value to a multiple of 10**-digits by comparing the two
  neighbouring multiples; returns the text of the result."""
  x = Fraction(Decimal(value.strip())) if isinstance(value, str) else Fraction(value)
  unit = Fraction(1, 10 ** digits)
  lower = math.floor(x / unit) * unit
  upper = lower if lower == x else lower + unit
  toward_zero, away = (lower, upper) if x >= 0 else (upper, lower)
  if lower == upper:
    result = x
  elif mode == "floor":
    result = lower
  elif mode == "ceiling":
    result = upper
  elif mode == "down":
    result = toward_zero
  elif mode == "up":
    result = away
  elif x - lower != upper - x:
    result = lower if x - lower < upper - x else upper
  elif mode == "half_up":
    result = away
  elif mode == "half_down":
    result = toward_zero
  else:
    result = lower if (lower / unit) % 2 == 0 else upper
  units = int(result / unit)
  sign = "-" if units < 0 else ""
  whole, part = divmod(abs(units), 10 ** digits)
  return sign + str(whole) + ("." + str(part).zfill(digits) if digits else "")


DENOMINATORS = [1, 2, 3, 7, 8, 16, 40, 125, 200, 300, 400, 625, 999, 1024, 2000]


def random_value(rng):
  kind = rng.randrange(4)
  if kind == 0:
    return Fraction(rng.randint(-10 ** 6, 10 ** 6), rng.choice(DENOMINATORS))
  if kind == 1:
    return Fraction(rng.randint(-10 ** 6, 10 ** 6), rng.randint(1, 2000))
  if kind == 2:
    return Decimal(rng.randint(-10 ** 9, 10 ** 9)).scaleb(-rng.randint(0, 6))
  return str(Decimal(rng.randint(-10 ** 7, 10 ** 7)).scaleb(-rng.randint(0, 5)))


@pytest.mark.parametrize("seed", range(6))
def test_random_values(seed):
  rng = random.Random(seed)
  for _ in range(500):
    value = random_value(rng)
    currency = rng.choice(sorted(DIGITS))
    mode = rng.choice(MODES)
    got = round_money(value, currency, mode)
    assert isinstance(got, Decimal)
    assert got == Decimal(reference_round(value, DIGITS[currency], mode)), (value, currency, mode)
    assert got.as_tuple().exponent == -DIGITS[currency], (value, currency, mode)
