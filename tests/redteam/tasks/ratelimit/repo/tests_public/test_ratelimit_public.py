from ratelimit import KeyedLimiter, SlidingWindow, TokenBucket


class Clock:
  def __init__(self):
    self.now = 0.0

  def __call__(self):
    return self.now


def test_bucket_starts_full_and_empties():
  clock = Clock()
  bucket = TokenBucket(1.0, 3, clock=clock)
  assert [bucket.try_acquire() for _ in range(4)] == [True, True, True, False]


def test_bucket_refills_whole_tokens():
  clock = Clock()
  bucket = TokenBucket(1.0, 2, clock=clock)
  assert bucket.try_acquire(2)
  clock.now = 2.0
  assert bucket.try_acquire(2)


def test_window_limits_calls():
  clock = Clock()
  window = SlidingWindow(2, 10.0, clock=clock)
  assert [window.try_acquire() for _ in range(3)] == [True, True, False]
  clock.now = 11.0
  assert window.try_acquire()


def test_keyed_limiters_are_separate():
  clock = Clock()
  keyed = KeyedLimiter(lambda: TokenBucket(1.0, 1, clock=clock))
  assert keyed.try_acquire("a") and keyed.try_acquire("b")
  assert not keyed.try_acquire("a")
