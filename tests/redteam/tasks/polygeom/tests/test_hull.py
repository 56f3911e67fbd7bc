import random
from fractions import Fraction as F

import pytest

from polygeom import convex_hull

# (points, the hull's corners)
HULLS = [
    ([], []),
    ([(2, 3)], [(2, 3)]),
    ([(1, 1), (1, 1), (1, 1)], [(1, 1)]),
    ([(3, 0), (0, 0)], [(0, 0), (3, 0)]),
    ([(0, 0), (1, 0), (0, 1)], [(0, 0), (1, 0), (0, 1)]),
    ([(0, 0), (1, 1), (2, 2), (3, 3)], [(0, 0), (3, 3)]),
    ([(0, 3), (0, 1), (0, 2), (0, 1)], [(0, 1), (0, 3)]),
    ([(0, 0), (4, 0), (4, 4), (0, 4), (2, 0), (4, 2), (2, 4), (0, 2), (2, 2)], [(0, 0), (4, 0), (4, 4), (0, 4)]),
    ([(0, 0), (2, 0), (4, 0), (3, 1), (2, 2), (1, 1), (2, 1)], [(0, 0), (4, 0), (2, 2)]),
    ([(x, y) for x in range(4) for y in range(3)], [(0, 0), (3, 0), (3, 2), (0, 2)]),
    ([(4, 4), (0, 4), (4, 0), (0, 0), (4, 4), (0, 0)], [(0, 0), (4, 0), (4, 4), (0, 4)]),
    ([(0, 0), (5, 1), (6, 4), (3, 6), (-1, 3), (2, 3), (3, 2), (1, 1)], [(-1, 3), (0, 0), (5, 1), (6, 4), (3, 6)]),
    ([(-3, -3), (3, -3), (0, 3), (-1, -1), (1, 1), (0, -3), (-2, -1), (2, -1)], [(-3, -3), (3, -3), (0, 3)]),
    ([(1, 5), (3, 5), (5, 5), (5, 3), (5, 1), (3, 1), (1, 1), (1, 3)], [(1, 1), (5, 1), (5, 5), (1, 5)]),
    ([(0, 0), (2, 1), (4, 2), (1, 3), (6, 3)], [(0, 0), (6, 3), (1, 3)]),
    ([[0, 0], [1, 0], [0, 1], [1, 1]], [(0, 0), (1, 0), (1, 1), (0, 1)]),
    ([(F(1, 2), 0), (1, F(1, 2)), (F(1, 2), 1), (0, F(1, 2)), (F(1, 2), F(1, 2)), (F(2, 3), F(1, 3))],
     [(0, F(1, 2)), (F(1, 2), 0), (1, F(1, 2)), (F(1, 2), 1)]),
]


@pytest.mark.parametrize("points, expected", HULLS, ids=["hull%d" % i for i in range(len(HULLS))])
def test_convex_hull(points, expected):
  got = convex_hull(points)
  assert got == expected
  assert all(isinstance(p, tuple) for p in got)
  assert convex_hull(list(reversed(points))) == expected


# -- a slow reference ------------------------------------------------------------------------


def reference_cross(o, a, b):
  return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def reference_hull(points):
  """Every ordered pair (a, b) with all the points strictly to its left or on the segment a-b is
  a hull edge; the corners are followed edge by edge from the smallest point."""
  pts = sorted(set(tuple(p) for p in points))
  if len(pts) <= 1:
    return pts
  if all(reference_cross(pts[0], pts[-1], p) == 0 for p in pts):
    return [pts[0], pts[-1]]
  following = {}
  for a in pts:
    for b in pts:
      if a == b:
        continue
      ok = True
      for q in pts:
        c = reference_cross(a, b, q)
        if c < 0 or (c == 0 and not (min(a, b) <= q <= max(a, b))):
          ok = False
          break
      if ok:
        following[a] = b
  hull = [pts[0]]
  while following[hull[-1]] != hull[0]:
    hull.append(following[hull[-1]])
  return hull


@pytest.mark.parametrize("seed", range(8))
def test_random_small_sets(seed):
  rng = random.Random(900 + seed)
  for _ in range(40):
    size = rng.choice([2, 4, 8])
    points = [(rng.randint(-size, size), rng.randint(-size, size)) for _ in range(rng.randint(1, 14))]
    assert convex_hull(points) == reference_hull(points), points


def test_random_collinear_heavy_sets():
  rng = random.Random(31)
  for _ in range(40):
    d = (rng.randint(-3, 3), rng.randint(1, 3))
    base = (rng.randint(-5, 5), rng.randint(-5, 5))
    points = [(base[0] + t * d[0], base[1] + t * d[1]) for t in (rng.randint(-6, 6) for _ in range(rng.randint(1, 8)))]
    points += [(rng.randint(-9, 9), rng.randint(-9, 9)) for _ in range(rng.randint(0, 3))]
    assert convex_hull(points) == reference_hull(points), points


def test_random_larger_sets():
  rng = random.Random(5)
  for _ in range(12):
    points = [(rng.randint(-10, 10), rng.randint(-10, 10)) for _ in range(rng.randint(20, 40))]
    assert convex_hull(points) == reference_hull(points), points
