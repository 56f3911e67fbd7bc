import random

import pytest

from numwords import WordsError, from_words, to_words

# (text, value): exactly what to_words writes, up to ASCII case and ' \t\r\n' whitespace
VALID = [
    ("zero", 0),
    ("ZERO", 0),
    ("  zero\n", 0),
    ("seven", 7),
    ("Forty-Two", 42),
    ("forty-two", 42),
    ("NINETY-NINE", 99),
    ("one hundred", 100),
    ("one   hundred\tfive", 105),
    ("one hundred fifteen", 115),
    ("nine hundred ninety-nine", 999),
    ("one thousand", 1000),
    ("one thousand two hundred", 1200),
    ("one hundred thousand", 100000),
    ("one million", 1000000),
    ("one million one", 1000001),
    ("one million\r\none thousand", 1001000),
    ("One Million Two Hundred Thirty-Four Thousand Five Hundred Sixty-Seven", 1234567),
    ("two billion five", 2000000005),
    ("one trillion", 10 ** 12),
    ("nine hundred ninety-nine trillion nine hundred ninety-nine billion nine hundred ninety-nine million "
     "nine hundred ninety-nine thousand nine hundred ninety-nine", 10 ** 15 - 1),
    ("minus one", -1),
    ("MINUS forty", -40),
    ("minus one million five", -1000005),
    ("\t minus \t twelve thousand \n", -12000),
]

INVALID = [
    "",
    "   ",
    "\t\n",
    "one two",
    "twenty one",
    "twenty-ten",
    "twenty-zero",
    "one-hundred",
    "forty-two-one",
    "twenty-",
    "-one",
    "ten-one",
    "zero zero",
    "zero one",
    "one zero",
    "minus zero",
    "minus",
    "minus minus one",
    "one minus",
    "thousand",
    "hundred",
    "million one",
    "twelve hundred",
    "one hundred hundred",
    "ten one",
    "twenty twenty",
    "one hundred one hundred",
    "one thousand thousand",
    "two thousand three thousand",
    "one million million",
    "eleventy",
    "one, two",
    "fourty",
    "and",
    "one and",
    "a hundred",
    "1000",
    "one thousand ten hundred",
]


@pytest.mark.parametrize("text, value", VALID)
def test_valid_table(text, value):
  assert from_words(text) == value


@pytest.mark.parametrize("text", INVALID)
def test_invalid_table(text):
  with pytest.raises(WordsError):
    from_words(text)


@pytest.mark.parametrize("bad", [None, 5, b"five", ["five"]])
def test_not_a_str(bad):
  with pytest.raises(TypeError):
    from_words(bad)


SMALL = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
DECADES = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
SCALES = ["thousand", "million", "billion", "trillion"]


def reference_words(n):
  if n < 0:
    return "minus " + reference_words(-n)
  if n < 20:
    return SMALL[n]
  if n < 100:
    return DECADES[n // 10 - 2] + ("" if n % 10 == 0 else "-" + SMALL[n % 10])
  if n < 1000:
    return SMALL[n // 100] + " hundred" + ("" if n % 100 == 0 else " " + reference_words(n % 100))
  for k in range(len(SCALES), 0, -1):
    if n >= 1000 ** k:
      head, rest = divmod(n, 1000 ** k)
      return reference_words(head) + " " + SCALES[k - 1] + ("" if rest == 0 else " " + reference_words(rest))
  raise AssertionError(n)


def reference_parse(text):
  """The value of `text` if it is exactly the words of a number below 10**15 (up to ASCII case and
  whitespace), else None: read it loosely, then write the value back and compare."""
  tokens = "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else (" " if c in "\t\r\n" else c) for c in text).split(" ")
  tokens = [t for t in tokens if t]
  sign, total, current = 1, 0, 0
  for i, token in enumerate(tokens):
    if token == "minus" and i == 0:
      sign = -1
    elif token in SMALL:
      current += SMALL.index(token)
    elif token in DECADES:
      current += 10 * (DECADES.index(token) + 2)
    elif token.count("-") == 1 and token.split("-")[0] in DECADES and token.split("-")[1] in SMALL:
      current += 10 * (DECADES.index(token.split("-")[0]) + 2) + SMALL.index(token.split("-")[1])
    elif token == "hundred":
      current *= 100
    elif token in SCALES:
      total += current * 1000 ** (SCALES.index(token) + 1)
      current = 0
    else:
      return None
  value = sign * (total + current)
  if not tokens or abs(value) >= 10 ** 15 or reference_words(value).split(" ") != tokens:
    return None
  return value


def test_reference_agrees_with_tables():
  for text, value in VALID:
    assert reference_parse(text) == value, text
  for text in INVALID:
    assert reference_parse(text) is None, text


def respell(gen, words):
  """The same words with random ASCII case and random runs of ' \\t\\r\\n' around them."""
  gaps = [" ", "  ", "\t", "\n", "\r\n", " \t "]
  out = [gen.choice(["", "", " ", "\n"])]
  for i, word in enumerate(words.split(" ")):
    if i:
      out.append(gen.choice(gaps))
    out.append("".join(c.upper() if gen.random() < 0.3 else c for c in word))
  out.append(gen.choice(["", "", "\t", "\r\n"]))
  return "".join(out)


def test_random_round_trip():
  gen = random.Random(2718)
  for _ in range(3000):
    digits = gen.randint(1, 15)
    n = gen.randint(0, 10 ** digits - 1) * gen.choice([1, -1])
    text = to_words(n)
    assert from_words(text) == n, text
    spelled = respell(gen, text)
    assert from_words(spelled) == n, spelled


VOCAB = SMALL[1:] + DECADES + ["twenty-one", "thirty-five", "ninety-nine", "hundred"]


def mutate(gen, words):
  tokens = words.split(" ")
  i = gen.randrange(len(tokens))
  kind = gen.random()
  if kind < 0.35:
    tokens.insert(i, tokens[i])
  elif kind < 0.6 and len(tokens) > 1:
    del tokens[i]
  elif tokens[i] not in SCALES:
    tokens[i] = gen.choice(VOCAB)
  else:
    tokens.insert(i, gen.choice(VOCAB))
  return " ".join(tokens)


def test_random_mutations():
  gen = random.Random(31337)
  rejected = 0
  for _ in range(4000):
    digits = gen.randint(1, 15)
    n = gen.randint(0, 10 ** digits - 1) * gen.choice([1, 1, -1])
    text = mutate(gen, reference_words(n))
    expected = reference_parse(text)
    if expected is None:
      rejected += 1
      with pytest.raises(WordsError):
        from_words(text)
    else:
      assert from_words(text) == expected, text
  assert rejected > 1000
