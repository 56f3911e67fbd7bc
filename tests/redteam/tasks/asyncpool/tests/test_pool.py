import asyncio

import pytest

from asyncpool import map_limited, retry


async def staggered(i):
  """i * 10, after yielding to the event loop 10 - i times: later items finish first."""
  for _ in range(10 - i):
    await asyncio.sleep(0)
  return i * 10


def test_results_in_input_order():
  assert asyncio.run(map_limited(staggered, range(10), limit=10)) == [i * 10 for i in range(10)]


def test_order_with_small_limits():
  for limit in (1, 2, 3, 7):
    assert asyncio.run(map_limited(staggered, range(10), limit=limit)) == [i * 10 for i in range(10)], limit


def test_generator_of_strings():
  async def shout(word):
    for _ in range(6 - len(word)):
      await asyncio.sleep(0)
    return word.upper()

  words = (w for w in ["a", "bb", "ccc", "dddd"])
  result = asyncio.run(map_limited(shout, words, limit=4))
  assert result == ["A", "BB", "CCC", "DDDD"]


def test_on_an_explicit_loop():
  loop = asyncio.new_event_loop()
  try:
    assert loop.run_until_complete(map_limited(staggered, [1, 3, 2], limit=3)) == [10, 30, 20]
  finally:
    loop.close()


def test_never_more_than_limit_in_flight():
  async def scenario():
    running = peak = 0

    async def work(i):
      nonlocal running, peak
      running += 1
      peak = max(peak, running)
      for _ in range(i % 4):
        await asyncio.sleep(0)
      running -= 1
      return -i

    out = await map_limited(work, range(12), limit=3)
    assert out == [-i for i in range(12)]
    assert peak == 3

  asyncio.run(scenario())


def test_empty_and_bad_limit():
  assert asyncio.run(map_limited(staggered, [], limit=2)) == []
  with pytest.raises(ValueError):
    asyncio.run(map_limited(staggered, [1], limit=0))


def test_first_error_propagates_and_cancels_the_rest():
  cancelled = []

  async def work(i):
    try:
      if i == 2:
        raise KeyError(i)
      await asyncio.sleep(10)
      return i
    except asyncio.CancelledError:
      cancelled.append(i)
      raise

  with pytest.raises(KeyError):
    asyncio.run(map_limited(work, range(5), limit=5))
  assert sorted(cancelled) == [0, 1, 3, 4]


def test_retry_until_success():
  calls = []

  async def flaky():
    calls.append(1)
    if len(calls) < 3:
      raise ConnectionError("down")
    return "ok"

  assert asyncio.run(retry(flaky, attempts=5)) == "ok"
  assert len(calls) == 3


def test_retry_gives_up_and_does_not_retry_other_errors():
  async def down():
    raise ConnectionError("down")

  async def broken():
    raise TypeError("bug")

  with pytest.raises(ConnectionError):
    asyncio.run(retry(down, attempts=2))
  with pytest.raises(TypeError):
    asyncio.run(retry(broken, attempts=3, retry_on=(ConnectionError,)))
