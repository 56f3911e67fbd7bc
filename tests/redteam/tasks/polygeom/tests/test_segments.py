import random
from fractions import Fraction as F

import pytest

from polygeom import on_segment, segment_intersection

P = lambda x, y: (F(x), F(y))  # noqa: E731

# (p1, p2, q1, q2, where the closed segments meet)
SEGMENTS = [
    # Crossing at one point, exact.
    ((0, 0), (2, 2), (0, 2), (2, 0), P(1, 1)),
    ((0, 0), (3, 1), (0, 1), (3, 0), P(F(3, 2), F(1, 2))),
    ((0, 0), (7, 3), (0, 3), (7, 0), P(F(7, 2), F(3, 2))),
    ((0, 0), (5, 2), (1, 3), (4, -1), P(F(65, 26), 1)),
    ((-3, 1), (4, 2), (0, -5), (1, 6), P(F(45, 76), F(115, 76))),
    ((0, 0), (3, 7), (3, 0), (0, 5), P(F(45, 36), F(35, 12))),
    ((1, 1), (10, 4), (2, 5), (9, -3), P(F(139, 31), F(67, 31))),
    # Touching: an end on the other segment, or a shared end.
    ((0, 0), (2, 0), (2, 0), (3, 5), P(2, 0)),
    ((0, 0), (4, 0), (2, 0), (2, 3), P(2, 0)),
    ((0, 0), (4, 4), (1, 1), (5, 0), P(1, 1)),
    ((0, 0), (6, 3), (4, 2), (4, 9), P(4, 2)),
    # Apart.
    ((0, 0), (1, 1), (3, 0), (2, 1), None),
    ((0, 0), (2, 2), (0, 1), (2, 3), None),
    ((0, 0), (4, 0), (0, 1), (4, 1), None),
    ((0, 0), (1, 3), (2, 0), (2, 9), None),
    # Collinear: overlapping, nested, touching, apart.
    ((0, 0), (4, 0), (2, 0), (6, 0), (P(2, 0), P(4, 0))),
    ((0, 0), (6, 3), (2, 1), (4, 2), (P(2, 1), P(4, 2))),
    ((4, 4), (0, 0), (3, 3), (1, 1), (P(1, 1), P(3, 3))),
    ((1, 0), (1, 5), (1, 7), (1, 3), (P(1, 3), P(1, 5))),
    ((0, 3), (3, 0), (1, 2), (5, -2), (P(1, 2), P(3, 0))),
    ((1, 1), (3, 2), (3, 2), (1, 1), (P(1, 1), P(3, 2))),
    ((-2, 5), (6, -1), (2, 2), (10, -4), (P(2, 2), P(6, -1))),
    ((0, 0), (2, 1), (2, 1), (6, 3), P(2, 1)),
    ((0, 2), (0, 0), (0, 2), (0, 5), P(0, 2)),
    ((0, 0), (1, 1), (2, 2), (3, 3), None),
    ((3, 0), (5, 0), (-1, 0), (1, 0), None),
    # Segments that are points.
    ((2, 1), (2, 1), (0, 0), (4, 2), P(2, 1)),
    ((0, 0), (4, 2), (4, 2), (4, 2), P(4, 2)),
    ((2, 2), (2, 2), (0, 0), (4, 2), None),
    ((1, 1), (1, 1), (1, 1), (1, 1), P(1, 1)),
    ((1, 1), (1, 1), (1, 2), (1, 2), None),
    # Fraction coordinates and other pairs than tuples.
    ((F(1, 2), 0), (F(1, 2), F(5, 2)), (0, F(1, 3)), (3, F(4, 3)), P(F(1, 2), F(1, 2))),
    ((0, 0), (F(3, 2), F(1, 2)), (F(3, 4), F(1, 4)), (3, 1), (P(F(3, 4), F(1, 4)), P(F(3, 2), F(1, 2)))),
    ((F(-1, 3), F(2, 3)), (F(5, 3), F(-4, 3)), (0, 0), (1, 1), P(F(1, 6), F(1, 6))),
    ([0, 0], [3, 1], [0, 1], [3, 0], P(F(3, 2), F(1, 2))),
]


def check_types(result):
  if result is None:
    return
  points = result if isinstance(result[0], tuple) else (result,)
  for point in points:
    assert isinstance(point, tuple) and len(point) == 2
    assert all(type(c) is F for c in point), point


@pytest.mark.parametrize("p1, p2, q1, q2, expected", SEGMENTS, ids=["seg%d" % i for i in range(len(SEGMENTS))])
def test_segment_intersection(p1, p2, q1, q2, expected):
  got = segment_intersection(p1, p2, q1, q2)
  assert got == expected
  check_types(got)
  assert segment_intersection(q1, q2, p1, p2) == expected
  assert segment_intersection(p2, p1, q2, q1) == expected


def test_on_segment():
  assert on_segment((2, 1), (0, 0), (4, 2))
  assert on_segment((4, 2), (0, 0), (4, 2))
  assert not on_segment((6, 3), (0, 0), (4, 2))
  assert not on_segment((2, 2), (0, 0), (4, 2))
  assert on_segment((F(1, 3), F(1, 6)), (0, 0), (4, 2))


# -- a slow reference ------------------------------------------------------------------------


def reference_on(p, a, b):
  return ((b[0] - a[0]) * (p[1] - a[1]) == (b[1] - a[1]) * (p[0] - a[0])
          and min(a[0], b[0]) <= p[0] <= max(a[0], b[0]) and min(a[1], b[1]) <= p[1] <= max(a[1], b[1]))


def reference_intersection(p1, p2, q1, q2):
  """Line equations a*x + b*y = c solved by Cramer's rule; collinear pieces by projection on x
  (or y for a vertical line)."""
  p1, p2, q1, q2 = [(F(x), F(y)) for x, y in (p1, p2, q1, q2)]
  if p1 == p2 and q1 == q2:
    return p1 if p1 == q1 else None
  if p1 == p2:
    return p1 if reference_on(p1, q1, q2) else None
  if q1 == q2:
    return q1 if reference_on(q1, p1, p2) else None
  a1, b1 = p2[1] - p1[1], p1[0] - p2[0]
  c1 = a1 * p1[0] + b1 * p1[1]
  a2, b2 = q2[1] - q1[1], q1[0] - q2[0]
  c2 = a2 * q1[0] + b2 * q1[1]
  det = a1 * b2 - a2 * b1
  if det != 0:
    point = ((c1 * b2 - c2 * b1) / det, (a1 * c2 - a2 * c1) / det)
    return point if reference_on(point, p1, p2) and reference_on(point, q1, q2) else None
  if a1 * q1[0] + b1 * q1[1] != c1:
    return None
  axis = 0 if p1[0] != p2[0] else 1
  lo = max(min(p1, p2, key=lambda p: p[axis]), min(q1, q2, key=lambda p: p[axis]), key=lambda p: p[axis])
  hi = min(max(p1, p2, key=lambda p: p[axis]), max(q1, q2, key=lambda p: p[axis]), key=lambda p: p[axis])
  if lo[axis] > hi[axis]:
    return None
  return lo if lo == hi else (lo, hi)


def random_case(rng):
  kind = rng.randrange(4)
  pick = lambda: (rng.randint(-8, 8), rng.randint(-8, 8))  # noqa: E731
  if kind == 0:  # four points on one line
    base = pick()
    d = (rng.randint(-3, 3), rng.randint(-3, 3))
    if d == (0, 0):
      d = (1, 0)
    p1, p2, q1, q2 = [(base[0] + t * d[0], base[1] + t * d[1]) for t in (rng.randint(-4, 4) for _ in range(4))]
  elif kind == 1:  # parallel, maybe on one line
    p1, q1 = pick(), pick()
    d = (rng.randint(-4, 4), rng.randint(-4, 4))
    p2 = (p1[0] + d[0], p1[1] + d[1])
    k = rng.choice([-2, -1, 1, 2])
    q2 = (q1[0] + k * d[0], q1[1] + k * d[1])
  elif kind == 2:  # sharing an end
    p1, p2, q2 = pick(), pick(), pick()
    q1 = rng.choice([p1, p2])
  else:
    p1, p2, q1, q2 = pick(), pick(), pick(), pick()
  return p1, p2, q1, q2


@pytest.mark.parametrize("seed", range(8))
def test_random_segments(seed):
  rng = random.Random(4200 + seed)
  for _ in range(150):
    p1, p2, q1, q2 = random_case(rng)
    want = reference_intersection(p1, p2, q1, q2)
    got = segment_intersection(p1, p2, q1, q2)
    assert got == want, (p1, p2, q1, q2)
    check_types(got)
    assert segment_intersection(q2, q1, p1, p2) == want, (q2, q1, p1, p2)
