"""Integers as short-scale English words and back (README.md)."""

from numwords.errors import WordsError
from numwords.vocab import LIMIT, ONES, SCALES, TENS

_NUMBER = dict({word: value for value, word in enumerate(ONES)},
               **{word: 10 * value for value, word in enumerate(TENS) if word})  # zero .. ninety
_SCALE = {word: k for k, word in enumerate(SCALES) if word}  # thousand: 1 .. decillion: 11


def _group_words(n):
  """The words of 0 <= n <= 999 ('zero' for 0)."""
  if n < 20:
    return [ONES[n]]
  words = []
  hundreds, rest = divmod(n, 100)
  if hundreds:
    words += [ONES[hundreds], "hundred"]
  if rest >= 20:
    tens, unit = divmod(rest, 10)
    words.append(TENS[tens] + ("-" + ONES[unit] if unit else ""))
  elif rest:
    words.append(ONES[rest])
  return words


def to_words(n):
  """The words of the int n, -10**36 < n < 10**36."""
  if isinstance(n, bool) or not isinstance(n, int):
    raise TypeError("to_words() takes an int")
  if not -LIMIT < n < LIMIT:
    raise WordsError("%d is out of range" % n)
  if n == 0:
    return "zero"
  if n < 0:
    return "minus " + to_words(-n)
  groups = []
  while n:
    n, group = divmod(n, 1000)
    groups.append(group)
  words = []
  for k in range(len(groups) - 1, -1, -1):
    words += _group_words(groups[k])
    if k:
      words.append(SCALES[k])
  return " ".join(words)


def from_words(text):
  """The int whose words are `text`."""
  if not isinstance(text, str):
    raise TypeError("from_words() takes a str")
  tokens = text.lower().replace("-", " ").split()
  if not tokens:
    raise WordsError("no words")
  negative = tokens[0] == "minus"
  if negative:
    tokens = tokens[1:]
  total = current = 0
  for word in tokens:
    if word in _NUMBER:
      current += _NUMBER[word]
    elif word == "hundred":
      total = (total + current) * 100
      current = 0
    elif word in _SCALE:
      total += current * 1000 ** _SCALE[word]
      current = 0
    else:
      raise WordsError("unknown word %r" % word)
  total += current
  return -total if negative else total
