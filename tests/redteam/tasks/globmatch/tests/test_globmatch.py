import functools
import random
import re

import pytest

from globmatch import compile, expand_braces, filter_paths, match, translate


# -- a slow reference matcher: braces expanded by hand, then segment by segment ------------


def reference_expand(pattern):
  """Brace expansion the slow way: the first closed brace group, then recursion on the rest."""
  depth, start, cuts = 0, None, []
  i = 0
  while i < len(pattern):
    c = pattern[i]
    if c == "\\":
      i += 2
      continue
    if c == "{":
      if depth == 0:
        start, cuts = i, []
      depth += 1
    elif c == "}" and depth:
      depth -= 1
      if depth == 0:
        pieces, last = [], start + 1
        for cut in cuts + [i]:
          pieces.append(pattern[last:cut])
          last = cut + 1
        out = []
        for piece in pieces:
          out.extend(reference_expand(pattern[:start] + piece + pattern[i + 1:]))
        return out
    elif c == "," and depth == 1:
      cuts.append(i)
    i += 1
  if depth:  # an unclosed "{" is an ordinary character: expand what follows it
    return [pattern[:start + 1] + rest for rest in reference_expand(pattern[start + 1:])]
  return [pattern]


def reference_class(pattern):
  """(test for one character, rest of the pattern) for a class at the start, or None."""
  j = 1
  negate = pattern[j:j + 1] == "!"
  if negate:
    j += 1
  body_start = j
  if pattern[j:j + 1] == "]":
    j += 1
  close = pattern.find("]", j)
  if close < 0:
    return None
  body = pattern[body_start:close]
  items, k = [], 0
  while k < len(body):
    if k + 2 < len(body) and body[k + 1] == "-":
      items.append((body[k], body[k + 2]))
      k += 3
    else:
      items.append((body[k], body[k]))
      k += 1

  def test(ch):
    inside = any(lo <= ch <= hi for lo, hi in items)
    return ch != "/" and inside != negate

  return test, pattern[close + 1:]


@functools.lru_cache(maxsize=None)
def reference_segment(pattern, text):
  if not pattern:
    return not text
  c = pattern[0]
  if c == "*":
    return any(reference_segment(pattern[1:], text[k:]) for k in range(len(text) + 1))
  if not text:
    return False
  if c == "?":
    return reference_segment(pattern[1:], text[1:])
  if c == "\\" and len(pattern) > 1:
    return text[0] == pattern[1] and reference_segment(pattern[2:], text[1:])
  if c == "[":
    parsed = reference_class(pattern)
    if parsed is not None:
      test, rest = parsed
      return test(text[0]) and reference_segment(rest, text[1:])
  return text[0] == c and reference_segment(pattern[1:], text[1:])


def reference_segments(parts, names):
  if not parts:
    return not names
  if parts[0] == "**":
    return any(reference_segments(parts[1:], names[k:]) for k in range(len(names) + 1))
  if not names:
    return False
  return reference_segment(parts[0], names[0]) and reference_segments(parts[1:], names[1:])


def reference_match(pattern, path):
  names = tuple(path.split("/"))
  return any(reference_segments(tuple(p.split("/")), names) for p in reference_expand(pattern))


# -- tables ------------------------------------------------------------------------------

MATCH_TABLE = [
    ("*.py", "main.py", True),
    ("*.py", "setup_py", False),
    ("*.py", "src/main.py", False),
    ("src/*.py", "src/main.py", True),
    ("src/*", "src/a/b.py", False),
    ("*.tar.gz", "x.tar.gz", True),
    ("*.tar.gz", "x.tarxgz", False),
    ("a.b", "axb", False),
    ("file?.txt", "file1.txt", True),
    ("file?.txt", "file/.txt", False),
    ("src/**/*.py", "src/main.py", True),
    ("src/**/*.py", "src/a/b/c.py", True),
    ("src/**/*.py", "lib/a.py", False),
    ("**/x", "x", True),
    ("**/x", "a/b/x", True),
    ("**/x", "a/bx", False),
    ("a/**", "a/b/c", True),
    ("a/**", "b/c", False),
    ("**", "any/depth/at/all.txt", True),
    ("a/**/b/**/c", "a/b/c", True),
    ("a/**/b/**/c", "a/x/b/y/z/c", True),
    ("[abc].txt", "b.txt", True),
    ("[abc].txt", "d.txt", False),
    ("[a-c]x", "bx", True),
    ("[a-c]x", "dx", False),
    ("[!a]x", "bx", True),
    ("[!a]x", "ax", False),
    ("[!a]x", "!x", True),
    ("[!a-c]x", "dx", True),
    ("[!a-c]x", "bx", False),
    ("[]a]", "]", True),
    ("[!]a]", "b", True),
    ("[!]a]", "]", False),
    ("a[bc", "a[bc", True),
    ("\\*.txt", "*.txt", True),
    ("\\*.txt", "a.txt", False),
    ("\\[a]", "[a]", True),
    ("{src,lib}/*.py", "lib/x.py", True),
    ("{src,lib}/*.py", "doc/x.py", False),
    ("x.{py,{c,h}}", "x.h", True),
    ("x.{py,{c,h}}", "x.ch", False),
    ("{a,b", "{a,b", True),
]


@pytest.mark.parametrize("pattern,path,expected", MATCH_TABLE)
def test_match_table(pattern, path, expected):
  assert match(pattern, path) is expected


@pytest.mark.parametrize("pattern,path,expected", MATCH_TABLE)
def test_reference_agrees_with_table(pattern, path, expected):
  assert reference_match(pattern, path) is expected


def test_star_never_crosses_a_slash():
  assert not match("a*b", "a/b")
  assert not match("*", "a/b")
  assert match("*", "")


def test_dot_is_literal():
  assert match("v1.0", "v1.0")
  assert not match("v1.0", "v110")
  assert not match("*.cfg", "acfg")


def test_negated_class_never_matches_slash():
  assert not match("a[!b]c", "a/c")
  assert match("a[!b]c", "a.c")


def test_globstar_zero_directories():
  assert match("docs/**/index.md", "docs/index.md")
  assert match("**/*.md", "README.md")


def test_globstar_many_directories():
  assert match("docs/**/index.md", "docs/a/b/c/index.md")
  assert not match("docs/**/index.md", "docs/a/b/c/index.mdx")


def test_translate_gives_regex_source():
  regex = re.compile(translate("src/**/*.py"))
  assert regex.match("src/a/b.py") and regex.match("src/b.py")
  assert not regex.match("src/b.pyc")


def test_compile_is_cached():
  assert compile("*.py") is compile("*.py")
  assert compile("*.py").match("a.py")


def test_expand_braces_order():
  assert expand_braces("{a,b}{1,2}") == ["a1", "a2", "b1", "b2"]
  assert expand_braces("x{a,{b,c}}y") == ["xay", "xby", "xcy"]
  assert expand_braces("no braces") == ["no braces"]


def test_expand_braces_escaped_and_unclosed():
  assert expand_braces("\\{a,b}") == ["\\{a,b}"]
  assert expand_braces("{a,b") == ["{a,b"]


def test_filter_paths_single_pattern():
  paths = ["a.py", "b.txt", "c/d.py", "e.py"]
  assert filter_paths(paths, "*.py") == ["a.py", "e.py"]


def test_filter_paths_excludes_and_reincludes():
  paths = ["src/a.py", "src/test_a.py", "src/test_keep.py", "doc/x.py"]
  patterns = ["src/**", "!**/test_*", "src/test_keep.py"]
  assert filter_paths(paths, patterns) == ["src/a.py", "src/test_keep.py"]


# -- seeded random patterns and paths against the reference -------------------------------

SEGMENT_TOKENS = ["a", "b", "c", "x", ".", "*", "*", "?", "[ab]", "[!a]", "[a-c]", "{a,b}", "{b,.c}", "\\*"]
SEGMENT_CHOICES = ["tokens", "tokens", "tokens", "tokens", "**"]
PATH_CHARS = "abcx.*"


def random_pattern(rng):
  """A pattern as a list of segments, each a list of tokens (or "**")."""
  segments = []
  for _ in range(rng.randint(1, 3)):
    if rng.choice(SEGMENT_CHOICES) == "**":
      segments.append("**")
    else:
      segments.append([rng.choice(SEGMENT_TOKENS) for _ in range(rng.randint(1, 3))])
  return segments


def random_name(rng):
  return "".join(rng.choice(PATH_CHARS) for _ in range(rng.randint(1, 3)))


def near_path(rng, segments):
  """A path built to fit the pattern, then sometimes spoiled, so both answers are common."""
  names = []
  for segment in segments:
    if segment == "**":
      names.extend(random_name(rng) for _ in range(rng.randint(0, 2)))
      continue
    name = ""
    for token in segment:
      if token == "*":
        name += "".join(rng.choice(PATH_CHARS) for _ in range(rng.randint(0, 2)))
      elif token == "?":
        name += rng.choice(PATH_CHARS)
      elif token.startswith("["):
        name += rng.choice("abcx")
      elif token.startswith("{"):
        name += rng.choice(token[1:-1].split(","))
      elif token == "\\*":
        name += "*"
      else:
        name += token
    names.append(name)
  path = "/".join(names) or "a"
  if rng.random() < 0.3:
    k = rng.randrange(len(path))
    path = path[:k] + rng.choice(PATH_CHARS + "/") + path[k + 1:]
  return path


def random_path(rng):
  return "/".join(random_name(rng) for _ in range(rng.randint(1, 4)))


def pattern_text(segments):
  return "/".join(s if s == "**" else "".join(s) for s in segments)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_patterns_match_reference(seed):
  rng = random.Random(seed)
  for _ in range(300):
    segments = random_pattern(rng)
    pattern = pattern_text(segments)
    for path in (near_path(rng, segments), random_path(rng)):
      assert match(pattern, path) == reference_match(pattern, path), (pattern, path)


@pytest.mark.parametrize("seed", [3, 4])
def test_random_filter_paths_match_reference(seed):
  rng = random.Random(seed)
  for _ in range(60):
    patterns = []
    for _ in range(rng.randint(1, 3)):
      text = pattern_text(random_pattern(rng))
      patterns.append(("!" if patterns and rng.random() < 0.4 else "") + text)
    paths = [random_path(rng) for _ in range(8)]
    expected = []
    for path in paths:
      keep = False
      for p in patterns:
        negated = p.startswith("!")
        if reference_match(p[1:] if negated else p, path):
          keep = not negated
      if keep:
        expected.append(path)
    assert filter_paths(paths, patterns) == expected, (patterns, paths)
