import math
import random
from decimal import Decimal
from fractions import Fraction

import pytest

from invoicekit import Invoice, Line

DIGITS = {"USD": 2, "EUR": 2, "JPY": 0, "KWD": 3}


def check_amount(value, currency):
  assert isinstance(value, Decimal), value
  assert value.as_tuple().exponent == -DIGITS[currency], value


def test_readme_invoice():
  inv = Invoice(currency="EUR")
  inv.add("consulting", 3, Decimal("99.99"), "0.19")
  inv.add("book", 1, Fraction(100, 3), "0.07")
  assert inv.line_nets() == [Decimal("299.97"), Decimal("33.33")]
  assert inv.net_total() == Decimal("333.30")
  assert inv.tax_lines() == {Decimal("0.19"): Decimal("56.99"), Decimal("0.07"): Decimal("2.33")}
  assert inv.tax_total() == Decimal("59.32")
  assert inv.total() == Decimal("392.62")


def test_tax_is_rounded_once_per_rate():
  inv = Invoice(currency="USD")
  for _ in range(3):
    inv.add("pen", 1, Decimal("0.10"), "0.05")
  assert inv.line_nets() == [Decimal("0.10")] * 3
  assert inv.tax_lines() == {Decimal("0.05"): Decimal("0.02")}
  assert inv.total() == Decimal("0.32")


def test_rates_given_as_str_int_and_decimal_are_one_rate():
  inv = Invoice([Line("a", 1, "10.00", "0.19"), Line("b", 1, "0.05", Decimal("0.19")), Line("c", 2, "1.25", 0),
                 Line("d", 1, "3.10", Decimal("0"))])
  assert inv.tax_lines() == {Decimal("0.19"): Decimal("1.91"), Decimal("0"): Decimal("0.00")}
  assert inv.total() == Decimal("17.56")


def test_half_up_invoice():
  inv = Invoice(currency="USD", rounding="half_up")
  inv.add("a", Decimal("0.5"), Decimal("0.05"), "0.1")
  inv.add("b", 3, Fraction(1, 8), "0.1")
  assert inv.line_nets() == [Decimal("0.03"), Decimal("0.38")]
  assert inv.tax_lines() == {Decimal("0.1"): Decimal("0.04")}
  assert inv.total() == Decimal("0.45")


def test_fraction_prices_and_quantities():
  inv = Invoice(currency="USD", rounding="down")
  inv.add("a", 3, Fraction(29, 100), "0")
  inv.add("b", Fraction(1, 3), Decimal("0.57"), "0")
  assert inv.line_nets() == [Decimal("0.87"), Decimal("0.19")]


@pytest.mark.parametrize("currency", sorted(DIGITS))
def test_empty_invoice(currency):
  inv = Invoice(currency=currency)
  assert inv.line_nets() == [] and inv.tax_lines() == {}
  for value in (inv.net_total(), inv.tax_total(), inv.total()):
    assert value == 0
    check_amount(value, currency)


def test_yen_and_dinar_exponents():
  inv = Invoice(currency="JPY")
  inv.add("a", 3, "333.3", "0.1")
  assert inv.line_nets() == [Decimal("1000")] and inv.total() == Decimal("1100")
  check_amount(inv.total(), "JPY")
  inv = Invoice(currency="KWD")
  inv.add("a", 1, "1.2345", "0.05")
  assert inv.line_nets() == [Decimal("1.234")] and inv.tax_lines() == {Decimal("0.05"): Decimal("0.062")}
  check_amount(inv.total(), "KWD")


def test_bad_invoices():
  with pytest.raises(ValueError):
    Invoice(currency="XXX")
  with pytest.raises(ValueError):
    Invoice(rounding="nearest")
  with pytest.raises(ValueError):
    Line("a", 1, "1.00", "-0.1")
  with pytest.raises(TypeError):
    Invoice([Line("a", 1, 0.5, 0)]).line_nets()


# -- seeded invoices against a slow reference ------------------------------------------------


def reference_round(x, digits, mode):
  unit = Fraction(1, 10 ** digits)
  lower = math.floor(x / unit) * unit
  if lower == x:
    return x
  upper = lower + unit
  toward_zero, away = (lower, upper) if x > 0 else (upper, lower)
  pick = {"floor": lower, "ceiling": upper, "down": toward_zero, "up": away}.get(mode)
  if pick is not None:
    return pick
  if x - lower != upper - x:
    return lower if x - lower < upper - x else upper
  if mode == "half_up":
    return away
  if mode == "half_down":
    return toward_zero
  return lower if (lower / unit) % 2 == 0 else upper


def as_fraction(value):
  return value if isinstance(value, Fraction) else Fraction(Decimal(value) if isinstance(value, str) else value)


def text(x, digits):
  """The Decimal text of a multiple of 10**-digits."""
  units = int(x * 10 ** digits)
  whole, part = divmod(abs(units), 10 ** digits)
  return ("-" if units < 0 else "") + str(whole) + ("." + str(part).zfill(digits) if digits else "")


def reference_invoice(lines, digits, mode):
  """(nets, {rate: tax}, total) as Decimal texts; lines are (quantity, price, rate) triples."""
  nets = [reference_round(as_fraction(q) * as_fraction(p), digits, mode) for q, p, _ in lines]
  bases = {}
  for (_, _, rate), net in zip(lines, nets):
    key = as_fraction(rate)
    bases[key] = bases.get(key, 0) + net
  taxes = {rate: reference_round(rate * base, digits, mode) for rate, base in bases.items()}
  total = sum(nets) + sum(taxes.values())
  return ([text(n, digits) for n in nets], {str(Decimal(r.numerator) / Decimal(r.denominator)): text(t, digits)
                                            for r, t in taxes.items()}, text(total, digits))


RATES = [0, Decimal("0"), "0.05", Decimal("0.075"), Decimal("0.19"), "0.2", Decimal("0.07")]
QUANTITIES = [1, 2, 3, 5, 12, 20, Decimal("0.5"), "1.25", Fraction(1, 3), Fraction(5, 4)]


def random_price(rng):
  kind = rng.randrange(3)
  if kind == 0:
    return Decimal(rng.randint(1, 99999)).scaleb(-2)
  if kind == 1:
    return str(Decimal(rng.randint(1, 999999)).scaleb(-3))
  return Fraction(rng.randint(1, 99999), rng.choice([3, 7, 8, 40, 300]))


@pytest.mark.parametrize("seed", range(6))
def test_random_invoices(seed):
  rng = random.Random(7000 + seed)
  for _ in range(150):
    currency = rng.choice(sorted(DIGITS))
    mode = rng.choice(["half_even", "half_up", "half_down", "down", "up", "floor", "ceiling"])
    lines = [(rng.choice(QUANTITIES), random_price(rng), rng.choice(RATES)) for _ in range(rng.randint(0, 10))]
    inv = Invoice(currency=currency, rounding=mode)
    for i, (quantity, price, rate) in enumerate(lines):
      inv.add("item %d" % i, quantity, price, rate)
    nets, taxes, total = reference_invoice(lines, DIGITS[currency], mode)
    assert inv.line_nets() == [Decimal(n) for n in nets], lines
    tax_lines = inv.tax_lines()
    assert tax_lines == {Decimal(r): Decimal(t) for r, t in taxes.items()}, lines
    assert inv.net_total() == sum(Decimal(n) for n in nets), lines
    assert inv.total() == Decimal(total), lines
    for value in inv.line_nets() + list(tax_lines.values()) + [inv.net_total(), inv.tax_total(), inv.total()]:
      check_amount(value, currency)
