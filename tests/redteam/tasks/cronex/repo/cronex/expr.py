"""A parsed cron expression and the question whether it fires at a given minute."""

from datetime import date, datetime

from cronex.fields import MONTH_NAMES, WEEKDAY_NAMES, CronError, parse_field


class CronExpr:
  """The five fields of a cron expression as sets of values: minutes (0-59), hours (0-23),
  days of the month (1-31), months (1-12) and weekdays (0-6, Sunday 0; 7 is read as 0)."""

  def __init__(self, text):
    if not isinstance(text, str):
      raise TypeError(f"a cron expression is a string, not {type(text).__name__}")
    fields = text.split()
    if len(fields) != 5:
      raise CronError(f"a cron expression has five fields: {text!r}")
    self.text = text
    self.minutes = frozenset(parse_field(fields[0], 0, 59))
    self.hours = frozenset(parse_field(fields[1], 0, 23))
    self.days = frozenset(parse_field(fields[2], 1, 31))
    self.months = frozenset(parse_field(fields[3], 1, 12, MONTH_NAMES))
    self.weekdays = frozenset(value % 7 for value in parse_field(fields[4], 0, 7, WEEKDAY_NAMES))
    # A day field is unrestricted only when it is written "*".
    self.days_restricted = fields[2] != "*"
    self.weekdays_restricted = fields[4] != "*"

  def __repr__(self):
    return f"CronExpr({self.text!r})"

  def day_matches(self, day):
    """Whether the expression fires on a date (its month and day fields)."""
    if day.month not in self.months:
      return False
    in_days = day.day in self.days
    in_weekdays = day.isoweekday() % 7 in self.weekdays
    return in_days and in_weekdays

  def matches(self, moment):
    """Whether the expression fires at a (naive) datetime's minute."""
    return (moment.minute in self.minutes and moment.hour in self.hours
            and self.day_matches(date(moment.year, moment.month, moment.day)))


def parse(text):
  """A cron expression's text -> CronExpr (CronError when it is malformed)."""
  return CronExpr(text)


def as_expr(expr):
  return expr if isinstance(expr, CronExpr) else parse(expr)


def matches(expr, moment):
  """Whether `expr` (text or CronExpr) fires at the minute of the naive datetime `moment`."""
  if not isinstance(moment, datetime):
    raise TypeError("matches() takes a datetime")
  if moment.tzinfo is not None:
    raise ValueError("cronex works on naive datetimes only")
  return as_expr(expr).matches(moment)
