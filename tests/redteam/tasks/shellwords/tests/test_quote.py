import random

import pytest

from shellwords import join, quote, split

# (word, quoted)
QUOTES = [
    ("abc", "abc"),
    ("ABC123", "ABC123"),
    ("-v", "-v"),
    ("/usr/local/bin", "/usr/local/bin"),
    ("file_name.tar.gz", "file_name.tar.gz"),
    ("", "''"),
    (" ", "' '"),
    ("a b", "'a b'"),
    ("it's", "'it'\"'\"'s'"),
    ("'", "''\"'\"''"),
    ("''", "''\"'\"''\"'\"''"),
    ('say "hi"', "'say \"hi\"'"),
    ("$HOME", "'$HOME'"),
    ("a\\b", "'a\\b'"),
    ("#hash", "'#hash'"),
    ("a#b", "'a#b'"),
    ("tab\there", "'tab\there'"),
    ("line\nbreak", "'line\nbreak'"),
    ("*.py", "'*.py'"),
    ("~", "'~'"),
    ("a;b", "'a;b'"),
    ("x&y|z", "'x&y|z'"),
    ("(sub)", "'(sub)'"),
]


@pytest.mark.parametrize("word, quoted", QUOTES)
def test_quote_table(word, quoted):
  assert quote(word) == quoted
  assert split(quoted) == [word]


@pytest.mark.parametrize("words, line", [
    ([], ""),
    (["ls", "-l"], "ls -l"),
    (["a b", "", "c"], "'a b' '' c"),
    (["it's", "#x"], "'it'\"'\"'s' '#x'"),
])
def test_join_table(words, line):
  assert join(words) == line
  assert split(line) == words


def reference_quote(s):
  """Character by character: safe characters pass, anything else forces single quotes."""
  safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-"
  if s and all(ch in safe for ch in s):
    return s
  out = "'"
  for ch in s:
    out += "'\"'\"'" if ch == "'" else ch
  return out + "'"


def test_random_quote_against_reference():
  gen = random.Random(1818)
  alphabet = "abcXYZ019_./- '\"\\$`#*?\t\n;&|()<>!~"
  for _ in range(3000):
    s = "".join(gen.choice(alphabet) for _ in range(gen.randint(0, 12)))
    assert quote(s) == reference_quote(s), s


def test_random_round_trip():
  gen = random.Random(4242)
  alphabet = ["a", "b", "Z", "0", "-", "_", ".", "/", " ", "\t", "\n", "'", '"', "\\", "#", "$", "`", "*",
              "\u00e9", "\u00df", "\u4e2d", "\r", "\x0c", "\xa0", "\u2028", "\U0001F600", "\x00"]
  for _ in range(2000):
    words = ["".join(gen.choice(alphabet) for _ in range(gen.randint(0, 10))) for _ in range(gen.randint(0, 6))]
    line = join(words)
    assert split(line) == words, (words, line)
    assert split(line, comments=False) == words, (words, line)


def test_quote_wants_str():
  with pytest.raises(TypeError):
    quote(5)
