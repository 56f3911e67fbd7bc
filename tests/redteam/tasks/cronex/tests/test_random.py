import random
from datetime import date, datetime, timedelta

import pytest

from cronex import CronError, days_in_month, iter_fires, next_fire

MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
WEEKDAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]


# -- a slow reference ------------------------------------------------------------------------


def reference_value(text, names):
  return names.index(text.lower()) + (1 if names is MONTHS else 0) if text.lower() in names else int(text)


def reference_field(text, lo, hi, names=()):
  """The values a field names, item by item, counting each step from the item's start."""
  out = set()
  for item in text.split(","):
    base, step = (item.split("/") + ["1"])[:2]
    step = int(step)
    if base == "*":
      first, last = lo, hi
    elif "-" in base:
      first, last = (reference_value(x, names) for x in base.split("-"))
    else:
      first = last = reference_value(base, names)
    value = first
    while value <= last:
      out.add(value)
      value += step
  return out


def reference_fields(text):
  minute, hour, dom, month, dow = text.split()
  return {"minutes": reference_field(minute, 0, 59), "hours": reference_field(hour, 0, 23),
          "days": reference_field(dom, 1, 31), "months": reference_field(month, 1, 12, MONTHS),
          "weekdays": {v % 7 for v in reference_field(dow, 0, 7, WEEKDAYS)},
          "dom_star": dom == "*", "dow_star": dow == "*"}


def reference_day(fields, day):
  if day.month not in fields["months"]:
    return False
  in_dom = day.day in fields["days"]
  in_dow = (day.weekday() + 1) % 7 in fields["weekdays"]
  if fields["dom_star"] or fields["dow_star"]:
    return in_dom and in_dow
  return in_dom or in_dow


def reference_next(fields, after):
  """Day by day from `after` (the datetime module's own calendar), then minute by minute."""
  start = after.replace(second=0, microsecond=0) + timedelta(minutes=1)
  day = start.date()
  while day.year <= start.year + 8:
    if reference_day(fields, day):
      moment = datetime.combine(day, start.time()) if day == start.date() else datetime.combine(day, datetime.min.time())
      while moment.date() == day:
        if moment.hour in fields["hours"] and moment.minute in fields["minutes"]:
          return moment
        moment += timedelta(minutes=1)
    day += timedelta(days=1)
  return None


# -- seeded expressions ----------------------------------------------------------------------


def numeric_item(rng, lo, hi, width):
  form = rng.randrange(4)
  a = rng.randint(lo, hi)
  b = min(hi, a + rng.randint(0, width))
  if form == 0:
    return str(a)
  if form == 1:
    return "%d-%d" % (a, b)
  if form == 2:
    return "*/%d" % rng.randint(2, 12)
  return "%d-%d/%d" % (a, b, rng.randint(2, 12))


def random_expression(rng):
  minute = "*" if rng.random() < 0.1 else ",".join(numeric_item(rng, 0, 59, 30) for _ in range(rng.randint(1, 3)))
  hour = "*" if rng.random() < 0.2 else ",".join(numeric_item(rng, 0, 23, 12) for _ in range(rng.randint(1, 3)))
  dom = "*" if rng.random() < 0.5 else ",".join(numeric_item(rng, 1, 31, 8) for _ in range(rng.randint(1, 3)))
  if rng.random() < 0.6:
    month = "*"
  else:
    items = []
    for _ in range(rng.randint(1, 2)):
      a = rng.randint(1, 12)
      b = min(12, a + rng.randint(0, 4))
      items.append(rng.choice([MONTHS[a - 1], str(a), "%s-%s" % (MONTHS[a - 1], MONTHS[b - 1]), "%d-%d" % (a, b)]))
    month = ",".join(items)
  if rng.random() < 0.5:
    dow = "*"
  else:
    items = []
    for _ in range(rng.randint(1, 2)):
      a = rng.randint(0, 7)
      b = min(7, a + rng.randint(0, 2))
      name = WEEKDAYS[a % 7]
      items.append(rng.choice([str(a), name.upper(), "%d-%d" % (a, b), "*/%d" % rng.randint(2, 3)]))
    dow = ",".join(items)
  return " ".join([minute, hour, dom, month, dow])


def random_start(rng):
  first = datetime(1995, 1, 1)
  return first + timedelta(minutes=rng.randrange(111 * 365 * 24 * 60))


@pytest.mark.parametrize("seed", range(6))
def test_random_expressions(seed):
  rng = random.Random(2024 + seed)
  for _ in range(120):
    text = random_expression(rng)
    after = random_start(rng)
    fields = reference_fields(text)
    want, moment = [], after
    for _ in range(3):
      moment = reference_next(fields, moment)
      if moment is None:
        break
      want.append(moment)
    if len(want) == 3:
      assert list(iter_fires(text, after, 3)) == want, (text, after)
    elif not want:
      with pytest.raises(CronError):
        next_fire(text, after)
    else:
      assert next_fire(text, after) == want[0], (text, after)


def test_february_every_year():
  for year in range(1995, 2106):
    leap = (date(year, 3, 1) - date(year, 2, 1)).days == 29
    assert days_in_month(year, 2) == (29 if leap else 28), year
    want = datetime(year, 2, 29) if leap else datetime(year + 1, 2, 1)
    assert next_fire("0 0 * 2 *", datetime(year, 2, 28, 0, 0)) == want, year


def test_month_lengths_every_year():
  for year in range(1995, 2106):
    for month in range(1, 13):
      following = date(year + month // 12, month % 12 + 1, 1)
      assert days_in_month(year, month) == (following - date(year, month, 1)).days, (year, month)
