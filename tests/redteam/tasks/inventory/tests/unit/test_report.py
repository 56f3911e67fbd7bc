from inventory.models import Item
from inventory.report import format_money, invoice_lines


def test_format_money():
  assert format_money(1234.5) == "$1,234.50"


def test_invoice_with_discount():
  assert invoice_lines([Item("A1", "Widget", 2.5, 4)], discount=0.1) == [
      "A1 Widget 4 x $2.50 = $10.00", "Subtotal $10.00", "Discount -$1.00", "Total $9.00"]
