from fractions import Fraction

from unitq import Quantity, parse_unit


def test_simple_conversion():
  assert Quantity(3, "km").to("m") == Quantity(3000, "m")


def test_parse_newton():
  unit = parse_unit("kg*m/s^2")
  assert unit.scale == 1 and unit.dims == (1, 1, -2, 0, 0, 0, 0)


def test_add_same_unit():
  assert (Quantity(1, "m") + Quantity(2, "m")).value == Fraction(3)
