"""A token bucket: tokens refill continuously at a fixed rate up to a capacity."""

import time


class TokenBucket:
  """Holds up to `capacity` tokens and starts full; tokens come back at `rate` per second (of
  `clock`, a callable returning seconds that never go backwards). `try_acquire(cost)` takes
  `cost` tokens when at least that many are there."""

  def __init__(self, rate, capacity, clock=time.monotonic):
    if rate <= 0 or capacity <= 0:
      raise ValueError("rate and capacity must be positive")
    self.rate = rate
    self.capacity = capacity
    self._clock = clock
    self._tokens = capacity
    self._last = clock()

  def _refill(self):
    now = self._clock()
    added = int((now - self._last) * self.rate)
    if added > 0:
      self._tokens = min(self.capacity, self._tokens + added)
      self._last = now

  def _check(self, cost):
    if cost <= 0 or cost > self.capacity:
      raise ValueError(f"cost must be in (0, {self.capacity}], not {cost!r}")

  def available(self):
    """The tokens in the bucket now (a float when a token is partly refilled)."""
    self._refill()
    return self._tokens

  def try_acquire(self, cost=1):
    """Takes `cost` tokens and returns True if there are that many; else False, taking none."""
    self._check(cost)
    self._refill()
    if self._tokens >= cost:
      self._tokens -= cost
      return True
    return False

  def retry_after(self, cost=1):
    """Seconds from now until `try_acquire(cost)` would succeed (0.0 if it would now)."""
    self._check(cost)
    if self._tokens >= cost:
      return 0.0
    return (cost - self._tokens) / self.rate
