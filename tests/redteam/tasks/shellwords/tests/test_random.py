import random

import pytest

from shellwords import SplitError, split


def reference_split(text, comments=True):
  """A slow state machine, one character at a time: the words, or ('error', pos)."""
  words, current, state, opened = [], None, "between", None
  for pos, ch in enumerate(text):
    if state == "comment":
      if ch == "\n":
        state = "between"
      continue
    if state == "single":
      if ch == "'":
        state = "word"
      else:
        current.append(ch)
      continue
    if state == "double":
      if ch == '"':
        state = "word"
      elif ch == "\\":
        state = "double-backslash"
      else:
        current.append(ch)
      continue
    if state == "double-backslash":
      if ch in '$`"\\':
        current.append(ch)
      elif ch != "\n":
        current.append("\\")
        current.append(ch)
      state = "double"
      continue
    if state in ("backslash-between", "backslash-word"):
      if ch == "\n":
        state = "between" if state == "backslash-between" else "word"
      else:
        if current is None:
          current = []
        current.append(ch)
        state = "word"
      continue
    # between words or inside an unquoted part of a word
    if ch in " \t\n":
      if state == "word":
        words.append("".join(current))
        current = None
      state = "between"
    elif ch == "#" and comments and state == "between":
      state = "comment"
    elif ch == "\\":
      opened = pos
      state = "backslash-between" if state == "between" else "backslash-word"
    elif ch == "'" or ch == '"':
      if current is None:
        current = []
      opened = pos
      state = "single" if ch == "'" else "double"
    else:
      if current is None:
        current = []
      current.append(ch)
      state = "word"
  if state in ("single", "double", "double-backslash", "backslash-between", "backslash-word"):
    return ("error", opened)
  if state == "word":
    words.append("".join(current))
  return words


BARE = "abcxyz019_./-=:@%+,$`!?*[]{}~^"
BARE_INNER = BARE + "#"
SINGLE = "ab #\"\\\t\n$`\u00e9\r\xa0"
DOUBLE_PLAIN = "ab #'\t\n$`\u00e9\r\xa0"
SEPARATORS = [" ", "  ", "\t", "\n", " \t ", " \\\n", " \\\n "]


def random_piece(gen):
  kind = gen.random()
  if kind < 0.3:
    return gen.choice("abcxyz") + "".join(gen.choice(BARE_INNER) for _ in range(gen.randint(0, 5)))
  if kind < 0.45:
    return "\\" + gen.choice("ab#'\"\\$`*")
  if kind < 0.65:
    return "'" + "".join(gen.choice(SINGLE) for _ in range(gen.randint(0, 6))) + "'"
  if kind < 0.9:
    parts = []
    for _ in range(gen.randint(0, 6)):
      r = gen.random()
      if r < 0.6:
        parts.append(gen.choice(DOUBLE_PLAIN))
      elif r < 0.8:
        parts.append(gen.choice(['\\"', "\\\\"]))
      else:
        parts.append("\\" + gen.choice("abn#'"))
    return '"' + "".join(parts) + '"'
  return "\\\n"


def random_line(gen, max_words=8, comment_chars="ab #'\"\\\t$"):
  out = []
  for _ in range(gen.randint(0, max_words)):
    out.append(gen.choice(SEPARATORS))
    if gen.random() < 0.15:
      out.append("#" + "".join(gen.choice(comment_chars) for _ in range(gen.randint(0, 8))) + "\n")
    word = [random_piece(gen) for _ in range(gen.randint(1, 4))]
    if word[0] == "\\\n":
      word[0] = "q"
    out.append("".join(word))
  if gen.random() < 0.3:
    out.append(" #" + "".join(gen.choice(comment_chars) for _ in range(gen.randint(0, 6))))
  return "".join(out)


def test_reference_agrees_with_readme_examples():
  assert reference_split("a''b '' \"\"") == ["ab", "", ""]
  assert reference_split('say "\\$HOME" a#b ""#c') == ["say", "$HOME", "a#b", "#c"]
  assert reference_split("'x") == ("error", 0)


def test_random_lines():
  gen = random.Random(1234)
  for _ in range(3000):
    text = random_line(gen)
    assert split(text) == reference_split(text), text


def outcome(text, comments):
  try:
    return split(text, comments=comments)
  except SplitError as e:
    return ("error", e.pos)


def test_random_lines_without_comments():
  gen = random.Random(777)
  for _ in range(1000):
    text = random_line(gen, comment_chars="ab #\t")
    assert outcome(text, False) == reference_split(text, comments=False), text


def test_random_unterminated():
  gen = random.Random(99)
  for _ in range(1000):
    text = random_line(gen, 4) + "\n " + gen.choice(["'", '"']) + "".join(gen.choice("ab \t") for _ in range(gen.randint(0, 5)))
    expected = reference_split(text)
    assert expected[0] == "error", text
    with pytest.raises(SplitError) as info:
      split(text)
    assert info.value.pos == expected[1], text
