"""Order totals: line totals, discounts and sales tax.

An order is a list of lines, each an `Item` or a `(unit_price, quantity)` pair. The
discount is a rate in [0, 1] taken off the subtotal; sales tax is charged on the discounted
subtotal. Amounts are rounded to cents, half up, at each step.
"""

from inventory.models import Item
from inventory.util import round_money


def _price_and_qty(line):
  if isinstance(line, Item):
    return line.unit_price, line.qty
  unit_price, qty = line
  return unit_price, qty


def line_total(unit_price, qty):
  """Price of `qty` units."""
  if qty < 0:
    raise ValueError(f"negative quantity: {qty}")
  return round_money(unit_price * qty)


def subtotal(lines):
  """Sum of the line totals of an order."""
  return round_money(sum(line_total(*_price_and_qty(line)) for line in lines))


def apply_discount(amount, rate):
  """`amount` less a discount of `rate` (0.1 is 10%)."""
  if not 0 <= rate <= 1:
    raise ValueError(f"discount rate out of range: {rate}")
  return round_money(amount * (1 - rate))


def sales_tax(amount, tax_rate):
  """Sales tax on `amount` at `tax_rate` (0.08 is 8%)."""
  if tax_rate < 0:
    raise ValueError(f"negative tax rate: {tax_rate}")
  return round_money(amount * tax_rate)


def total_price(lines, discount=0.0, tax_rate=0.0):
  """What the customer pays: the discounted subtotal plus sales tax."""
  gross = subtotal(lines)
  net = apply_discount(gross, discount)
  tax = sales_tax(gross, tax_rate)
  return round_money(net + tax)
