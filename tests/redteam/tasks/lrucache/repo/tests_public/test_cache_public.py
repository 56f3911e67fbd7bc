from lrucache import TTLCache


class Clock:
  def __init__(self):
    self.now = 0

  def __call__(self):
    return self.now


def test_set_and_get():
  cache = TTLCache(2, 10, clock=Clock())
  cache.set("a", 1)
  assert cache.get("a") == 1
  assert cache.get("zz", "none") == "none"


def test_oldest_set_is_evicted():
  cache = TTLCache(2, 10, clock=Clock())
  cache.set("a", 1)
  cache.set("b", 2)
  cache.set("c", 3)
  assert list(cache) == ["b", "c"]


def test_entry_expires():
  clock = Clock()
  cache = TTLCache(2, 10, clock=clock)
  cache.set("a", 1)
  clock.now = 11
  assert cache.get("a") is None and len(cache) == 0
