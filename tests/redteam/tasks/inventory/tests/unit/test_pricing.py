import pytest

from inventory.models import Item
from inventory.pricing import apply_discount, line_total, subtotal, total_price


def test_line_total():
  assert line_total(2.5, 4) == 10.0


def test_subtotal_mixed_lines():
  assert subtotal([(2.5, 4), Item("B2", "Bolt", 1.25, 2)]) == 12.5


def test_discount_only():
  assert total_price([(10.0, 3)], 0.1) == 27.0


def test_tax_on_discounted_subtotal():
  assert total_price([(10.0, 3)], 0.1, tax_rate=0.2) == 32.4


def test_half_off_then_tax():
  assert total_price([(100.0, 1)], 0.5, 0.1) == 55.0


def test_rounding_half_up():
  assert total_price([(4.0, 5), (2.5, 2)], 0.25, 0.1) == 20.63


def test_tax_without_discount():
  assert total_price([(19.99, 2)], tax_rate=0.08) == 43.18


def test_bad_discount():
  with pytest.raises(ValueError):
    apply_discount(10.0, 1.5)
