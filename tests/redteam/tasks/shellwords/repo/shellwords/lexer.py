"""Splitting a command line into words (README.md: whitespace, backslashes, quotes, comments)."""

from shellwords.errors import SplitError

WHITESPACE = " \t\n"
# What a backslash escapes inside double quotes; before anything else it stays.
DOUBLE_QUOTE_ESCAPES = "$`\"\\"


def split(text, comments=True):
  """The words of `text`."""
  if not isinstance(text, str):
    raise TypeError("split() takes a str")
  words = []
  word = ""
  i, n = 0, len(text)
  while i < n:
    ch = text[i]
    if ch in WHITESPACE:
      if word:
        words.append(word)
        word = ""
      i += 1
    elif ch == "#" and comments:
      end = text.find("\n", i)
      i = n if end < 0 else end
    elif ch == "\\":
      if i + 1 == n:
        raise SplitError("trailing backslash", i)
      if text[i + 1] != "\n":
        word += text[i + 1]
      i += 2
    elif ch == "'":
      end = text.find("'", i + 1)
      if end < 0:
        raise SplitError("unterminated single quote", i)
      word += text[i + 1:end]
      i = end + 1
    elif ch == '"':
      part, i = _double_quoted(text, i)
      word += part
    else:
      word += ch
      i += 1
  if word:
    words.append(word)
  return words


def _double_quoted(text, start):
  """(the text of the double-quoted part opening at `start`, the offset after it)."""
  out = []
  i, n = start + 1, len(text)
  while i < n:
    ch = text[i]
    if ch == '"':
      return "".join(out), i + 1
    if ch == "\\" and i + 1 < n:
      out.append(text[i + 1])
      i += 2
      continue
    out.append(ch)
    i += 1
  raise SplitError("unterminated double quote", start)
