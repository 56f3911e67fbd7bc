"""Plain-text invoices."""

from inventory.pricing import apply_discount, line_total, subtotal, total_price


def format_money(amount, symbol="$"):
  """1234.5 -> '$1,234.50' (negative amounts as '-$1.00')."""
  sign = "-" if amount < 0 else ""
  return f"{sign}{symbol}{abs(amount):,.2f}"


def invoice_lines(items, discount=0.0, tax_rate=0.0):
  """The lines of an invoice for `items` (Item records)."""
  out = [f"{it.sku} {it.name} {it.qty} x {format_money(it.unit_price)} = "
         f"{format_money(line_total(it.unit_price, it.qty))}" for it in items]
  gross = subtotal(items)
  out.append(f"Subtotal {format_money(gross)}")
  net = apply_discount(gross, discount)
  if discount:
    out.append(f"Discount {format_money(net - gross)}")
  total = total_price(items, discount, tax_rate)
  if tax_rate:
    out.append(f"Tax {format_money(total - net)}")
  out.append(f"Total {format_money(total)}")
  return out
