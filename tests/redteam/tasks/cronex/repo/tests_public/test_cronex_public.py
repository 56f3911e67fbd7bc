from datetime import datetime

import pytest

from cronex import CronError, matches, next_fire, parse


def test_parse_fields():
  expr = parse("*/15 9-17 * * MON-FRI")
  assert expr.minutes == frozenset({0, 15, 30, 45})
  assert expr.hours == frozenset(range(9, 18))
  assert expr.weekdays == frozenset({1, 2, 3, 4, 5})


def test_next_fire_weekdays():
  assert next_fire("*/15 9-17 * * MON-FRI", datetime(2024, 3, 1, 17, 50)) == datetime(2024, 3, 4, 9, 0)


def test_next_fire_is_strictly_after():
  assert next_fire("30 * * * *", datetime(2024, 1, 1, 10, 30)) == datetime(2024, 1, 1, 11, 30)


def test_matches():
  assert matches("0 12 * * SUN", datetime(2024, 3, 3, 12, 0))
  assert not matches("0 12 * * SUN", datetime(2024, 3, 4, 12, 0))


def test_bad_expressions():
  with pytest.raises(CronError):
    parse("* * * *")
  with pytest.raises(CronError):
    parse("60 * * * *")
