import pytest

from wordfreq.count import tokenize, top_words


def test_top_words_match_expected(sample):
  text, n, expected = sample
  assert top_words(text, n) == expected


def test_tokenize_strips_punctuation():
  assert tokenize("well, (this) is... it!") == ["well", "this", "is", "it"]


def test_ties_are_alphabetical():
  assert top_words("pear apple fig apple pear", 2) == [("apple", 2), ("pear", 2)]


def test_empty_text():
  assert top_words("", 3) == []
  assert top_words("  ...  ", 3) == []


def test_n_zero_and_negative():
  assert top_words("one two two", 0) == []
  with pytest.raises(ValueError):
    top_words("one", -1)
