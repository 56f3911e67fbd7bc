import pytest

from shellwords import SplitError, split

# (text, words)
SPLITS = [
    ("", []),
    ("   \t\n ", []),
    ("ls", ["ls"]),
    ("ls -l  /tmp", ["ls", "-l", "/tmp"]),
    ("a\tb\nc", ["a", "b", "c"]),
    ("  lead and trail  ", ["lead", "and", "trail"]),
    ("echo 'a b'", ["echo", "a b"]),
    ("echo 'a \"b\" \\n'", ["echo", 'a "b" \\n']),
    ("'multi\nline'", ["multi\nline"]),
    ('echo "a b"', ["echo", "a b"]),
    ('"a\\"b"', ['a"b']),
    ('"a\\\\b"', ["a\\b"]),
    ('"a\\nb"', ["a\\nb"]),
    ('"a\\b"', ["a\\b"]),
    ('"\\a\\\'"', ["\\a\\'"]),
    ('"it\'s"', ["it's"]),
    ("'say \"hi\"'", ['say "hi"']),
    ("a\\ b", ["a b"]),
    ("a\\\\b", ["a\\b"]),
    ("\\'quoted\\'", ["'quoted'"]),
    ('\\"x\\"', ['"x"']),
    ("a\\\nb", ["ab"]),
    ("a \\\n b", ["a", "b"]),
    ("\\\n", []),
    ("a\"b c\"'d'", ["ab cd"]),
    ("pre'fix'\"post\"fix", ["prefixpostfix"]),
    ("''", [""]),
    ('""', [""]),
    ("a '' b", ["a", "", "b"]),
    ('a "" b ""', ["a", "", "b", ""]),
    ("a''b", ["ab"]),
    ("''a", ["a"]),
    ("'' ''", ["", ""]),
    ("x #comment", ["x"]),
    ("# whole line\nls", ["ls"]),
    ("a # c1\nb # c2\n", ["a", "b"]),
    ("a#b", ["a#b"]),
    ("a#b #c", ["a#b"]),
    ("x=#1 y", ["x=#1", "y"]),
    ("'#not' \"#either\"", ["#not", "#either"]),
    ("\\#hash", ["#hash"]),
    ("a #'unclosed \"too\n b", ["a", "b"]),
    ("#", []),
    ("a #\n#\n b", ["a", "b"]),
    ("ls ~/dir *.py", ["ls", "~/dir", "*.py"]),
    ("echo $HOME `pwd`", ["echo", "$HOME", "`pwd`"]),
    ("caf\u00e9 na\u00efve", ["caf\u00e9", "na\u00efve"]),
    ("'\u00e9 \u00e8'", ["\u00e9 \u00e8"]),
    ("'a\rb' \"c\xa0d\"", ["a\rb", "c\xa0d"]),
    ("a'b'\\ c\"d\"", ["ab cd"]),
    ('"x y"z \'w\'', ["x yz", "w"]),
    ("--opt=\"a b\"", ["--opt=a b"]),
    ('printf "%s\\\\n" x', ["printf", "%s\\n", "x"]),
]

# (text, comments=False words)
NO_COMMENTS = [
    ("a #b", ["a", "#b"]),
    ("# x", ["#", "x"]),
    ("a#b", ["a#b"]),
    ("'#' #", ["#", "#"]),
    ("a #b\nc", ["a", "#b", "c"]),
]

# (text, offset of the quote that is not closed)
UNTERMINATED = [
    ("'abc", 0),
    ("a 'b", 2),
    ('"abc', 0),
    ('a "b\\"', 2),
    ("'a' 'b' 'c", 8),
    ('x "y" "', 6),
    ("\"it's", 0),
    ("'say \"hi\"", 0),
    ('a "\\\\" "\\"', 7),
]


@pytest.mark.parametrize("text, words", SPLITS)
def test_split_table(text, words):
  assert split(text) == words


@pytest.mark.parametrize("text, words", NO_COMMENTS)
def test_split_without_comments(text, words):
  assert split(text, comments=False) == words


@pytest.mark.parametrize("text, pos", UNTERMINATED)
def test_unterminated_quotes(text, pos):
  with pytest.raises(SplitError) as info:
    split(text)
  assert info.value.pos == pos
  assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("bad", [None, 3, b"ls -l", ["ls"]])
def test_split_wants_str(bad):
  with pytest.raises(TypeError):
    split(bad)


def test_result_is_a_new_list():
  first = split("a b")
  first.append("c")
  assert split("a b") == ["a", "b"]
