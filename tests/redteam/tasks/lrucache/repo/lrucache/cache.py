"""TTLCache: at most `maxsize` entries, each alive for `ttl` seconds after it was last set."""

import time
from collections import OrderedDict

_MISSING = object()


class TTLCache:
  """A mapping-like cache. Entries are kept from least to most recently used; setting a full
  cache evicts expired entries first, then the least recently used one.

  `clock` is a callable taking no arguments and returning seconds; without one the cache reads
  time.monotonic() (looked up on every call)."""

  def __init__(self, maxsize, ttl, clock=None):
    if maxsize < 1:
      raise ValueError(f"maxsize must be at least 1: {maxsize!r}")
    if not ttl > 0:
      raise ValueError(f"ttl must be positive: {ttl!r}")
    self.maxsize = maxsize
    self.ttl = ttl
    self._clock = clock
    self._data = OrderedDict()  # key -> (value, expires_at), least recently used first

  def _now(self):
    return self._clock() if self._clock is not None else time.monotonic()

  def _expired(self, expires_at, now):
    return now > expires_at

  def _purge(self, now):
    for key in [k for k, (_, expires_at) in self._data.items() if self._expired(expires_at, now)]:
      del self._data[key]

  def set(self, key, value):
    """Stores `value` under `key` for `ttl` seconds from now and makes it the most recent."""
    now = self._now()
    self._purge(now)
    self._data[key] = (value, now + self.ttl)
    self._data.move_to_end(key)
    while len(self._data) > self.maxsize:
      self._data.popitem(last=False)

  def get(self, key, default=None):
    """The value under `key` if it is alive (making it the most recent), else `default`."""
    now = self._now()
    entry = self._data.get(key)
    if entry is None:
      return default
    value, expires_at = entry
    if self._expired(expires_at, now):
      del self._data[key]
      return default
    return value

  def pop(self, key, default=_MISSING):
    """Removes `key` and returns its value; `default` (or KeyError) when it is absent or expired."""
    now = self._now()
    entry = self._data.pop(key, None)
    if entry is None or self._expired(entry[1], now):
      if default is _MISSING:
        raise KeyError(key)
      return default
    return entry[0]

  def clear(self):
    self._data.clear()

  def __contains__(self, key):
    entry = self._data.get(key)
    return entry is not None and not self._expired(entry[1], self._now())

  def __len__(self):
    self._purge(self._now())
    return len(self._data)

  def __iter__(self):
    self._purge(self._now())
    return iter(list(self._data))

  def __repr__(self):
    return f"TTLCache(maxsize={self.maxsize}, ttl={self.ttl}, keys={list(self)!r})"
