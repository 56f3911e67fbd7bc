import functools
import random
from fractions import Fraction as F

import pytest

from polygeom import GeometryError, area, contains, locate, orientation, signed_area

SQUARE = [(0, 0), (4, 0), (4, 4), (0, 4)]
# A square with a V-shaped notch cut down from the top to (3, 3).
NOTCH = [(0, 0), (6, 0), (6, 6), (3, 3), (0, 6)]
# A hexagon with a pointed right side: the vertex (8, 4) has one neighbour above and one below it.
ARROW = [(0, 0), (6, 0), (6, 2), (8, 4), (6, 6), (0, 6)]
# A staircase whose steps are horizontal edges at the heights 2 and 4.
STAIRS = [(0, 0), (4, 0), (4, 2), (6, 2), (6, 4), (8, 4), (8, 6), (0, 6)]
# A comb with three teeth pointing up: a horizontal ray crosses it many times.
COMB = [(0, 0), (7, 0), (7, 5), (6, 5), (6, 2), (4, 2), (4, 5), (3, 5), (3, 2), (1, 2), (1, 5), (0, 5)]
DIAMOND = [(0, -3), (3, 0), (0, 3), (-3, 0)]
THIRDS = [(F(0), F(0)), (F(7, 3), F(0)), (F(7, 3), F(5, 3)), (F(1, 3), F(8, 3))]

# (polygon, the signed area)
AREAS = [
    (SQUARE, F(16)),
    (SQUARE[::-1], F(-16)),
    ([(0, 0), (1, 0), (0, 1)], F(1, 2)),
    ([(0, 0), (0, 1), (1, 0)], F(-1, 2)),
    (NOTCH, F(27)),
    (ARROW, F(40)),
    (STAIRS, F(36)),
    (COMB, F(23)),
    (DIAMOND, F(18)),
    (THIRDS, F(43, 9)),
    ([(0, 0), (2, 0), (4, 0)], F(0)),
    ([(-5, -5), (-2, -5), (-2, -1)], F(6)),
    ([[0, 0], [3, 0], [3, 1]], F(3, 2)),
]


@pytest.mark.parametrize("polygon, expected", AREAS, ids=["area%d" % i for i in range(len(AREAS))])
def test_signed_area(polygon, expected):
  got = signed_area(polygon)
  assert got == expected and isinstance(got, F)
  assert area(polygon) == abs(expected)
  assert orientation(polygon) == ("ccw" if expected > 0 else "cw" if expected < 0 else "degenerate")


# (point, polygon, where the point lies)
LOCATE = [
    ((2, 2), SQUARE, "inside"),
    ((5, 2), SQUARE, "outside"),
    ((4, 2), SQUARE, "boundary"),
    ((0, 0), SQUARE, "boundary"),
    ((4, 4), SQUARE, "boundary"),
    ((2, 0), SQUARE, "boundary"),
    ((2, 4), SQUARE, "boundary"),
    ((0, 3), SQUARE, "boundary"),
    ((-1, 0), SQUARE, "outside"),
    ((-1, 4), SQUARE, "outside"),
    ((5, 0), SQUARE, "outside"),
    ((F(1, 2), 0), SQUARE, "boundary"),
    ((F(7, 2), F(1, 3)), SQUARE, "inside"),
    ((2, 2), SQUARE[::-1], "inside"),
    ((4, 2), SQUARE[::-1], "boundary"),
    # Rays through vertices.
    ((1, 3), NOTCH, "inside"),
    ((3, 3), NOTCH, "boundary"),
    ((3, 4), NOTCH, "outside"),
    ((-1, 3), NOTCH, "outside"),
    ((1, 6), NOTCH, "outside"),
    ((0, 6), NOTCH, "boundary"),
    ((1, 4), ARROW, "inside"),
    ((-2, 4), ARROW, "outside"),
    ((7, 4), ARROW, "inside"),
    ((8, 4), ARROW, "boundary"),
    ((9, 4), ARROW, "outside"),
    ((1, 2), ARROW, "inside"),
    ((7, 5), ARROW, "boundary"),
    ((F(13, 2), 5), ARROW, "inside"),
    ((7, 6), ARROW, "outside"),
    ((-1, 0), DIAMOND, "inside"),
    ((-4, 0), DIAMOND, "outside"),
    ((-3, 0), DIAMOND, "boundary"),
    ((0, 0), DIAMOND, "inside"),
    ((F(3, 2), F(-3, 2)), DIAMOND, "boundary"),
    ((F(3, 2), F(-7, 5)), DIAMOND, "inside"),
    # Horizontal edges at the ray's height.
    ((1, 2), STAIRS, "inside"),
    ((5, 2), STAIRS, "boundary"),
    ((7, 2), STAIRS, "outside"),
    ((1, 4), STAIRS, "inside"),
    ((5, 4), STAIRS, "inside"),
    ((7, 4), STAIRS, "boundary"),
    ((9, 4), STAIRS, "outside"),
    ((5, 1), STAIRS, "outside"),
    ((-1, 2), STAIRS, "outside"),
    # Many crossings.
    ((F(1, 2), 4), COMB, "inside"),
    ((2, 4), COMB, "outside"),
    ((2, 2), COMB, "boundary"),
    ((2, 1), COMB, "inside"),
    ((F(7, 2), 5), COMB, "boundary"),
    ((5, 5), COMB, "outside"),
    ((F(13, 2), 3), COMB, "inside"),
    ((-1, 5), COMB, "outside"),
    ((-1, 2), COMB, "outside"),
    # Fraction vertices.
    ((1, 1), THIRDS, "inside"),
    ((F(7, 3), 1), THIRDS, "boundary"),
    ((F(4, 3), F(13, 6)), THIRDS, "boundary"),
    ((F(1, 3), F(8, 3)), THIRDS, "boundary"),
    ((F(1, 3), F(5, 3)), THIRDS, "inside"),
    ((0, F(5, 3)), THIRDS, "outside"),
    ((F(1, 4), F(5, 3)), THIRDS, "inside"),
    ((3, F(5, 3)), THIRDS, "outside"),
]


@pytest.mark.parametrize("point, polygon, expected", LOCATE, ids=["locate%d" % i for i in range(len(LOCATE))])
def test_locate(point, polygon, expected):
  assert locate(point, polygon) == expected, (point, polygon)
  assert contains(point, polygon) is (expected != "outside")


def test_bad_polygons_and_points():
  with pytest.raises(GeometryError):
    locate((0, 0), [(0, 0), (1, 1)])
  with pytest.raises(GeometryError):
    signed_area([])
  with pytest.raises(TypeError):
    locate((0.5, 0), SQUARE)
  with pytest.raises(TypeError):
    area([(0, 0), (1, 0), (0, 1.0)])
  with pytest.raises(TypeError):
    locate((True, 0), SQUARE)


# -- a slow reference ------------------------------------------------------------------------


def reference_cross(o, a, b):
  return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def reference_locate(point, polygon):
  """Boundary first, then the winding number (exact, with the usual upward/downward rule)."""
  n = len(polygon)
  for i in range(n):
    a, b = polygon[i], polygon[(i + 1) % n]
    if (reference_cross(a, b, point) == 0 and min(a[0], b[0]) <= point[0] <= max(a[0], b[0])
        and min(a[1], b[1]) <= point[1] <= max(a[1], b[1])):
      return "boundary"
  winding = 0
  for i in range(n):
    a, b = polygon[i], polygon[(i + 1) % n]
    if a[1] <= point[1]:
      if b[1] > point[1] and reference_cross(a, b, point) > 0:
        winding += 1
    elif b[1] <= point[1] and reference_cross(a, b, point) < 0:
      winding -= 1
  return "inside" if winding else "outside"


def reference_area(polygon):
  n = len(polygon)
  return sum(F(polygon[i][0] * polygon[(i + 1) % n][1] - polygon[(i + 1) % n][0] * polygon[i][1])
             for i in range(n)) / 2


# -- seeded star-shaped polygons ---------------------------------------------------------------


def by_angle(a, b):
  """Counterclockwise order around the origin, starting from the positive x axis."""
  half_a = a[1] < 0 or (a[1] == 0 and a[0] < 0)
  half_b = b[1] < 0 or (b[1] == 0 and b[0] < 0)
  if half_a != half_b:
    return 1 if half_a else -1
  c = a[0] * b[1] - a[1] * b[0]
  return -1 if c > 0 else 1 if c < 0 else 0


def random_star(rng, size):
  """A simple polygon: points in distinct directions around the origin, one in each quadrant, in
  angular order (the origin sees every edge, so the polygon does not cross itself)."""
  while True:
    points = []
    quadrants = [(1, 1), (-1, 1), (-1, -1), (1, -1)]
    for i in range(rng.randint(4, 16)):
      sx, sy = quadrants[i % 4] if i < 4 else (rng.choice([-1, 1]), rng.choice([-1, 1]))
      points.append((sx * rng.randint(0, size), sy * rng.randint(0, size)))
    points = [p for p in points if p != (0, 0)]
    directions = set()
    unique = []
    for p in points:
      g = max(1, abs(p[0]) if p[1] == 0 else abs(p[1]) if p[0] == 0 else _gcd(abs(p[0]), abs(p[1])))
      key = (p[0] // g, p[1] // g)
      if key not in directions:
        directions.add(key)
        unique.append(p)
    if len(unique) < 3:
      continue
    unique.sort(key=functools.cmp_to_key(by_angle))
    if any(reference_cross(unique[i], unique[(i + 1) % len(unique)], (0, 0)) <= 0 for i in range(len(unique))):
      continue  # an angular gap of half a turn or more: the origin would not see every edge
    if rng.random() < 0.5:
      unique.reverse()
    shift = (rng.randint(-3, 3), rng.randint(-3, 3))
    return [(x + shift[0], y + shift[1]) for x, y in unique]


def _gcd(a, b):
  while b:
    a, b = b, a % b
  return a


def query_points(rng, polygon, size):
  points = [(rng.randint(-size - 2, size + 2), rng.randint(-size - 2, size + 2)) for _ in range(25)]
  points += rng.sample(polygon, min(3, len(polygon)))
  for _ in range(4):
    a = rng.choice(polygon)
    b = polygon[(polygon.index(a) + 1) % len(polygon)]
    points.append((F(a[0] + b[0], 2), F(a[1] + b[1], 2)))
  for _ in range(8):  # at the height of a vertex
    points.append((rng.randint(-size - 2, size + 2), rng.choice(polygon)[1]))
  return points


@pytest.mark.parametrize("seed", range(8))
def test_random_star_polygons(seed):
  rng = random.Random(1500 + seed)
  for _ in range(25):
    size = rng.choice([3, 6, 12, 20])
    polygon = random_star(rng, size)
    assert signed_area(polygon) == reference_area(polygon)
    for point in query_points(rng, polygon, size):
      assert locate(point, polygon) == reference_locate(point, polygon), (point, polygon)


def test_random_fraction_polygons():
  rng = random.Random(77)
  for _ in range(60):
    scale = F(rng.randint(1, 5), rng.randint(1, 7))
    base = random_star(rng, 6)
    polygon = [(x * scale, y * scale) for x, y in base]
    for x, y in query_points(rng, base, 6):
      point = (x * scale, y * scale)
      assert locate(point, polygon) == reference_locate(point, polygon), (point, polygon)
