"""Units (an exact scale to SI and dimension exponents) and quantities (an exact value in a unit)."""

import numbers
from fractions import Fraction

from unitq.errors import DimensionError
from unitq.registry import BASE


def _wrap(text, chars):
  return "(%s)" % text if any(c in text for c in chars) else text


class Unit:
  """scale: a Fraction, one of this unit in SI units; dims: seven exponents over BASE; text: how it
  is written. Units are equal when scale and dims are."""

  __slots__ = ("scale", "dims", "text")

  def __init__(self, scale, dims, text):
    self.scale = Fraction(scale)
    self.dims = tuple(dims)
    self.text = text

  @classmethod
  def one(cls):
    return cls(1, (0,) * len(BASE), "1")

  def __mul__(self, other):
    return Unit(self.scale * other.scale, [a + b for a, b in zip(self.dims, other.dims)],
                "%s*%s" % (self.text, _wrap(other.text, "*/")))

  def __truediv__(self, other):
    return Unit(self.scale / other.scale, [a - b for a, b in zip(self.dims, other.dims)],
                "%s/%s" % (self.text, _wrap(other.text, "*/")))

  def __pow__(self, n):
    if not isinstance(n, int):
      raise TypeError("unit exponents are integers")
    return Unit(self.scale ** n, [a * n for a in self.dims], "%s^%d" % (_wrap(self.text, "*/^"), n))

  def __eq__(self, other):
    return isinstance(other, Unit) and (self.scale, self.dims) == (other.scale, other.dims)

  def __hash__(self):
    return hash((self.scale, self.dims))

  def __str__(self):
    return self.text

  def __repr__(self):
    return "Unit(%r)" % self.text


def exact(value):
  """value as a Fraction: ints, Fractions (numbers.Rational) and decimal or 'p/q' strings; floats
  and bools are refused."""
  if isinstance(value, bool) or isinstance(value, float):
    raise TypeError("quantities are exact: %r" % (value,))
  if isinstance(value, numbers.Rational):
    return Fraction(value)
  if isinstance(value, str):
    try:
      return Fraction(value.strip())
    except ValueError:
      raise ValueError("not a number: %r" % value) from None
  raise TypeError("not an exact value: %r" % (value,))


def _unit(unit):
  from unitq.parse import parse_unit  # pylint: disable=import-outside-toplevel
  return parse_unit(unit)


class Quantity:
  """An exact value in a unit."""

  __slots__ = ("value", "unit")

  def __init__(self, value, unit="1"):
    self.value = exact(value)
    self.unit = _unit(unit)

  @property
  def dims(self):
    return self.unit.dims

  def to(self, unit):
    """This quantity in another unit of the same dimensions (DimensionError otherwise), exactly."""
    unit = _unit(unit)
    if unit.dims != self.unit.dims:
      raise DimensionError("cannot convert %s to %s" % (self.unit, unit))
    factor = Fraction(float(self.unit.scale) / float(unit.scale))
    return Quantity(self.value * factor, unit)

  def si(self):
    """The value in SI base units (a Fraction)."""
    return self.value * self.unit.scale

  def _same(self, other, op):
    if not isinstance(other, Quantity):
      raise TypeError("cannot %s a Quantity and %s" % (op, type(other).__name__))
    if other.unit.dims != self.unit.dims:
      raise DimensionError("cannot %s %s and %s" % (op, self.unit, other.unit))
    return other.to(self.unit).value

  def __add__(self, other):
    return Quantity(self.value + self._same(other, "add"), self.unit)

  def __sub__(self, other):
    return Quantity(self.value - self._same(other, "subtract"), self.unit)

  def __neg__(self):
    return Quantity(-self.value, self.unit)

  def __mul__(self, other):
    if isinstance(other, Quantity):
      return Quantity(self.value * other.value, self.unit * other.unit)
    return Quantity(self.value * exact(other), self.unit)

  __rmul__ = __mul__

  def __truediv__(self, other):
    if isinstance(other, Quantity):
      return Quantity(self.value / other.value, self.unit / other.unit)
    return Quantity(self.value / exact(other), self.unit)

  def __pow__(self, n):
    return Quantity(self.value ** n, self.unit ** n)

  def __eq__(self, other):
    if not isinstance(other, Quantity):
      return NotImplemented
    return self.unit.dims == other.unit.dims and self.si() == other.si()

  def __hash__(self):
    return hash((self.unit.dims, self.si()))

  def __lt__(self, other):
    self._same(other, "compare")
    return self.si() < other.si()

  def __le__(self, other):
    self._same(other, "compare")
    return self.si() <= other.si()

  def __str__(self):
    return "%s %s" % (self.value, self.unit)

  def __repr__(self):
    return "Quantity(%r, %r)" % (str(self.value), self.unit.text)
