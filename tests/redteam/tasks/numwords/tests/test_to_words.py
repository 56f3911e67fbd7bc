import random

import pytest

from numwords import WordsError, to_words

# (n, words)
WORDS = [
    (0, "zero"),
    (1, "one"),
    (9, "nine"),
    (10, "ten"),
    (11, "eleven"),
    (15, "fifteen"),
    (19, "nineteen"),
    (20, "twenty"),
    (21, "twenty-one"),
    (42, "forty-two"),
    (99, "ninety-nine"),
    (100, "one hundred"),
    (101, "one hundred one"),
    (110, "one hundred ten"),
    (115, "one hundred fifteen"),
    (120, "one hundred twenty"),
    (999, "nine hundred ninety-nine"),
    (1000, "one thousand"),
    (1001, "one thousand one"),
    (1010, "one thousand ten"),
    (1100, "one thousand one hundred"),
    (2024, "two thousand twenty-four"),
    (12345, "twelve thousand three hundred forty-five"),
    (100000, "one hundred thousand"),
    (1000000, "one million"),
    (1000001, "one million one"),
    (1001000, "one million one thousand"),
    (1234567, "one million two hundred thirty-four thousand five hundred sixty-seven"),
    (1000000000, "one billion"),
    (2000000005, "two billion five"),
    (10 ** 12, "one trillion"),
    (10 ** 15 + 7, "one quadrillion seven"),
    (10 ** 18, "one quintillion"),
    (10 ** 21, "one sextillion"),
    (10 ** 24, "one septillion"),
    (10 ** 27, "one octillion"),
    (10 ** 30, "one nonillion"),
    (10 ** 33, "one decillion"),
    (10 ** 33 + 10 ** 3, "one decillion one thousand"),
    (999 * 10 ** 33, "nine hundred ninety-nine decillion"),
    (-1, "minus one"),
    (-40, "minus forty"),
    (-1000005, "minus one million five"),
    (-10 ** 35, "minus one hundred decillion"),
    (10 ** 36 - 1, "nine hundred ninety-nine decillion nine hundred ninety-nine nonillion nine hundred ninety-nine "
     "octillion nine hundred ninety-nine septillion nine hundred ninety-nine sextillion nine hundred ninety-nine "
     "quintillion nine hundred ninety-nine quadrillion nine hundred ninety-nine trillion nine hundred ninety-nine "
     "billion nine hundred ninety-nine million nine hundred ninety-nine thousand nine hundred ninety-nine"),
]


@pytest.mark.parametrize("n, words", WORDS)
def test_words_table(n, words):
  assert to_words(n) == words


@pytest.mark.parametrize("n", [10 ** 36, -10 ** 36, 10 ** 40, -(10 ** 36) - 5])
def test_out_of_range(n):
  with pytest.raises(WordsError):
    to_words(n)
  assert issubclass(WordsError, ValueError)


@pytest.mark.parametrize("bad", [1.0, 1.5, "3", None, [1]])
def test_not_an_int(bad):
  with pytest.raises(TypeError):
    to_words(bad)


SMALL = ["", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
DECADES = {2: "twenty", 3: "thirty", 4: "forty", 5: "fifty", 6: "sixty", 7: "seventy", 8: "eighty", 9: "ninety"}
BIG = [(10 ** 33, "decillion"), (10 ** 30, "nonillion"), (10 ** 27, "octillion"), (10 ** 24, "septillion"),
       (10 ** 21, "sextillion"), (10 ** 18, "quintillion"), (10 ** 15, "quadrillion"), (10 ** 12, "trillion"),
       (10 ** 9, "billion"), (10 ** 6, "million"), (10 ** 3, "thousand")]


def reference_words(n):
  """Spelled out recursively: the largest scale first, then what is left."""
  if n == 0:
    return "zero"
  if n < 0:
    return "minus " + reference_words(-n)
  for value, name in BIG:
    if n >= value:
      head, rest = divmod(n, value)
      return reference_words(head) + " " + name + ("" if rest == 0 else " " + reference_words(rest))
  if n >= 100:
    return SMALL[n // 100] + " hundred" + ("" if n % 100 == 0 else " " + reference_words(n % 100))
  if n >= 20:
    return DECADES[n // 10] + ("" if n % 10 == 0 else "-" + SMALL[n % 10])
  return SMALL[n]


def test_reference_matches_table():
  for n, words in WORDS:
    assert reference_words(n) == words


def test_random_numbers():
  gen = random.Random(3600)
  for _ in range(4000):
    digits = gen.randint(1, 36)
    n = gen.randint(10 ** (digits - 1), 10 ** digits - 1) * gen.choice([1, -1])
    assert to_words(n) == reference_words(n), n


def test_random_sparse_groups():
  gen = random.Random(1001)
  for _ in range(3000):
    groups = [gen.choice([0, 0, 0, gen.randint(1, 999)]) for _ in range(gen.randint(1, 12))]
    n = sum(g * 1000 ** k for k, g in enumerate(groups))
    assert to_words(n) == reference_words(n), n
    assert to_words(-n) == reference_words(-n), -n


def test_every_number_below_ten_thousand():
  for n in range(10000):
    assert to_words(n) == reference_words(n)
