"""Closed line segments: whether a point lies on one, and where two of them meet."""

from polygeom.points import as_point, cross


def on_segment(point, a, b):
  """Whether `point` lies on the closed segment from a to b (its ends included)."""
  p, a, b = as_point(point), as_point(a), as_point(b)
  return (cross(a, b, p) == 0 and min(a[0], b[0]) <= p[0] <= max(a[0], b[0])
          and min(a[1], b[1]) <= p[1] <= max(a[1], b[1]))


def segment_intersection(p1, p2, q1, q2):
  """Where the closed segments p1-p2 and q1-q2 meet: None, a point (x, y), or, when they overlap
  along a piece of positive length, that piece as a pair of points (see README.md)."""
  p1, p2, q1, q2 = as_point(p1), as_point(p2), as_point(q1), as_point(q2)
  r = (p2[0] - p1[0], p2[1] - p1[1])
  s = (q2[0] - q1[0], q2[1] - q1[1])
  qp = (q1[0] - p1[0], q1[1] - p1[1])
  den = r[0] * s[1] - r[1] * s[0]
  if den == 0:
    return None  # parallel segments never meet
  t = (qp[0] * s[1] - qp[1] * s[0]) / den
  u = (qp[0] * r[1] - qp[1] * r[0]) / den
  if 0 <= t <= 1 and 0 <= u <= 1:
    return (p1[0] + t * r[0], p1[1] + t * r[1])
  return None
