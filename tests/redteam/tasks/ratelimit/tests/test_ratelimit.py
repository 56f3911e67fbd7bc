import random
from fractions import Fraction

import pytest

from ratelimit import KeyedLimiter, SlidingWindow, TokenBucket


class FakeClock:
  """A clock the tests move by hand."""

  def __init__(self, start=0.0):
    self.now = start

  def __call__(self):
    return self.now

  def advance(self, seconds):
    self.now += seconds
    return self.now


@pytest.fixture
def clock():
  return FakeClock()


@pytest.fixture
def make_bucket(clock):
  def make(rate, capacity):
    return TokenBucket(rate, capacity, clock=clock)
  return make


@pytest.fixture
def make_window(clock):
  def make(limit, window):
    return SlidingWindow(limit, window, clock=clock)
  return make


# -- slow exact models ---------------------------------------------------------------------


def model_bucket(rate, capacity, events):
  """Replays (time, op, cost) events exactly with Fractions: op is "acquire", "available" or
  "retry"; returns the list of answers."""
  rate, capacity = Fraction(rate), Fraction(capacity)
  tokens, last, answers = capacity, Fraction(0), []
  for when, op, cost in events:
    when = Fraction(when)
    tokens = min(capacity, tokens + (when - last) * rate)
    last = when
    if op == "acquire":
      ok = tokens >= cost
      if ok:
        tokens -= cost
      answers.append(ok)
    elif op == "available":
      answers.append(tokens)
    else:
      answers.append(Fraction(0) if tokens >= cost else (cost - tokens) / rate)
  return answers


def model_window(limit, window, events):
  """Replays (time, op) events by scanning every allowed call so far; op is "acquire", "count"
  or "retry"."""
  window = Fraction(window)
  allowed, answers = [], []
  for when, op in events:
    when = Fraction(when)
    live = [t for t in allowed if when - window < t <= when]
    if op == "acquire":
      ok = len(live) < limit
      if ok:
        allowed.append(when)
      answers.append(ok)
    elif op == "count":
      answers.append(len(live))
    else:
      answers.append(Fraction(0) if len(live) < limit else min(live) + window - when)
  return answers


def same(got, want):
  if isinstance(want, bool):
    return got is want
  return got == pytest.approx(float(want), abs=1e-9)


# -- token bucket --------------------------------------------------------------------------


class TestTokenBucket:

  def test_starts_full(self, make_bucket):
    bucket = make_bucket(1.0, 4)
    assert bucket.available() == pytest.approx(4)
    assert bucket.try_acquire(4)
    assert not bucket.try_acquire()

  def test_fractional_refill(self, clock, make_bucket):
    bucket = make_bucket(0.5, 1)
    assert bucket.try_acquire()
    clock.advance(1.5)
    assert bucket.available() == pytest.approx(0.75)
    assert not bucket.try_acquire()
    clock.advance(0.5)
    assert bucket.try_acquire()

  def test_fractions_are_not_lost_between_calls(self, clock, make_bucket):
    bucket = make_bucket(0.5, 4)
    assert bucket.try_acquire(4)
    for _ in range(3):
      clock.advance(1.0)
      bucket.available()
    assert bucket.available() == pytest.approx(1.5)

  def test_refill_stops_at_capacity(self, clock, make_bucket):
    bucket = make_bucket(2.0, 3)
    bucket.try_acquire(3)
    clock.advance(100.0)
    assert bucket.available() == pytest.approx(3)

  def test_failed_acquire_takes_nothing(self, clock, make_bucket):
    bucket = make_bucket(1.0, 5)
    assert bucket.try_acquire(4)
    assert not bucket.try_acquire(2)
    assert bucket.available() == pytest.approx(1)

  def test_retry_after_counts_the_wait_already_done(self, clock, make_bucket):
    bucket = make_bucket(2.0, 2)
    assert bucket.try_acquire(2)
    assert bucket.retry_after(2) == pytest.approx(1.0)
    clock.advance(0.25)
    assert bucket.retry_after(2) == pytest.approx(0.75)
    clock.advance(0.75)
    assert bucket.retry_after(2) == 0.0
    assert bucket.try_acquire(2)

  def test_retry_after_partial_tokens(self, clock, make_bucket):
    bucket = make_bucket(0.25, 2)
    bucket.try_acquire(2)
    clock.advance(2.0)
    assert bucket.retry_after(1) == pytest.approx(2.0)

  def test_cost_outside_range(self, make_bucket):
    bucket = make_bucket(1.0, 3)
    with pytest.raises(ValueError):
      bucket.try_acquire(4)
    with pytest.raises(ValueError):
      bucket.retry_after(0)

  def test_bad_arguments(self, clock):
    with pytest.raises(ValueError):
      TokenBucket(0, 5, clock=clock)
    with pytest.raises(ValueError):
      TokenBucket(1.0, 0, clock=clock)


# -- sliding window ------------------------------------------------------------------------


class TestSlidingWindow:

  def test_limit_within_window(self, clock, make_window):
    window = make_window(3, 10.0)
    assert [window.try_acquire() for _ in range(4)] == [True, True, True, False]
    assert window.count() == 3

  def test_call_exactly_window_ago_no_longer_counts(self, clock, make_window):
    window = make_window(1, 1.0)
    assert window.try_acquire()
    clock.advance(1.0)
    assert window.try_acquire()

  def test_boundary_with_several_calls(self, clock, make_window):
    window = make_window(2, 4.0)
    assert window.try_acquire()
    clock.advance(1.0)
    assert window.try_acquire()
    clock.advance(2.5)
    assert not window.try_acquire()
    clock.advance(0.5)
    assert window.count() == 1
    assert window.try_acquire()

  def test_refused_calls_are_not_recorded(self, clock, make_window):
    window = make_window(1, 2.0)
    assert window.try_acquire()
    clock.advance(1.0)
    assert not window.try_acquire()
    clock.advance(1.0)
    assert window.try_acquire()

  def test_retry_after(self, clock, make_window):
    window = make_window(2, 5.0)
    window.try_acquire()
    clock.advance(2.0)
    window.try_acquire()
    assert window.retry_after() == pytest.approx(3.0)
    clock.advance(3.0)
    assert window.retry_after() == 0.0

  def test_bad_arguments(self, clock):
    with pytest.raises(ValueError):
      SlidingWindow(0, 1.0, clock=clock)
    with pytest.raises(ValueError):
      SlidingWindow(1, 0, clock=clock)


# -- keyed ---------------------------------------------------------------------------------


class TestKeyedLimiter:

  def test_keys_are_independent(self, clock):
    keyed = KeyedLimiter(lambda: SlidingWindow(1, 1.0, clock=clock))
    assert keyed.try_acquire("alice") and keyed.try_acquire("bob")
    assert not keyed.try_acquire("alice")
    clock.advance(1.0)
    assert keyed.try_acquire("alice")
    assert len(keyed) == 2 and "bob" in keyed

  def test_keyed_buckets_pass_costs(self, clock):
    keyed = KeyedLimiter(lambda: TokenBucket(1.0, 3, clock=clock))
    assert keyed.try_acquire("k", 3)
    assert keyed.retry_after("k", 2) == pytest.approx(2.0)
    clock.advance(0.5)
    assert keyed.retry_after("k", 2) == pytest.approx(1.5)


# -- seeded random sequences against the slow models -------------------------------------------

RATES = [0.25, 0.5, 1.0, 2.0, 4.0]
STEPS = [0.0, 0.125, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0]


@pytest.mark.parametrize("seed", range(6))
def test_random_bucket_sequences(seed, clock):
  rng = random.Random(seed)
  for _ in range(20):
    rate, capacity = rng.choice(RATES), rng.randint(1, 6)
    start = clock.now
    bucket = TokenBucket(rate, capacity, clock=clock)
    events, answers = [], []
    for _ in range(rng.randint(5, 40)):
      clock.advance(rng.choice(STEPS))
      op, cost = rng.choice(["acquire", "acquire", "available", "retry"]), rng.randint(1, capacity)
      events.append((clock.now - start, op, cost))
      answers.append(bucket.try_acquire(cost) if op == "acquire" else bucket.available() if op == "available"
                     else bucket.retry_after(cost))
    for k, want in enumerate(model_bucket(rate, capacity, events)):
      assert same(answers[k], want), (rate, capacity, events[:k + 1])


@pytest.mark.parametrize("seed", range(6))
def test_random_window_sequences(seed, clock):
  rng = random.Random(100 + seed)
  for _ in range(20):
    limit, span = rng.randint(1, 5), rng.choice([0.5, 1.0, 2.0, 3.0])
    start = clock.now
    window = SlidingWindow(limit, span, clock=clock)
    events, answers = [], []
    for _ in range(rng.randint(5, 40)):
      clock.advance(rng.choice(STEPS))
      op = rng.choice(["acquire", "acquire", "acquire", "count", "retry"])
      events.append((clock.now - start, op))
      answers.append(window.try_acquire() if op == "acquire" else window.count() if op == "count"
                     else window.retry_after())
    for k, want in enumerate(model_window(limit, span, events)):
      assert same(answers[k], want), (limit, span, events[:k + 1])
