import pytest

from csvtool.stats import format_line, parse_amount, summarize


def test_parse_amount():
  assert parse_amount("$1,200.50") == 1200.5
  assert parse_amount("") == 0.0


def test_summarize_values():
  rows, total, mean = summarize([2.5, 4.0, 6.0])
  assert (rows, total) == (3, 12.5)
  assert mean == pytest.approx(4.16667, rel=1e-4)


def test_format_line():
  assert format_line(3, 12.5, 12.5 / 3) == "rows=3 total=12.5 mean=4.1667"
