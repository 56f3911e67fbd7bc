"""Retrying a flaky coroutine function with exponential backoff."""

import asyncio


async def retry(func, attempts=3, delay=0.0, backoff=2.0, retry_on=(Exception,)):
  """Awaits `func()` until it returns, at most `attempts` times; waits `delay` seconds before
  the second try and `backoff` times longer before each further one. Exceptions that are not
  instances of `retry_on` propagate at once; the last one propagates when every try failed."""
  if attempts < 1:
    raise ValueError(f"attempts must be at least 1: {attempts}")
  wait = delay
  for attempt in range(attempts):
    try:
      return await func()
    except retry_on:
      if attempt == attempts - 1:
        raise
    await asyncio.sleep(wait)
    wait *= backoff
  raise AssertionError("unreachable")
