"""The errors numwords raises."""


class WordsError(ValueError):
  """A number out of range for words, or a text that is not the words of a number."""


class RomanError(ValueError):
  """A number out of range for a numeral, or a text that is not a canonical numeral."""
