"""Convex hulls of finite point sets (Andrew's monotone chain)."""

from polygeom.points import as_point, cross


def _chain(points):
  chain = []
  for p in points:
    while len(chain) >= 2 and cross(chain[-2], chain[-1], p) < 0:
      chain.pop()
    chain.append(p)
  return chain


def convex_hull(points):
  """The corners of the convex hull of `points`, counterclockwise from the smallest point (see
  README.md): points on the hull's edges that are not corners, and repeated points, are left out."""
  distinct = sorted(set(as_point(p) for p in points))
  if len(distinct) <= 2:
    return distinct
  lower = _chain(distinct)
  upper = _chain(reversed(distinct))
  return lower[:-1] + upper[:-1]
