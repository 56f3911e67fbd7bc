"""One limiter per key (a user, an IP address, an API token...)."""


class KeyedLimiter:
  """Makes a limiter with `factory()` the first time a key is seen and sends that key's calls to
  it; keys never share a limiter."""

  def __init__(self, factory):
    self._factory = factory
    self._limiters = {}

  def limiter(self, key):
    if key not in self._limiters:
      self._limiters[key] = self._factory()
    return self._limiters[key]

  def try_acquire(self, key, *args, **kwargs):
    return self.limiter(key).try_acquire(*args, **kwargs)

  def retry_after(self, key, *args, **kwargs):
    return self.limiter(key).retry_after(*args, **kwargs)

  def __len__(self):
    return len(self._limiters)

  def __contains__(self, key):
    return key in self._limiters
