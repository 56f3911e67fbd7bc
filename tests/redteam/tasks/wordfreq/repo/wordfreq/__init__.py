"""Word frequencies in plain text."""

from wordfreq.count import tokenize, top_words

__all__ = ["tokenize", "top_words"]
