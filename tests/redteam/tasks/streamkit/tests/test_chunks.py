import itertools

import pytest

from streamkit import chunked, flatten, parse_records
from streamkit import chunks as chunks_module


def counting(items, seen):
  """A generator over `items` that records in `seen` every item read from it."""
  for item in items:
    seen.append(item)
    yield item


def expected_chunks(n, size):
  return [list(range(start, min(start + size, n))) for start in range(0, n, size)]


def test_exact_multiple():
  assert list(chunked(range(6), 3)) == [[0, 1, 2], [3, 4, 5]]


def test_last_chunk_is_shorter():
  assert list(chunked("abcdefg", 3)) == [["a", "b", "c"], ["d", "e", "f"], ["g"]]


def test_every_length_and_size():
  for n in range(25):
    for size in range(1, 7):
      assert list(chunked(range(n), size)) == expected_chunks(n, size), (n, size)


def test_round_trip_through_flatten():
  for n in range(30):
    items = [f"item{i}" for i in range(n)]
    assert list(flatten(chunked(iter(items), 4))) == items


def test_lazy_on_infinite_input():
  seen = []
  stream = chunked(counting(itertools.count(), seen), 5)
  assert next(stream) == [0, 1, 2, 3, 4]
  assert seen == [0, 1, 2, 3, 4]
  assert next(stream) == [5, 6, 7, 8, 9]
  assert len(seen) == 10


def test_reads_only_what_is_consumed():
  seen = []
  first = next(chunked(counting(range(100), seen), 10))
  assert first == list(range(10))
  assert seen == list(range(10))


def test_default_size(monkeypatch):
  monkeypatch.setattr(chunks_module, "DEFAULT_SIZE", 4)
  assert [len(c) for c in chunked(range(10))] == [4, 4, 2]


def test_bad_size():
  for size in (0, -1):
    with pytest.raises(ValueError):
      list(chunked([1, 2], size))


def test_chunks_are_separate_lists():
  first, second = chunked(range(4), 2)
  first.append(99)
  assert second == [2, 3]


def test_records():
  lines = ["name: ada", "lang: en", "", "", "name: bob", "lang: fr"]
  assert list(parse_records(lines)) == [{"name": "ada", "lang": "en"}, {"name": "bob", "lang": "fr"}]
  with pytest.raises(ValueError):
    list(parse_records(["no separator"]))
