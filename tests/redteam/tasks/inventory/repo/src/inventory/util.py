"""Money helpers."""

from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def round_money(amount):
  """`amount` rounded to cents, half up (2.675 -> 2.68), as a float."""
  return float(Decimal(repr(float(amount))).quantize(CENT, rounding=ROUND_HALF_UP))


def parse_price(text):
  """'$1,200.50' -> 1200.5."""
  cleaned = str(text).strip().replace(",", "").replace("$", "")
  if not cleaned:
    raise ValueError("empty price")
  return float(cleaned)
