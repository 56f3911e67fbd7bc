import pytest

from rangeset import RangeSet


def test_overlapping_ranges_merge():
  s = RangeSet()
  s.add(1, 5)
  s.add(3, 8)
  assert s.ranges() == [(1, 8)]
  assert len(s) == 7


def test_contains():
  s = RangeSet([(1, 4), (10, 12)])
  assert [x for x in range(15) if x in s] == [1, 2, 3, 10, 11]


def test_remove_left_part():
  s = RangeSet([(0, 10)])
  s.remove(0, 4)
  assert s.ranges() == [(4, 10)]


def test_reversed_range():
  with pytest.raises(ValueError):
    RangeSet().add(5, 1)
