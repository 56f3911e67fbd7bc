from fractions import Fraction

import pytest

from polygeom import GeometryError, area, convex_hull, locate, orient, orientation, segment_intersection

SQUARE = [(0, 0), (4, 0), (4, 4), (0, 4)]


def test_area_and_orientation():
  assert area(SQUARE) == 16
  assert orientation(SQUARE) == "ccw"
  assert orientation(SQUARE[::-1]) == "cw"
  assert area([(0, 0), (1, 0), (0, 1)]) == Fraction(1, 2)


def test_orient():
  assert orient((0, 0), (1, 0), (1, 1)) == 1
  assert orient((0, 0), (1, 0), (2, 0)) == 0


def test_locate_clear_cases():
  assert locate((2, 1), SQUARE) == "inside"
  assert locate((5, 1), SQUARE) == "outside"


def test_crossing_segments():
  assert segment_intersection((0, 0), (2, 2), (0, 2), (2, 0)) == (1, 1)
  assert segment_intersection((0, 0), (1, 0), (0, 1), (1, 1)) is None


def test_hull_of_square_with_inner_point():
  assert convex_hull([(0, 0), (4, 0), (4, 4), (0, 4), (2, 2)]) == SQUARE


def test_too_few_vertices():
  with pytest.raises(GeometryError):
    area([(0, 0), (1, 1)])
