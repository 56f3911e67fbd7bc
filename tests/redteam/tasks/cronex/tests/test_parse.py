import random

import pytest

from cronex import CronError, CronExpr, parse, parse_field

ALL_MINUTES = frozenset(range(60))
ALL_HOURS = frozenset(range(24))
ALL_DAYS = frozenset(range(1, 32))
ALL_MONTHS = frozenset(range(1, 13))
ALL_WEEKDAYS = frozenset(range(7))

# text -> (minutes, hours, days, months, weekdays)
EXPRESSIONS = [
    ("* * * * *", (ALL_MINUTES, ALL_HOURS, ALL_DAYS, ALL_MONTHS, ALL_WEEKDAYS)),
    ("*/15 * * * *", ({0, 15, 30, 45}, ALL_HOURS, ALL_DAYS, ALL_MONTHS, ALL_WEEKDAYS)),
    ("*/20 */6 * * *", ({0, 20, 40}, {0, 6, 12, 18}, ALL_DAYS, ALL_MONTHS, ALL_WEEKDAYS)),
    ("0-30/15 8-20/4 * * *", ({0, 15, 30}, {8, 12, 16, 20}, ALL_DAYS, ALL_MONTHS, ALL_WEEKDAYS)),
    ("1-10/3 * * * *", ({1, 4, 7, 10}, ALL_HOURS, ALL_DAYS, ALL_MONTHS, ALL_WEEKDAYS)),
    ("7-59/10 3-23/5 * * *", ({7, 17, 27, 37, 47, 57}, {3, 8, 13, 18, 23}, ALL_DAYS, ALL_MONTHS, ALL_WEEKDAYS)),
    ("0 0 */2 * *", ({0}, {0}, set(range(1, 32, 2)), ALL_MONTHS, ALL_WEEKDAYS)),
    ("0 0 */10 */3 *", ({0}, {0}, {1, 11, 21, 31}, {1, 4, 7, 10}, ALL_WEEKDAYS)),
    ("0 0 2-20/6 2-12/5 *", ({0}, {0}, {2, 8, 14, 20}, {2, 7, 12}, ALL_WEEKDAYS)),
    ("5 4 * * MON-FRI", ({5}, {4}, ALL_DAYS, ALL_MONTHS, {1, 2, 3, 4, 5})),
    ("5 4 * * sun,Sat", ({5}, {4}, ALL_DAYS, ALL_MONTHS, {0, 6})),
    ("5 4 * * 7", ({5}, {4}, ALL_DAYS, ALL_MONTHS, {0})),
    ("5 4 * * 5-7", ({5}, {4}, ALL_DAYS, ALL_MONTHS, {5, 6, 0})),
    ("5 4 * * */2", ({5}, {4}, ALL_DAYS, ALL_MONTHS, {0, 2, 4, 6})),
    ("5 4 * * 1-7/3", ({5}, {4}, ALL_DAYS, ALL_MONTHS, {1, 4, 0})),
    ("0 12 1 jan,Mar-MAY *", ({0}, {12}, {1}, {1, 3, 4, 5}, ALL_WEEKDAYS)),
    ("0 12 1 FEB-aug/2 *", ({0}, {12}, {1}, {2, 4, 6, 8}, ALL_WEEKDAYS)),
    ("0,30 0-2,22-23 1,15,31 * *", ({0, 30}, {0, 1, 2, 22, 23}, {1, 15, 31}, ALL_MONTHS, ALL_WEEKDAYS)),
    ("59 23 31 12 6", ({59}, {23}, {31}, {12}, {6})),
    ("  0   0 \t 1 1  0 ", ({0}, {0}, {1}, {1}, {0})),
    ("00 07 09 01 00", ({0}, {7}, {9}, {1}, {0})),
]


@pytest.mark.parametrize("text, fields", EXPRESSIONS, ids=["expr%d" % i for i in range(len(EXPRESSIONS))])
def test_parse_expression(text, fields):
  expr = parse(text)
  assert isinstance(expr, CronExpr)
  got = (expr.minutes, expr.hours, expr.days, expr.months, expr.weekdays)
  assert got == tuple(frozenset(f) for f in fields), text
  assert all(isinstance(f, frozenset) for f in got)


BAD = ["", "* * * *", "* * * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * 32 * *", "* * * 0 *",
       "* * * 13 *", "* * * * 8", "5-1 * * * *", "*/0 * * * *", "1-5/0 * * * *", "a * * * *", "1,,2 * * * *",
       ", * * * *", "* * * JANUARY *", "* * * * MONDAY", "-1 * * * *", "1- * * * *", "-5 * * * *", "*/ * * * *",
       "*/x * * * *", "1/2/3 * * * *", "* * * * SUN-", "\u0661 * * * *", "* * * * MON-SUN/x", "*/-1 * * * *",
       "* * * DEC-JAN *", "** * * * *"]


@pytest.mark.parametrize("text", BAD, ids=["bad%d" % i for i in range(len(BAD))])
def test_bad_expressions(text):
  with pytest.raises(CronError):
    parse(text)


def test_cron_error_is_a_value_error():
  assert issubclass(CronError, ValueError)


# -- seeded fields against a slow reference --------------------------------------------------


def reference_field(text, lo, hi):
  """The values a numeric field names, item by item, counting each step from the item's start."""
  out = set()
  for item in text.split(","):
    base, step = (item.split("/") + ["1"])[:2]
    step = int(step)
    if base == "*":
      first, last = lo, hi
    elif "-" in base:
      first, last = (int(x) for x in base.split("-"))
    else:
      first, last = int(base), int(base)
    value = first
    while value <= last:
      out.add(value)
      value += step
  return out


def random_item(rng, lo, hi):
  form = rng.randrange(5)
  if form == 0:
    return str(rng.randint(lo, hi))
  a = rng.randint(lo, hi)
  b = rng.randint(a, min(hi, a + 20))
  if form == 1:
    return "%d-%d" % (a, b)
  if form == 2:
    return "*/%d" % rng.randint(2, 12)
  return "%d-%d/%d" % (a, b, rng.randint(2, 12))


@pytest.mark.parametrize("bounds", [(0, 59), (0, 23), (1, 31), (1, 12)], ids=["minute", "hour", "day", "month"])
def test_random_fields(bounds):
  lo, hi = bounds
  rng = random.Random(hi)
  for _ in range(400):
    text = ",".join(random_item(rng, lo, hi) for _ in range(rng.randint(1, 3)))
    assert parse_field(text, lo, hi) == reference_field(text, lo, hi), text
