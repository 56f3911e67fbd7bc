import math
import random
from decimal import Decimal
from fractions import Fraction

import pytest

from invoicekit import allocate

DIGITS = {"USD": 2, "JPY": 0, "KWD": 3}

# (total, weights, currency, the parts)
ALLOCATE = [
    (Decimal("100.00"), [1, 1, 1], "USD", ["33.34", "33.33", "33.33"]),
    ("0.05", [1, 1, 1, 1, 1, 1], "USD", ["0.01", "0.01", "0.01", "0.01", "0.01", "0.00"]),
    ("0.10", [3, 7, 1], "USD", ["0.03", "0.06", "0.01"]),
    ("1.00", [0, 1, 1], "USD", ["0.00", "0.50", "0.50"]),
    ("0.01", [0, 1, 1], "USD", ["0.00", "0.01", "0.00"]),
    ("0.02", [1, 0, 2, 2], "USD", ["0.00", "0.00", "0.01", "0.01"]),
    ("-1.00", [1, 1, 1], "USD", ["-0.34", "-0.33", "-0.33"]),
    ("-0.10", [3, 7, 1], "USD", ["-0.03", "-0.06", "-0.01"]),
    ("1000", [1, 1, 1], "JPY", ["334", "333", "333"]),
    ("7", [2, 2, 3], "JPY", ["2", "2", "3"]),
    ("10.000", [1, 2], "KWD", ["3.333", "6.667"]),
    ("1.00", [Fraction(1, 3), Fraction(2, 3)], "USD", ["0.33", "0.67"]),
    ("10.00", [Decimal("0.5"), "0.25", Decimal("0.25")], "USD", ["5.00", "2.50", "2.50"]),
    (5, [1, 4], "USD", ["1.00", "4.00"]),
    (Fraction(1, 2), [1, 1], "USD", ["0.25", "0.25"]),
    ("12.34", [5], "USD", ["12.34"]),
    ("0.00", [1, 2], "USD", ["0.00", "0.00"]),
]


@pytest.mark.parametrize("total, weights, currency, expected", ALLOCATE,
                         ids=["allocate%d" % i for i in range(len(ALLOCATE))])
def test_allocate_table(total, weights, currency, expected):
  parts = allocate(total, weights, currency)
  assert parts == [Decimal(e) for e in expected], (total, weights)
  assert all(isinstance(p, Decimal) and p.as_tuple().exponent == -DIGITS[currency] for p in parts)


BAD = [("0.005", [1], "USD", ValueError), ("1.5", [1], "JPY", ValueError), ("1.00", [], "USD", ValueError),
       ("1.00", [1, -1], "USD", ValueError), ("1.00", [0, 0], "USD", ValueError), ("1.00", [0.5], "USD", TypeError),
       ("1.00", [1], "XXX", ValueError), (1.0, [1], "USD", TypeError)]


@pytest.mark.parametrize("total, weights, currency, error", BAD, ids=["bad%d" % i for i in range(len(BAD))])
def test_allocate_errors(total, weights, currency, error):
  with pytest.raises(error):
    allocate(total, weights, currency)


# -- seeded splits against a slow reference --------------------------------------------------


def reference_allocate(units, weights):
  """Largest remainder, one leftover unit at a time; a negative total mirrors a positive one."""
  if units < 0:
    return [-p for p in reference_allocate(-units, weights)]
  total_weight = sum(weights)
  shares = [Fraction(units * w, total_weight) for w in weights]
  parts = [math.floor(s) for s in shares]
  given = set()
  for _ in range(units - sum(parts)):
    best = max((i for i in range(len(weights)) if i not in given), key=lambda i: (shares[i] - parts[i], -i))
    parts[best] += 1
    given.add(best)
  return parts


@pytest.mark.parametrize("seed", range(6))
def test_random_allocations(seed):
  rng = random.Random(100 + seed)
  for _ in range(300):
    currency = rng.choice(sorted(DIGITS))
    digits = DIGITS[currency]
    units = rng.randint(-500000, 500000)
    weights = [rng.randint(0, 20) for _ in range(rng.randint(1, 8))]
    if not any(weights):
      weights[rng.randrange(len(weights))] = 1
    total = Decimal(units).scaleb(-digits)
    parts = allocate(total, weights, currency)
    want = [Decimal(u).scaleb(-digits) for u in reference_allocate(units, weights)]
    assert parts == want, (total, weights, currency)
    assert sum(parts) == total
    assert all(p.as_tuple().exponent == -digits for p in parts), (total, weights)
