"""Splitting an amount of money into parts that add up to it exactly."""

from decimal import Decimal
from fractions import Fraction

from invoicekit.money import places, quantum, to_decimal


def _weight(value):
  if isinstance(value, (bool, float)):
    raise TypeError(f"weights are not {type(value).__name__}s")
  if isinstance(value, Fraction):
    weight = value
  else:
    weight = Fraction(to_decimal(value))
  if weight < 0:
    raise ValueError(f"negative weight: {value!r}")
  return weight


def allocate(total, weights, currency="USD"):
  """Split `total` (a whole number of `currency`'s minor units) into len(weights) parts in
  proportion to `weights`, as Decimals with the minor unit's exponent that add up to `total`."""
  amount = to_decimal(total)
  scaled = amount.scaleb(places(currency))
  if scaled != scaled.to_integral_value():
    raise ValueError(f"{total!r} is not a whole number of {currency} minor units")
  units = int(scaled)
  ws = [_weight(w) for w in weights]
  if not ws:
    raise ValueError("no weights")
  weight_sum = sum(ws)
  if weight_sum == 0:
    raise ValueError("the weights add up to zero")
  parts = [units * w // weight_sum for w in ws]
  for i in range(units - sum(parts)):
    parts[i] += 1
  q = quantum(currency)
  return [Decimal(p) * q for p in parts]
