"""Counting words: tokenizing text and ranking the most frequent words."""

import string


def tokenize(text):
  """The words of `text`: whitespace-separated runs, leading and trailing punctuation stripped."""
  words = []
  for raw in text.split():
    word = raw.strip(string.punctuation)
    if word:
      words.append(word)
  return words


def top_words(text, n):
  """The `n` most frequent `(word, count)` pairs, most frequent first, ties alphabetical."""
  if n < 0:
    raise ValueError(f"n must not be negative: {n}")
  counts = {}
  for word in tokenize(text):
    counts[word] = counts.get(word, 0) + 1
  ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
  return ranked[:n]
