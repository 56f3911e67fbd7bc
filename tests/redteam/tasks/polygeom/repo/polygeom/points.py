"""Points: pairs of exact coordinates (ints or Fractions), and the orientation of three of them."""

from fractions import Fraction


class GeometryError(ValueError):
  """A shape that the operation is not defined for (a polygon of fewer than three vertices)."""


def as_coord(value):
  """An exact coordinate: an int or a Fraction (bools, floats and anything else: TypeError)."""
  if isinstance(value, bool) or not isinstance(value, (int, Fraction)):
    raise TypeError(f"coordinates are ints or Fractions, not {type(value).__name__}")
  return value


def as_point(point):
  """A point given as a pair (a tuple, a list or any other iterable of two coordinates) -> a tuple."""
  try:
    x, y = point
  except (TypeError, ValueError):
    raise TypeError(f"a point is a pair of coordinates, not {point!r}") from None
  return (as_coord(x), as_coord(y))


def cross(o, a, b):
  """The cross product of the vectors o->a and o->b: positive when o, a, b turn counterclockwise."""
  return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def orient(a, b, c):
  """+1 when a, b, c make a counterclockwise (left) turn, -1 for a clockwise turn, 0 when collinear."""
  value = cross(as_point(a), as_point(b), as_point(c))
  return (value > 0) - (value < 0)
