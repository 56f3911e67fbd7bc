from shellwords import join, quote, split


def test_plain_words():
  assert split("ls -l  /tmp") == ["ls", "-l", "/tmp"]


def test_single_quotes():
  assert split("echo 'a b'") == ["echo", "a b"]


def test_quote_plain():
  assert quote("abc") == "abc"
  assert join(["a", "b c"]) == "a 'b c'"
