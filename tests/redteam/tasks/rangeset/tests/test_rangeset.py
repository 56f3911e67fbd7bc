import random

import pytest

from rangeset import RangeSet


def as_ranges(values):
  """The sorted, disjoint, non-touching ranges of a set of integers, the slow way."""
  out = []
  for value in sorted(values):
    if out and out[-1][1] == value:
      out[-1][1] = value + 1
    else:
      out.append([value, value + 1])
  return [tuple(r) for r in out]


def test_touching_ranges_merge():
  s = RangeSet()
  s.add(1, 3)
  s.add(3, 5)
  assert s.ranges() == [(1, 5)]
  s.add(0, 1)
  assert s.ranges() == [(0, 5)]


def test_bridging_range_merges_both_neighbours():
  s = RangeSet([(0, 2), (4, 6), (9, 12)])
  s.add(2, 4)
  assert s.ranges() == [(0, 6), (9, 12)]
  s.add(6, 9)
  assert s.ranges() == [(0, 12)]


def test_constructor_merges_touching_ranges():
  assert RangeSet([(5, 7), (1, 3), (3, 5)]).ranges() == [(1, 7)]
  assert RangeSet([(-6, -3), (-3, 0)]).ranges() == [(-6, 0)]


def test_remove_middle_keeps_both_parts():
  s = RangeSet([(0, 10)])
  s.remove(3, 5)
  assert s.ranges() == [(0, 3), (5, 10)]
  assert 7 in s and 4 not in s and len(s) == 8


def test_remove_across_ranges_keeps_right_part():
  s = RangeSet([(0, 4), (6, 8), (10, 15)])
  s.remove(2, 12)
  assert s.ranges() == [(0, 2), (12, 15)]


def test_remove_exact_and_empty():
  s = RangeSet([(2, 5)])
  s.remove(7, 7)
  s.add(9, 9)
  assert s.ranges() == [(2, 5)]
  s.remove(2, 5)
  assert s.ranges() == [] and len(s) == 0


def test_bad_bounds():
  with pytest.raises(ValueError):
    RangeSet().remove(4, 2)
  with pytest.raises(TypeError):
    RangeSet().add(1.5, 3)


def test_operators():
  a = RangeSet([(0, 5), (10, 20)])
  b = RangeSet([(5, 10), (15, 25)])
  assert (a | b).ranges() == [(0, 25)]
  assert (a - b).ranges() == [(0, 5), (10, 15)]
  assert (a & b).ranges() == [(15, 20)]
  assert (RangeSet([(0, 30)]) - RangeSet([(10, 12)])).ranges() == [(0, 10), (12, 30)]


def random_range(rng):
  start = rng.randint(0, 50)
  return start, start + rng.randint(0, 8)


@pytest.mark.parametrize("seed", range(40))
def test_random_operations_against_a_model(seed):
  rng = random.Random(seed)
  s, model = RangeSet(), set()
  for _ in range(30):
    start, end = random_range(rng)
    if rng.random() < 0.6:
      s.add(start, end)
      model.update(range(start, end))
    else:
      s.remove(start, end)
      model.difference_update(range(start, end))
    assert s.ranges() == as_ranges(model)
    assert len(s) == len(model)
    assert [x for x in range(-2, 62) if x in s] == sorted(model)


@pytest.mark.parametrize("seed", range(20))
def test_random_set_algebra(seed):
  rng = random.Random(1000 + seed)
  sets, models = [], []
  for _ in range(2):
    pairs = [random_range(rng) for _ in range(rng.randint(1, 8))]
    sets.append(RangeSet(pairs))
    models.append({x for start, end in pairs for x in range(start, end)})
  (a, b), (ma, mb) = sets, models
  assert (a | b).ranges() == as_ranges(ma | mb)
  assert (a - b).ranges() == as_ranges(ma - mb)
  assert (a & b).ranges() == as_ranges(ma & mb)
