"""Apply a coroutine function to many items with a cap on the calls in flight."""

import asyncio


async def map_limited(func, items, limit=4):
  """Awaits `func(item)` for every item of `items` (any iterable) with at most `limit` calls
  running at once and returns the list of results, `result[i]` being the result for the i-th
  item. The first exception raised by a call cancels the calls still running and propagates."""
  if limit < 1:
    raise ValueError(f"limit must be at least 1: {limit}")
  semaphore = asyncio.Semaphore(limit)
  results = []

  async def call(item):
    async with semaphore:
      value = await func(item)
    results.append(value)

  tasks = [asyncio.ensure_future(call(item)) for item in items]
  try:
    await asyncio.gather(*tasks)
  except BaseException:
    for task in tasks:
      task.cancel()
    raise
  return results
