import itertools
from datetime import date, datetime, timedelta, timezone

import pytest

from cronex import CronError, days_in_month, iter_fires, matches, next_fire, parse

D = datetime

# (expression, after, the next fire time)
NEXT = [
    ("* * * * *", D(2024, 5, 17, 12, 30), D(2024, 5, 17, 12, 31)),
    ("* * * * *", D(2024, 5, 17, 12, 30, 45, 500), D(2024, 5, 17, 12, 31)),
    ("0 * * * *", D(2024, 5, 17, 10, 0, 59), D(2024, 5, 17, 11, 0)),
    ("30 9 * * *", D(2024, 5, 17, 9, 29, 59), D(2024, 5, 17, 9, 30)),
    ("30 9 * * *", D(2024, 5, 17, 9, 30, 0, 1), D(2024, 5, 18, 9, 30)),
    ("*/15 9-17 * * MON-FRI", D(2024, 3, 1, 17, 50), D(2024, 3, 4, 9, 0)),
    ("*/15 9-17 * * MON-FRI", D(2024, 3, 4, 9, 0), D(2024, 3, 4, 9, 15)),
    ("0 0 1 1 *", D(2023, 12, 31, 23, 59), D(2024, 1, 1, 0, 0)),
    ("0 0 31 * *", D(2024, 4, 15, 8, 0), D(2024, 5, 31, 0, 0)),
    ("59 23 31 12 *", D(2024, 12, 31, 23, 59), D(2025, 12, 31, 23, 59)),
    ("0 12 * * 7", D(2024, 3, 4, 0, 0), D(2024, 3, 10, 12, 0)),
    ("0 12 * * 0", D(2024, 3, 4, 0, 0), D(2024, 3, 10, 12, 0)),
    ("0 12 * * sat", D(2024, 3, 4, 0, 0), D(2024, 3, 9, 12, 0)),
    # Steps count from the start of their item.
    ("1-10/3 * * * *", D(2024, 6, 1, 8, 2), D(2024, 6, 1, 8, 4)),
    ("7-59/10 * * * *", D(2024, 6, 1, 8, 57), D(2024, 6, 1, 9, 7)),
    ("0 3-23/5 * * *", D(2024, 6, 1, 4, 0), D(2024, 6, 1, 8, 0)),
    ("0 0 */2 * *", D(2024, 1, 31, 12, 0), D(2024, 2, 1, 0, 0)),
    ("0 0 */2 * *", D(2024, 2, 1, 12, 0), D(2024, 2, 3, 0, 0)),
    ("0 0 1 */3 *", D(2024, 2, 10, 0, 0), D(2024, 4, 1, 0, 0)),
    ("0 0 1 2-12/5 *", D(2024, 2, 10, 0, 0), D(2024, 7, 1, 0, 0)),
    ("0 0 * * 1-7/3", D(2024, 3, 5, 0, 0), D(2024, 3, 7, 0, 0)),
    # Both day fields restricted: either one may match.
    ("0 0 1,15 * MON", D(2024, 1, 2, 0, 0), D(2024, 1, 8, 0, 0)),
    ("0 0 1,15 * MON", D(2024, 2, 13, 0, 0), D(2024, 2, 15, 0, 0)),
    ("0 0 13 * FRI", D(2024, 1, 1, 0, 0), D(2024, 1, 5, 0, 0)),
    ("0 0 13 * FRI", D(2024, 1, 12, 0, 0), D(2024, 1, 13, 0, 0)),
    ("0 6 31 * 3", D(2024, 5, 24, 0, 0), D(2024, 5, 29, 6, 0)),
    ("0 0 29 2 1", D(2023, 1, 31, 0, 0), D(2023, 2, 6, 0, 0)),
    ("0 0 */2 * SUN", D(2024, 3, 1, 1, 0), D(2024, 3, 3, 0, 0)),
    ("0 0 2-4 * 5", D(2024, 3, 5, 0, 0), D(2024, 3, 8, 0, 0)),
    # One of them "*": only the other restricts.
    ("0 0 13 * *", D(2024, 1, 1, 0, 0), D(2024, 1, 13, 0, 0)),
    ("0 0 * * FRI", D(2024, 1, 1, 0, 0), D(2024, 1, 5, 0, 0)),
    # The Gregorian calendar.
    ("0 0 29 2 *", D(2024, 3, 1, 0, 0), D(2028, 2, 29, 0, 0)),
    ("0 0 29 2 *", D(2096, 3, 1, 0, 0), D(2104, 2, 29, 0, 0)),
    ("0 0 28-29 2 *", D(2100, 2, 28, 0, 0), D(2101, 2, 28, 0, 0)),
    ("30 23 * * *", D(2100, 2, 28, 23, 45), D(2100, 3, 1, 23, 30)),
    ("0 12 * 2 *", D(2100, 2, 28, 12, 0), D(2101, 2, 1, 12, 0)),
    ("0 0 31 * *", D(2100, 1, 31, 0, 0), D(2100, 3, 31, 0, 0)),
    ("0 0 * * *", D(2096, 2, 28, 6, 0), D(2096, 2, 29, 0, 0)),
]


@pytest.mark.parametrize("text, after, expected", NEXT, ids=["next%d" % i for i in range(len(NEXT))])
def test_next_fire(text, after, expected):
  got = next_fire(text, after)
  assert got == expected, (text, after)
  assert isinstance(got, datetime) and got.tzinfo is None
  assert got.second == 0 and got.microsecond == 0
  assert next_fire(parse(text), after) == expected


@pytest.mark.parametrize("text", ["0 0 30 2 *", "0 0 31 2 *", "0 0 31 4,6,9,11 *", "* * 30-31 feb *"])
def test_never_fires(text):
  with pytest.raises(CronError):
    next_fire(text, D(2024, 1, 1))


def test_aware_and_non_datetimes():
  with pytest.raises(ValueError):
    next_fire("* * * * *", D(2024, 1, 1, tzinfo=timezone.utc))
  with pytest.raises(TypeError):
    next_fire("* * * * *", date(2024, 1, 1))
  with pytest.raises(ValueError):
    matches("* * * * *", D(2024, 1, 1, tzinfo=timezone(timedelta(hours=2))))


def test_iter_fires():
  assert list(iter_fires("0 0 29 2 *", D(2024, 3, 1), 3)) == [D(2028, 2, 29), D(2032, 2, 29), D(2036, 2, 29)]
  assert list(iter_fires("*/20 * * * *", D(2024, 12, 31, 23, 30), 4)) == [
      D(2024, 12, 31, 23, 40), D(2025, 1, 1, 0, 0), D(2025, 1, 1, 0, 20), D(2025, 1, 1, 0, 40)]
  endless = iter_fires("0 0 1,15 * MON", D(2024, 4, 1))
  assert list(itertools.islice(endless, 5)) == [D(2024, 4, 8), D(2024, 4, 15), D(2024, 4, 22), D(2024, 4, 29),
                                                D(2024, 5, 1)]
  assert list(iter_fires("0 0 1 1 *", D(2024, 1, 1), 0)) == []


MATCHES = [
    ("0 12 * * SUN", D(2024, 3, 3, 12, 0), True),
    ("0 12 * * SUN", D(2024, 3, 4, 12, 0), False),
    ("0 12 * * SUN", D(2024, 3, 3, 12, 0, 59), True),
    ("*/15 * * * *", D(2024, 3, 3, 7, 45), True),
    ("*/15 * * * *", D(2024, 3, 3, 7, 46), False),
    ("0 0 1 * *", D(2024, 3, 1, 0, 0), True),
    ("0 0 1 * *", D(2024, 3, 2, 0, 0), False),
    ("0 0 * 2 *", D(2100, 2, 28, 0, 0), True),
    ("0 0 */2 * *", D(2024, 3, 3, 0, 0), True),
    ("0 0 */2 * *", D(2024, 3, 4, 0, 0), False),
    ("0 0 * * 1-5", D(2024, 3, 9, 0, 0), False),
]


@pytest.mark.parametrize("text, moment, expected", MATCHES, ids=["match%d" % i for i in range(len(MATCHES))])
def test_matches(text, moment, expected):
  assert matches(text, moment) is expected


DAYS = [((2024, 1), 31), ((2024, 2), 29), ((2023, 2), 28), ((2024, 4), 30), ((2096, 2), 29), ((2100, 2), 28),
        ((2104, 2), 29), ((2101, 2), 28), ((2100, 12), 31), ((2100, 11), 30)]


@pytest.mark.parametrize("year_month, expected", DAYS, ids=["days%d" % i for i in range(len(DAYS))])
def test_days_in_month(year_month, expected):
  assert days_in_month(*year_month) == expected
