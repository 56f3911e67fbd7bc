"""Integers as canonical Roman numerals and back (README.md)."""

from numwords.errors import RomanError

_DIGITS = [
    ["", "M", "MM", "MMM"],
    ["", "C", "CC", "CCC", "CD", "D", "DC", "DCC", "DCCC", "CM"],
    ["", "X", "XX", "XXX", "XL", "L", "LX", "LXX", "LXXX", "XC"],
    ["", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX"],
]
_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def to_roman(n):
  """The canonical numeral of the int 1 <= n <= 3999."""
  if isinstance(n, bool) or not isinstance(n, int):
    raise TypeError("to_roman() takes an int")
  if not 1 <= n <= 3999:
    raise RomanError("%d has no numeral" % n)
  return "".join(_DIGITS[k][n // 10 ** (3 - k) % 10] for k in range(4))


def from_roman(text):
  """The value of a numeral."""
  if not isinstance(text, str):
    raise TypeError("from_roman() takes a str")
  if not text or any(ch not in _VALUES for ch in text):
    raise RomanError("not a numeral: %r" % text)
  total = 0
  for i, ch in enumerate(text):
    value = _VALUES[ch]
    if i + 1 < len(text) and value < _VALUES[text[i + 1]]:
      total -= value
    else:
      total += value
  return total
