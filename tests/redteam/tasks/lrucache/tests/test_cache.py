import time

import pytest

from lrucache import TTLCache, memoize


class FakeClock:
  """A clock the test moves by hand."""

  def __init__(self, now=0):
    self.now = now

  def __call__(self):
    return self.now

  def advance(self, seconds):
    self.now += seconds


def filled(keys, maxsize=None, ttl=100, clock=None):
  cache = TTLCache(maxsize or len(keys), ttl, clock=clock or FakeClock())
  for i, key in enumerate(keys):
    cache.set(key, i)
  return cache


def test_set_get_and_default():
  cache = filled(["a", "b"])
  assert cache.get("a") == 0 and cache.get("b") == 1
  assert cache.get("c") is None and cache.get("c", -1) == -1


def test_eviction_without_reads():
  cache = filled(["a", "b", "c"])
  cache.set("d", 3)
  assert list(cache) == ["b", "c", "d"]


def test_get_makes_key_most_recent():
  cache = filled(["a", "b", "c"])
  assert cache.get("a") == 0
  cache.set("d", 3)
  assert "b" not in cache and "a" in cache
  assert list(cache) == ["c", "a", "d"]


def test_iteration_follows_use():
  cache = filled(["a", "b", "c", "d"])
  cache.get("b")
  cache.get("a")
  assert list(cache) == ["c", "d", "b", "a"]
  cache.set("e", 4)
  cache.set("f", 5)
  assert list(cache) == ["b", "a", "e", "f"]


def test_contains_and_len_do_not_reorder():
  cache = filled(["a", "b"])
  assert "a" in cache and len(cache) == 2
  cache.set("c", 2)
  assert list(cache) == ["b", "c"]


def test_set_existing_key_refreshes():
  cache = filled(["a", "b", "c"])
  cache.set("a", 10)
  cache.set("d", 3)
  assert list(cache) == ["c", "a", "d"] and cache.get("a") == 10


def test_expiry_at_exactly_ttl():
  clock = FakeClock()
  cache = TTLCache(3, 10, clock=clock)
  cache.set("a", 1)
  clock.advance(9)
  assert cache.get("a") == 1
  clock.advance(1)
  assert "a" not in cache
  assert cache.get("a") is None and len(cache) == 0 and list(cache) == []


def test_expired_entry_frees_room():
  clock = FakeClock(100)
  cache = TTLCache(2, 5, clock=clock)
  cache.set("a", 1)
  clock.advance(1)
  cache.set("b", 2)
  clock.advance(4)
  cache.set("c", 3)
  assert list(cache) == ["b", "c"]
  clock.advance(1)
  assert list(cache) == ["c"]


def test_set_restarts_ttl():
  clock = FakeClock()
  cache = TTLCache(2, 5, clock=clock)
  cache.set("a", 1)
  clock.advance(3)
  cache.set("a", 2)
  clock.advance(4)
  assert cache.get("a") == 2
  clock.advance(1)
  assert cache.get("a") is None


def test_pop():
  clock = FakeClock()
  cache = TTLCache(2, 5, clock=clock)
  cache.set("a", 1)
  cache.set("b", 2)
  assert cache.pop("a") == 1 and list(cache) == ["b"]
  clock.advance(5)
  assert cache.pop("b", "gone") == "gone"
  with pytest.raises(KeyError):
    cache.pop("b")


def test_default_clock_is_time_monotonic(monkeypatch):
  now = [50]
  monkeypatch.setattr(time, "monotonic", lambda: now[0])
  cache = TTLCache(2, 5)
  cache.set("x", 1)
  cache.set("y", 2)
  assert cache.get("x") == 1
  cache.set("z", 3)
  assert list(cache) == ["x", "z"]
  now[0] = 55
  assert cache.get("x") is None and len(cache) == 0


def test_memoize_keeps_recent_calls():
  calls = []

  @memoize(TTLCache(2, 100, clock=FakeClock()))
  def square(n):
    calls.append(n)
    return n * n

  assert [square(2), square(3), square(2), square(4), square(2)] == [4, 9, 4, 16, 4]
  assert calls == [2, 3, 4]


def test_bad_arguments():
  with pytest.raises(ValueError):
    TTLCache(0, 5)
  with pytest.raises(ValueError):
    TTLCache(2, 0)
