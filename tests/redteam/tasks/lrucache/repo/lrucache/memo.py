"""memoize(cache): a decorator that keeps a function's results in a TTLCache."""

import functools


def memoize(cache):
  """Caches `func(*args)` in `cache` under the tuple of positional arguments."""

  def decorate(func):
    @functools.wraps(func)
    def wrapper(*args):
      missing = object()
      value = cache.get(args, missing)
      if value is missing:
        value = func(*args)
        cache.set(args, value)
      return value

    wrapper.cache = cache
    return wrapper

  return decorate
