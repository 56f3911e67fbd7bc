"""Compound interest."""


def compound(principal, rate, periods):
  """`principal` after `periods` periods of interest at `rate` per period, rounded to cents."""
  if periods < 0:
    raise ValueError(f"negative number of periods: {periods}")
  if rate < 0:
    raise ValueError(f"negative interest rate: {rate}")
  amount = principal
  for _ in range(periods):
    amount = amount * (1 + rate)
  return round(amount, 2)
