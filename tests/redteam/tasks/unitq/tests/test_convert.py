import random
from fractions import Fraction as F

import pytest

from unitq import DimensionError, Quantity, parse_unit

# (value, from, to, expected value)
CONVERSIONS = [
    (3, "km", "m", 3000),
    (1, "ft", "m", F(381, 1250)),
    (1, "mi", "ft", 5280),
    (1, "km/h", "m/s", F(5, 18)),
    (90, "min", "h", F(3, 2)),
    (1, "h", "s", 3600),
    (1, "lb", "g", F(45359237, 100000)),
    ("2.5", "kW*h", "J", 9000000),
    (1, "L", "cm^3", 1000),
    (1, "bar", "kPa", 100),
    (1, "Pa", "N/m^2", 1),
    (F(1, 3), "d", "min", 480),
    (7, "in", "cm", F(889, 50)),
    (1, "m/s", "km/h", F(18, 5)),
    (100, "g/L", "kg/m^3", 100),
    (1, "kJ/(mol*K)", "J/(mol*K)", 1000),
    ("-0.25", "ft^2", "in^2", -36),
    (1, "cd", "cd", 1),
    (1, "Hz", "1/min", 60),
    (12, "mA*h", "C", F(216, 5)),
]


@pytest.mark.parametrize("value, src, dst, expected", CONVERSIONS, ids=["c%d" % i for i in range(len(CONVERSIONS))])
def test_conversion_table(value, src, dst, expected):
  got = Quantity(value, src).to(dst)
  assert isinstance(got, Quantity) and isinstance(got.value, F)
  assert got.unit == parse_unit(dst)
  assert got == Quantity(expected, dst)


def test_conversion_strings():
  assert str(Quantity(3, "km").to("m")) == "3000 m"
  assert str(Quantity(90, "min").to("h")) == "3/2 h"


@pytest.mark.parametrize("src, dst", [("m", "s"), ("kg*m", "N"), ("J", "W"), ("Hz", "s"), ("m^2", "L")])
def test_conversion_errors(src, dst):
  with pytest.raises(DimensionError):
    Quantity(1, src).to(dst)


# -- seeded conversions between expressions of the same shape, against exact reference scales ------

GROUPS = [["m", "km", "cm", "mm", "in", "ft", "mi", "dam"], ["g", "kg", "mg", "t", "lb"],
          ["s", "ms", "min", "h", "d", "ns"], ["A", "mA"], ["N", "kN"], ["J", "kJ", "eV"], ["Pa", "kPa", "bar"],
          ["L", "mL"], ["W", "MW"], ["K"], ["mol"], ["cd"]]

SCALES = {"m": 1, "km": 1000, "cm": F(1, 100), "mm": F(1, 1000), "in": F(254, 10000), "ft": F(3048, 10000),
          "mi": F(1609344, 1000), "dam": 10, "g": F(1, 1000), "kg": 1, "mg": F(1, 10 ** 6), "t": 1000,
          "lb": F(45359237, 10 ** 8), "s": 1, "ms": F(1, 1000), "min": 60, "h": 3600, "d": 86400,
          "ns": F(1, 10 ** 9), "A": 1, "mA": F(1, 1000), "N": 1, "kN": 1000, "J": 1, "kJ": 1000,
          "eV": F(1602176634, 10 ** 28), "Pa": 1, "kPa": 1000, "bar": 10 ** 5, "L": F(1, 1000), "mL": F(1, 10 ** 6),
          "W": 1, "MW": 10 ** 6, "K": 1, "mol": 1, "cd": 1}


def reference_factor(factors_src, factors_dst):
  """The exact ratio of two expressions given as lists of (symbol, exponent, divide)."""
  def scale(factors):
    total = F(1)
    for sym, exp, divide in factors:
      total = total / F(SCALES[sym]) ** exp if divide else total * F(SCALES[sym]) ** exp
    return total
  return scale(factors_src) / scale(factors_dst)


def spell(factors):
  text = ""
  for i, (sym, exp, divide) in enumerate(factors):
    term = sym if exp == 1 else "%s^%d" % (sym, exp)
    text += term if i == 0 else ("/" if divide else "*") + term
  return text


def test_random_conversions():
  gen = random.Random(4711)
  for _ in range(500):
    n = gen.randint(1, 4)
    groups = [gen.choice([g for g in GROUPS if g[0] != "eV"]) for _ in range(n)]
    exps = [gen.choice([1, 1, 2, 3, -1, -2]) for _ in range(n)]
    divs = [False] + [gen.random() < 0.5 for _ in range(n - 1)]
    src = [(gen.choice(g), e, d) for g, e, d in zip(groups, exps, divs)]
    dst = [(gen.choice(g), e, d) for g, e, d in zip(groups, exps, divs)]
    value = F(gen.randint(-10 ** 6, 10 ** 6), gen.randint(1, 100))
    got = Quantity(value, spell(src)).to(spell(dst))
    assert got.unit == parse_unit(spell(dst))
    assert got == Quantity(value * reference_factor(src, dst), spell(dst)), (spell(src), spell(dst), value)
