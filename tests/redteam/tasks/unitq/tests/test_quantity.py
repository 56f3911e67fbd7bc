import random
from fractions import Fraction as F

import pytest

from unitq import DimensionError, Quantity, parse_unit


def test_add_mixed_units():
  total = Quantity(1, "mi") + Quantity(1, "ft")
  assert total.unit == parse_unit("mi") and total == Quantity(F(5281, 5280), "mi")
  assert Quantity(1, "h") - Quantity(30, "min") == Quantity(F(1, 2), "h")
  assert Quantity(1, "m") + Quantity(1, "cm") == Quantity(101, "cm")


def test_add_mismatch():
  with pytest.raises(DimensionError):
    Quantity(1, "m") + Quantity(1, "s")
  with pytest.raises(DimensionError):
    Quantity(1, "m/s*kg") - Quantity(1, "kg*m/s^2")
  with pytest.raises(DimensionError):
    assert Quantity(1, "m") < Quantity(1, "kg")


def test_products():
  force = Quantity(2, "kg") * Quantity(3, "m/s^2")
  assert force == Quantity(6, "N") and force.dims == parse_unit("N").dims
  assert (Quantity(10, "m") / Quantity(4, "s")).to("km/h") == Quantity(9, "km/h")
  assert Quantity(3, "ft") ** 2 == Quantity(9, "ft^2")
  assert Quantity("1.5", "kN") * 2 == Quantity(3000, "N")


def test_compare_and_str():
  assert Quantity(1, "km") > Quantity(999, "m")
  assert Quantity(1, "in") <= Quantity(F(254, 100), "cm")
  assert Quantity(1, "m") != Quantity(1, "s")
  assert str(Quantity("0.5", "m/s*kg")) == "1/2 m/s*kg"
  with pytest.raises(TypeError):
    Quantity(0.5, "m")


def test_random_sums():
  gen = random.Random(99)
  lengths = {"m": 1, "km": 1000, "cm": F(1, 100), "ft": F(381, 1250), "in": F(127, 5000), "mi": F(201168, 125)}
  for _ in range(300):
    a, b = gen.choice(list(lengths)), gen.choice(list(lengths))
    x, y = F(gen.randint(-999, 999), gen.randint(1, 50)), F(gen.randint(-999, 999), gen.randint(1, 50))
    total = Quantity(x, a) + Quantity(y, b)
    assert total.unit == parse_unit(a)
    assert total == Quantity((x * lengths[a] + y * lengths[b]) / lengths[a], a)
    assert (Quantity(x, a) < Quantity(y, b)) == (x * lengths[a] < y * lengths[b])
