"""Simple polygons given by their vertices in order: area, orientation and point location."""

from fractions import Fraction

from polygeom.points import GeometryError, as_point


def as_polygon(polygon):
  """A polygon's vertices as a list of point tuples (GeometryError for fewer than three)."""
  vertices = [as_point(p) for p in polygon]
  if len(vertices) < 3:
    raise GeometryError(f"a polygon has at least three vertices, not {len(vertices)}")
  return vertices


def edges(vertices):
  """The polygon's edges (a, b), the last one closing it."""
  return zip(vertices, vertices[1:] + vertices[:1])


def signed_area(polygon):
  """The shoelace area as a Fraction: positive when the vertices run counterclockwise."""
  twice = sum(a[0] * b[1] - b[0] * a[1] for a, b in edges(as_polygon(polygon)))
  return Fraction(twice) / 2


def area(polygon):
  """The polygon's area (a Fraction, never negative)."""
  return abs(signed_area(polygon))


def orientation(polygon):
  """'ccw', 'cw' or 'degenerate' (zero area)."""
  value = signed_area(polygon)
  return "ccw" if value > 0 else "cw" if value < 0 else "degenerate"


def locate(point, polygon):
  """'inside', 'outside' or 'boundary': where `point` lies with respect to a simple polygon."""
  x, y = as_point(point)
  inside = False
  for (x1, y1), (x2, y2) in edges(as_polygon(polygon)):
    if y1 == y2:
      continue  # a horizontal edge never crosses the horizontal ray
    if min(y1, y2) <= y <= max(y1, y2):
      crossing = x1 + (y - y1) * (x2 - x1) / (y2 - y1)
      if crossing > x:
        inside = not inside
  return "inside" if inside else "outside"


def contains(point, polygon):
  """Whether `point` lies in the closed polygon (its boundary included)."""
  return locate(point, polygon) != "outside"
