"""Turning matrix entries into exact Fractions."""

from fractions import Fraction
import numbers


def to_fraction(value):
  """An exact Fraction for an int, a Fraction (any Rational) or a str such as '3', '-2/7', '0.25'
  or '1.5e-3'. Floats, bools and everything else raise TypeError: a float is already rounded."""
  if isinstance(value, bool):
    raise TypeError("a bool is not a matrix entry")
  if isinstance(value, Fraction):
    return value
  if isinstance(value, numbers.Rational):
    return Fraction(value.numerator, value.denominator)
  if isinstance(value, str):
    text = value.strip()
    if not text or "_" in text:
      raise ValueError("not a number: %r" % value)
    if "/" in text or text.lstrip("+-").isdigit():
      return Fraction(text)
    return Fraction(float(text))
  raise TypeError("not an exact matrix entry: %r (%s)" % (value, type(value).__name__))
