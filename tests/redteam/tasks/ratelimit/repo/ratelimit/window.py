"""A sliding-window log: at most `limit` acquisitions in any `window` seconds."""

import collections
import time


class SlidingWindow:
  """A call at time t is allowed when fewer than `limit` allowed calls happened in the
  half-open interval (t - window, t]; a call made exactly `window` seconds earlier no longer
  counts. `clock` is a callable returning seconds that never go backwards."""

  def __init__(self, limit, window, clock=time.monotonic):
    if limit < 1 or window <= 0:
      raise ValueError("limit must be at least 1 and window positive")
    self.limit = limit
    self.window = window
    self._clock = clock
    self._log = collections.deque()

  def _expire(self, now):
    while self._log and self._log[0] < now - self.window:
      self._log.popleft()

  def count(self):
    """Allowed calls that still count now."""
    self._expire(self._clock())
    return len(self._log)

  def try_acquire(self):
    """Records the call and returns True if it is allowed; else returns False."""
    now = self._clock()
    self._expire(now)
    if len(self._log) < self.limit:
      self._log.append(now)
      return True
    return False

  def retry_after(self):
    """Seconds from now until `try_acquire()` would succeed (0.0 if it would now)."""
    now = self._clock()
    self._expire(now)
    if len(self._log) < self.limit:
      return 0.0
    return self._log[0] + self.window - now
