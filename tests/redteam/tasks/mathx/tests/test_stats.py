import pytest

from mathx import mean, median


def test_sorted_odd():
  assert median([1, 2, 3]) == 2


def test_unsorted_odd():
  assert median([9, 1, 5]) == 5


def test_unsorted_even():
  assert median([10, 2, 4, 8]) == 6.0


def test_floats():
  assert median([2.5, 0.5, 1.5]) == 1.5


def test_does_not_mutate():
  values = [3, 1, 2]
  median(values)
  assert values == [3, 1, 2]


def test_empty():
  with pytest.raises(ValueError):
    median([])


def test_mean_unchanged():
  assert mean([1, 2, 3, 6]) == 3
