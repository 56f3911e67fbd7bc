import random
import re
from fractions import Fraction as F

import pytest

from unitq import Unit, UnitError, parse_unit

# (expression, scale to SI, dims over m kg s A K mol cd)
PARSED = [
    ("m", 1, (1, 0, 0, 0, 0, 0, 0)),
    ("kg*m/s^2", 1, (1, 1, -2, 0, 0, 0, 0)),
    ("m/s*kg", 1, (1, 1, -1, 0, 0, 0, 0)),
    ("m/s/s", 1, (1, 0, -2, 0, 0, 0, 0)),
    ("J/(mol*K)", 1, (2, 1, -2, 0, -1, -1, 0)),
    ("1/s", 1, (0, 0, -1, 0, 0, 0, 0)),
    ("min", 60, (0, 0, 1, 0, 0, 0, 0)),
    ("cd", 1, (0, 0, 0, 0, 0, 0, 1)),
    ("Pa", 1, (-1, 1, -2, 0, 0, 0, 0)),
    ("ft", F(381, 1250), (1, 0, 0, 0, 0, 0, 0)),
    ("km^2", 10 ** 6, (2, 0, 0, 0, 0, 0, 0)),
    ("cm^-3", 10 ** 6, (-3, 0, 0, 0, 0, 0, 0)),
    ("km/h", F(5, 18), (1, 0, -1, 0, 0, 0, 0)),
    ("mg/L", F(1, 1000), (-3, 1, 0, 0, 0, 0, 0)),
    ("kPa*L", 1, (2, 1, -2, 0, 0, 0, 0)),
    ("mm * s ^ -1", F(1, 1000), (1, 0, -1, 0, 0, 0, 0)),
    ("mol/L*s", 1000, (-3, 0, 1, 0, 0, 1, 0)),
    ("kW*h", 3600000, (2, 1, -2, 0, 0, 0, 0)),
    ("dam", 10, (1, 0, 0, 0, 0, 0, 0)),
    ("ms*min", F(60, 1000), (0, 0, 2, 0, 0, 0, 0)),
    ("lb*ft/s^2", F(45359237, 10 ** 8) * F(381, 1250), (1, 1, -2, 0, 0, 0, 0)),
    ("(m/s)^2", 1, (2, 0, -2, 0, 0, 0, 0)),
    ("mi/h", F(201168, 125 * 3600), (1, 0, -1, 0, 0, 0, 0)),
    ("GHz", 10 ** 9, (0, 0, -1, 0, 0, 0, 0)),
    ("mV/kOhm", F(1, 10 ** 6), (0, 0, 0, 1, 0, 0, 0)),
]


@pytest.mark.parametrize("text, scale, dims", PARSED, ids=["p%d" % i for i in range(len(PARSED))])
def test_parse_table(text, scale, dims):
  unit = parse_unit(text)
  assert isinstance(unit, Unit)
  assert isinstance(unit.scale, F) and unit.scale == scale
  assert unit.dims == dims


@pytest.mark.parametrize("text", ["", "m^", "kg**2", "(m", "m)", "m s", "furlong", "2*m", "m^x", "km^-", "in^"])
def test_parse_errors(text):
  with pytest.raises(UnitError):
    parse_unit(text)


# -- a slow reference: every prefixed symbol spelled out, the expression evaluated by Python ----------

REF_UNITS = {
    "m": (1, "m", 1), "g": (F(1, 1000), "kg", 1), "s": (1, "s", 1), "A": (1, "A", 1), "K": (1, "K", 1),
    "mol": (1, "mol", 1), "cd": (1, "cd", 1), "min": (60, "s", 0), "h": (3600, "s", 0), "d": (86400, "s", 0),
    "a": (31557600, "s", 1), "Hz": (1, "/s", 1), "N": (1, "kg m /s /s", 1), "Pa": (1, "kg /m /s /s", 1),
    "J": (1, "kg m m /s /s", 1), "W": (1, "kg m m /s /s /s", 1), "C": (1, "A s", 1),
    "V": (1, "kg m m /s /s /s /A", 1), "Ohm": (1, "kg m m /s /s /s /A /A", 1), "L": (F(1, 1000), "m m m", 1),
    "t": (1000, "kg", 0), "ha": (10000, "m m", 0), "bar": (100000, "kg /m /s /s", 1),
    "eV": (F(1602176634, 10 ** 28), "kg m m /s /s", 1), "in": (F(254, 10000), "m", 0),
    "ft": (F(3048, 10000), "m", 0), "yd": (F(9144, 10000), "m", 0), "mi": (F(1609344, 1000), "m", 0),
    "lb": (F(45359237, 10 ** 8), "kg", 0), "oz": (F(45359237, 10 ** 8) / 16, "kg", 0),
}
REF_PREFIXES = dict(zip("Y Z E P T G M k h da d c m u n p f a z y".split(),
                        [F(10) ** e for e in (24, 21, 18, 15, 12, 9, 6, 3, 2, 1, -1, -2, -3, -6, -9, -12, -15, -18, -21, -24)]))
ORDER = ("m", "kg", "s", "A", "K", "mol", "cd")


class R:
  def __init__(self, scale, dims):
    self.scale, self.dims = F(scale), tuple(dims)

  def __mul__(self, o):
    return R(self.scale * o.scale, [a + b for a, b in zip(self.dims, o.dims)])

  def __truediv__(self, o):
    return R(self.scale / o.scale, [a - b for a, b in zip(self.dims, o.dims)])

  def __pow__(self, n):
    return R(self.scale ** n, [a * n for a in self.dims])


def spelled_out():
  table = {}
  for prefix, factor in REF_PREFIXES.items():
    for sym, (scale, base, takes) in REF_UNITS.items():
      if takes:
        table.setdefault(prefix + sym, []).append((factor * scale, base))
  for sym, (scale, base, _) in REF_UNITS.items():
    table[sym] = [(scale, base)]  # the table's own symbols win
  out = {}
  for sym, options in table.items():
    assert len(options) == 1, sym
    scale, base = options[0]
    dims = [0] * 7
    for word in base.split():
      dims[ORDER.index(word.lstrip("/"))] += -1 if word.startswith("/") else 1
    out[sym] = R(scale, dims)
  return out


SPELLED = spelled_out()


def reference_unit(text):
  names = {}
  expr = text.replace("^", "**")
  for i, sym in enumerate(sorted(set(re.findall(r"[A-Za-z]+", text)), key=len, reverse=True)):
    names["U%d" % i] = SPELLED[sym]
    expr = re.sub(r"(?<![A-Za-z])%s(?![A-Za-z])" % sym, "U%d" % i, expr)
  expr = re.sub(r"(?<![\w*-])1(?![\w])", "ONE", expr)
  names["ONE"] = R(1, [0] * 7)
  value = eval(expr, {"__builtins__": {}}, names)  # pylint: disable=eval-used
  return value.scale, value.dims


SYMBOLS = ["m", "km", "cm", "mm", "g", "kg", "mg", "s", "ms", "min", "h", "d", "A", "mA", "K", "mol", "cd", "N",
           "kN", "Pa", "kPa", "J", "kJ", "W", "MW", "C", "V", "mV", "Ohm", "kOhm", "L", "mL", "t", "bar", "in",
           "ft", "mi", "lb", "Hz", "GHz", "ns", "dam", "ka"]


def random_term(gen):
  sym = gen.choice(SYMBOLS)
  if gen.random() < 0.4:
    sym += "^%d" % gen.choice([-4, -3, -2, -1, 2, 3, 4])
  return sym


def random_expression(gen, depth=0):
  parts = []
  for i in range(gen.randint(1, 5)):
    if depth == 0 and gen.random() < 0.2:
      part = "(%s)" % random_expression(gen, 1)
      if gen.random() < 0.3:
        part += "^%d" % gen.choice([-2, 2, 3])
    else:
      part = random_term(gen)
    parts.append(part if i == 0 else gen.choice(["*", "/", " * ", "/"]) + part)
  return "".join(parts)


def test_random_expressions():
  gen = random.Random(1717)
  for _ in range(600):
    text = random_expression(gen)
    unit = parse_unit(text)
    scale, dims = reference_unit(text)
    assert (unit.scale, unit.dims) == (scale, dims), text


def test_random_roundtrip():
  gen = random.Random(2024)
  for _ in range(300):
    unit = parse_unit(random_expression(gen))
    assert parse_unit(str(unit)) == unit, str(unit)
