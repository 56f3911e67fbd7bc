"""Run times of a job that repeats at a fixed interval."""

from tempus.duration import parse_duration


def next_runs(start, every, count):
  """The first `count` run times (seconds since the epoch) of a job started at `start` that
  repeats every `every` (a duration string or a number of seconds)."""
  step = parse_duration(every) if isinstance(every, str) else float(every)
  if step <= 0:
    raise ValueError(f"the interval must be positive: {every!r}")
  return [start + i * step for i in range(count)]
