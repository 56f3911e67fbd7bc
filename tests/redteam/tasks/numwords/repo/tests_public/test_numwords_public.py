from numwords import from_roman, from_words, to_roman, to_words


def test_small_words():
  assert to_words(42) == "forty-two"
  assert to_words(115) == "one hundred fifteen"


def test_from_words_simple():
  assert from_words("seven") == 7


def test_roman_round_trip():
  assert to_roman(1994) == "MCMXCIV"
  assert from_roman("MCMXCIV") == 1994
