"""Money amounts as decimal.Decimal, rounded to a currency's minor unit."""

import decimal
from decimal import Decimal
from fractions import Fraction

# Digits after the point of each currency's minor unit (ISO 4217).
CURRENCY_PLACES = {"USD": 2, "EUR": 2, "GBP": 2, "CHF": 2, "JPY": 0, "KRW": 0, "KWD": 3, "BHD": 3, "CLF": 4}

ROUNDING_MODES = {
    "half_even": decimal.ROUND_HALF_EVEN,
    "half_up": decimal.ROUND_HALF_UP,
    "half_down": decimal.ROUND_HALF_DOWN,
    "up": decimal.ROUND_UP,
    "down": decimal.ROUND_DOWN,
    "ceiling": decimal.ROUND_CEILING,
    "floor": decimal.ROUND_FLOOR,
}


def places(currency):
  """Digits after the point of `currency`'s minor unit (ValueError for an unknown code)."""
  try:
    return CURRENCY_PLACES[currency]
  except (KeyError, TypeError):
    raise ValueError(f"unknown currency: {currency!r}") from None


def quantum(currency):
  """The minor unit of `currency` as a Decimal: Decimal('0.01') for USD, Decimal('1') for JPY."""
  return Decimal(1).scaleb(-places(currency))


def to_decimal(value):
  """An amount as a Decimal: ints, strs, Decimals and Fractions are accepted, floats (and bools)
  are refused with TypeError, a str that is not a finite number with ValueError."""
  if isinstance(value, bool) or isinstance(value, float):
    raise TypeError(f"amounts are not {type(value).__name__}s")
  if isinstance(value, Decimal):
    if not value.is_finite():
      raise ValueError(f"not a finite amount: {value!r}")
    return value
  if isinstance(value, int):
    return Decimal(value)
  if isinstance(value, str):
    try:
      result = Decimal(value.strip())
    except decimal.InvalidOperation:
      raise ValueError(f"not an amount: {value!r}") from None
    if not result.is_finite():
      raise ValueError(f"not a finite amount: {value!r}")
    return result
  if isinstance(value, Fraction):
    return Decimal(float(value))
  raise TypeError(f"not an amount: {value!r}")


def rounding_mode(name):
  try:
    return ROUNDING_MODES[name]
  except (KeyError, TypeError):
    raise ValueError(f"unknown rounding mode: {name!r}") from None


def round_money(value, currency="USD", rounding="half_even"):
  """`value` rounded to the minor unit of `currency` with the named rounding mode, as a Decimal
  whose exponent is exactly that of the minor unit."""
  mode = rounding_mode(rounding)
  return to_decimal(value).quantize(quantum(currency), rounding=mode)
