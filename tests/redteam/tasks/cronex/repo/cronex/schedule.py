"""When a cron expression fires next."""

from datetime import date, datetime, timedelta

from cronex.expr import as_expr
from cronex.fields import CronError

_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
# next_fire looks this many years past the year it starts in before it gives up.
SEARCH_YEARS = 8


def days_in_month(year, month):
  """The number of days of a month in the Gregorian calendar."""
  if month == 2 and year % 4 == 0:
    return 29
  return _MONTH_DAYS[month - 1]


def _first_time(expr, earliest):
  """The first (hour, minute) of the expression at or after `earliest` on one day, or None."""
  for hour in sorted(expr.hours):
    if hour < earliest[0]:
      continue
    for minute in sorted(expr.minutes):
      if (hour, minute) >= earliest:
        return hour, minute
  return None


def next_fire(expr, after):
  """The first minute strictly after the naive datetime `after` at which `expr` fires."""
  expr = as_expr(expr)
  if not isinstance(after, datetime):
    raise TypeError("next_fire() takes a datetime")
  if after.tzinfo is not None:
    raise ValueError("cronex works on naive datetimes only")
  start = after.replace(second=0, microsecond=0) + timedelta(minutes=1)
  year, month, day = start.year, start.month, start.day
  while year <= start.year + SEARCH_YEARS:
    if month in expr.months:
      for d in range(day, days_in_month(year, month) + 1):
        if not expr.day_matches(date(year, month, d)):
          continue
        same_day = (year, month, d) == (start.year, start.month, start.day)
        found = _first_time(expr, (start.hour, start.minute) if same_day else (0, 0))
        if found is not None:
          return datetime(year, month, d, *found)
    year, month, day = (year + 1, 1, 1) if month == 12 else (year, month + 1, 1)
  raise CronError(f"{expr.text!r} does not fire within {SEARCH_YEARS} years of {after}")


def iter_fires(expr, after, count=None):
  """The times `expr` fires after `after`, in order (`count` of them, or without end)."""
  expr = as_expr(expr)
  moment = after
  produced = 0
  while count is None or produced < count:
    moment = next_fire(expr, moment)
    yield moment
    produced += 1
