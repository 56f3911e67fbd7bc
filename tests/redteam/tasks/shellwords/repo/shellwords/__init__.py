"""Shell-like words: split a command line into words (quotes, backslashes, comments) and quote
words back so that splitting gives them again."""

from shellwords.errors import SplitError
from shellwords.lexer import split
from shellwords.quoting import join, quote

__all__ = ["SplitError", "join", "quote", "split"]
