from decimal import Decimal

import pytest

from invoicekit import Invoice, allocate, round_money


def test_round_decimal():
  assert round_money(Decimal("2.675"), "USD", "half_even") == Decimal("2.68")
  assert round_money("1234.5", "JPY", "half_up") == Decimal("1235")


def test_allocate_even_split():
  assert allocate(Decimal("100.00"), [1, 1, 1]) == [Decimal("33.34"), Decimal("33.33"), Decimal("33.33")]


def test_invoice_single_rate():
  inv = Invoice(currency="EUR")
  inv.add("consulting", 3, Decimal("99.99"), "0.19")
  assert inv.net_total() == Decimal("299.97")
  assert inv.tax_lines() == {Decimal("0.19"): Decimal("56.99")}
  assert inv.total() == Decimal("356.96")


def test_floats_are_refused():
  with pytest.raises(TypeError):
    round_money(0.1)
