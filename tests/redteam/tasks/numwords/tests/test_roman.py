import random

import pytest

from numwords import RomanError, from_roman, to_roman

# (n, numeral)
NUMERALS = [
    (1, "I"), (2, "II"), (3, "III"), (4, "IV"), (5, "V"), (6, "VI"), (8, "VIII"), (9, "IX"), (10, "X"),
    (14, "XIV"), (19, "XIX"), (40, "XL"), (44, "XLIV"), (49, "XLIX"), (90, "XC"), (99, "XCIX"), (400, "CD"),
    (444, "CDXLIV"), (500, "D"), (900, "CM"), (999, "CMXCIX"), (1000, "M"), (1666, "MDCLXVI"), (1994, "MCMXCIV"),
    (2024, "MMXXIV"), (3000, "MMM"), (3888, "MMMDCCCLXXXVIII"), (3999, "MMMCMXCIX"),
]

NOT_CANONICAL = [
    "", "IIII", "VV", "XXXX", "LL", "DD", "CCCC", "MMMM", "IIV", "IIX", "VX", "VL", "LC", "DM", "XIIII",
    "IXI", "IVI", "XCX", "CMC", "MCMC", "CDC", "XLX", "IXX", "XXL", "CCD", "VIV", "IXIV", "XCXC", "MMMMCM",
    "DCD", "LXL", "VIIII", "CCM", "XXC", "ABC", "X1", "I I", "IV-", "MMXXIV.",
]


@pytest.mark.parametrize("n, numeral", NUMERALS)
def test_numeral_table(n, numeral):
  assert to_roman(n) == numeral
  assert from_roman(numeral) == n


@pytest.mark.parametrize("text", NOT_CANONICAL)
def test_not_canonical(text):
  with pytest.raises(RomanError):
    from_roman(text)


@pytest.mark.parametrize("n", [0, -1, -3999, 4000, 10 ** 9])
def test_out_of_range(n):
  with pytest.raises(RomanError):
    to_roman(n)
  assert issubclass(RomanError, ValueError)


@pytest.mark.parametrize("bad", [1.0, "1", None, [1]])
def test_to_roman_not_an_int(bad):
  with pytest.raises(TypeError):
    to_roman(bad)


@pytest.mark.parametrize("bad", [None, 5, b"IV", ["I"]])
def test_from_roman_not_a_str(bad):
  with pytest.raises(TypeError):
    from_roman(bad)


PAIRS = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"),
         (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


def reference_roman(n):
  """Greedy: take the largest value that fits, again and again."""
  out = ""
  for value, letters in PAIRS:
    while n >= value:
      out += letters
      n -= value
  return out


CANONICAL = {reference_roman(n): n for n in range(1, 4000)}


def test_every_number():
  for n in range(1, 4000):
    numeral = reference_roman(n)
    assert to_roman(n) == numeral
    assert from_roman(numeral) == n


def test_random_mutations():
  gen = random.Random(1999)
  rejected = 0
  for _ in range(5000):
    letters = list(reference_roman(gen.randint(1, 3999)))
    for _ in range(gen.randint(1, 2)):
      i = gen.randrange(len(letters))
      if gen.random() < 0.5 or len(letters) == 1:
        letters.insert(i, letters[i])
      else:
        del letters[i]
    text = "".join(letters)
    if text in CANONICAL:
      assert from_roman(text) == CANONICAL[text], text
    else:
      rejected += 1
      with pytest.raises(RomanError):
        from_roman(text)
  assert rejected > 2000
