"""Invoices: lines of quantity x unit price, net amounts, tax lines and totals."""

from invoicekit.money import places, round_money, rounding_mode, to_decimal


class Line:
  """One line of an invoice. quantity and unit_price: int, str, Decimal or Fraction;
  tax_rate: int, str or Decimal (0.19 for 19%)."""

  def __init__(self, description, quantity, unit_price, tax_rate=0):
    self.description = description
    self.quantity = quantity
    self.unit_price = unit_price
    self.tax_rate = to_decimal(tax_rate)
    if self.tax_rate < 0:
      raise ValueError(f"negative tax rate: {tax_rate!r}")

  def __repr__(self):
    return f"Line({self.description!r}, {self.quantity!r}, {self.unit_price!r}, {self.tax_rate!r})"


class Invoice:
  """Lines in one currency, rounded with one rounding mode."""

  def __init__(self, lines=(), currency="USD", rounding="half_even"):
    places(currency)
    rounding_mode(rounding)
    self.currency = currency
    self.rounding = rounding
    self.lines = list(lines)

  def add(self, description, quantity, unit_price, tax_rate=0):
    line = Line(description, quantity, unit_price, tax_rate)
    self.lines.append(line)
    return line

  def _round(self, value):
    return round_money(value, self.currency, self.rounding)

  def line_nets(self):
    """Each line's net amount: quantity x unit price, rounded to the minor unit."""
    return [self._round(to_decimal(line.quantity) * to_decimal(line.unit_price)) for line in self.lines]

  def net_total(self):
    return sum(self.line_nets())

  def tax_lines(self):
    """{tax rate: tax amount} for every rate on the invoice."""
    out = {}
    for line, net in zip(self.lines, self.line_nets()):
      out[line.tax_rate] = out.get(line.tax_rate, 0) + self._round(net * line.tax_rate)
    return out

  def tax_total(self):
    return sum(self.tax_lines().values())

  def total(self):
    return self.net_total() + self.tax_total()
