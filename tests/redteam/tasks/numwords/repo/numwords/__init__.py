"""Integers as English words and as Roman numerals, both ways, with strict validation."""

from numwords.errors import RomanError, WordsError
from numwords.roman import from_roman, to_roman
from numwords.words import from_words, to_words

__all__ = ["RomanError", "WordsError", "from_roman", "from_words", "to_roman", "to_words"]
