import functools
import random

import pytest

from semrange import Version, compare, max_satisfying, parse, satisfies


def reference_key(text):
  """A sort key with semver.org precedence, built the slow way from the text."""
  text = text.split("+", 1)[0]
  release, _, pre = text.partition("-")
  numbers = tuple(int(part) for part in release.split("."))
  if not pre:
    return numbers + ((1,),)
  idents = []
  for ident in pre.split("."):
    idents.append((0, int(ident), "") if ident.isdigit() else (1, 0, ident))
  return numbers + ((0, tuple(idents)),)


def reference_satisfies(version, range_text):
  """Whether `version` satisfies `range_text`, comparator by comparator."""
  key = reference_key(version)
  release = version.split("+")[0].split("-")[0]
  has_pre = "-" in version.split("+")[0]
  for alternative in range_text.split("||"):
    ok, pre_allowed = True, not has_pre
    for token in alternative.split():
      if token == "*":
        continue
      op = next((o for o in ("^", "~", ">=", "<=", ">", "<", "=") if token.startswith(o)), "")
      bound = token[len(op):]
      if "-" in bound and bound.split("-")[0] == release:
        pre_allowed = True
      b = reference_key(bound)
      major, minor, patch = (int(x) for x in bound.split("-")[0].split("."))
      if op == "^":
        upper = (major + 1, 0, 0) if major else (0, minor + 1, 0) if minor else (0, 0, patch + 1)
        ok = ok and b <= key and key[:3] < upper
      elif op == "~":
        ok = ok and b <= key and key[:3] < (major, minor + 1, 0)
      elif op == ">=":
        ok = ok and key >= b
      elif op == "<=":
        ok = ok and key <= b
      elif op == ">":
        ok = ok and key > b
      elif op == "<":
        ok = ok and key < b
      else:
        ok = ok and key == b
    if ok and pre_allowed:
      return True
  return False


PRE_IDS = ["alpha", "beta", "rc", "x-1", "0", "1", "2", "3", "7", "9", "10", "11", "12", "20", "30"]


def random_version(rng):
  text = f"{rng.choice([0, 0, 0, 1, 2])}.{rng.randint(0, 3)}.{rng.randint(0, 3)}"
  if rng.random() < 0.45:
    text += "-" + ".".join(rng.choice(PRE_IDS) for _ in range(rng.randint(1, 3)))
  if rng.random() < 0.1:
    text += "+b" + str(rng.randint(0, 99))
  return text


def random_range(rng):
  alternatives = []
  for _ in range(rng.randint(1, 3)):
    ops = [rng.choice(["^", "^", "^", "~", ">=", "<=", ">", "<", "=", ""]) for _ in range(rng.randint(1, 2))]
    alternatives.append(" ".join(op + random_version(rng).split("+")[0] for op in ops))
  return " || ".join(alternatives)


def test_parse_fields():
  v = parse("10.20.30-rc.1.x-y+build.7")
  assert (v.major, v.minor, v.patch, v.pre) == (10, 20, 30, ("rc", "1", "x-y"))
  assert str(parse("v1.0.0-alpha")) == "1.0.0-alpha"
  for bad in ["1.2", "01.2.3", "1.2.3-", "1.2.3-01", "a.b.c", ""]:
    with pytest.raises(ValueError):
      parse(bad)


COMPARE_TABLE = [
    ("1.0.0-alpha", "1.0.0-alpha.1", -1),
    ("1.0.0-alpha.1", "1.0.0-alpha.beta", -1),
    ("1.0.0-alpha.beta", "1.0.0-beta", -1),
    ("1.0.0-beta.2", "1.0.0-beta.11", -1),
    ("1.0.0-beta.11", "1.0.0-rc.1", -1),
    ("1.0.0-rc.1", "1.0.0", -1),
    ("1.0.0-rc.10", "1.0.0-rc.9", 1),
    ("2.0.0-3", "2.0.0-20", -1),
    ("2.0.0-30", "2.0.0-x", -1),
    ("1.2.3-7.alpha", "1.2.3-7.alpha", 0),
    ("1.2.3+a", "1.2.3+b", 0),
    ("1.10.0", "1.9.0", 1),
]


@pytest.mark.parametrize("a,b,expected", COMPARE_TABLE)
def test_compare_table(a, b, expected):
  assert compare(a, b) == expected
  assert compare(b, a) == -expected


SATISFIES_TABLE = [
    ("0.2.5", "^0.2.3", True),
    ("0.3.0", "^0.2.3", False),
    ("0.9.0", "^0.2.3", False),
    ("0.0.3", "^0.0.3", True),
    ("0.0.4", "^0.0.3", False),
    ("0.1.0", "^0.0.3", False),
    ("1.9.9", "^1.2.3", True),
    ("2.0.0-alpha", "^1.2.3", False),
    ("1.2.3-rc.2", "^1.2.3-rc.10", False),
    ("1.2.3-rc.12", "^1.2.3-rc.10", True),
    ("1.2.4-rc.12", "^1.2.3-rc.10", False),
    ("0.2.9", "~0.2.3", True),
    ("3.0.0", ">=1.0.0 <2.0.0 || =3.0.0", True),
    ("1.5.0-beta", ">=1.0.0 <2.0.0", False),
    ("1.0.0", "*", True),
    ("1.0.0-rc.1", "*", False),
]


@pytest.mark.parametrize("version,spec,expected", SATISFIES_TABLE)
def test_satisfies_table(version, spec, expected):
  assert satisfies(version, spec) == expected


def test_max_satisfying():
  versions = ["1.2.0", "1.3.0-rc.2", "1.3.0-rc.10", "1.3.0", "2.0.0-beta.1"]
  assert str(max_satisfying(versions, "^1.2.0")) == "1.3.0"
  assert str(max_satisfying(versions, ">=1.3.0-rc.1 <1.3.0")) == "1.3.0-rc.10"
  assert max_satisfying(versions, ">2.0.0") is None


@pytest.mark.parametrize("seed", range(6))
def test_random_sorting_against_reference(seed):
  rng = random.Random(seed)
  texts = [random_version(rng) for _ in range(60)]
  want = sorted(texts, key=reference_key)
  got = sorted(map(parse, texts))
  assert [reference_key(str(v)) for v in got] == [reference_key(t) for t in want]
  for a, b in zip(texts, texts[1:]):
    expect = (reference_key(a) > reference_key(b)) - (reference_key(a) < reference_key(b))
    assert compare(a, b) == expect, (a, b)


@pytest.mark.parametrize("seed", range(8))
def test_random_satisfies_against_reference(seed):
  rng = random.Random(100 + seed)
  for _ in range(250):
    version, spec = random_version(rng), random_range(rng)
    want = reference_satisfies(version, spec)
    assert satisfies(version, spec) == want, (version, spec)


def test_versions_are_values():
  assert parse("1.0.0+x") == parse("1.0.0")
  assert isinstance(parse("1.0.0"), Version)
  assert sorted(map(parse, ["1.0.0-rc.1", "1.0.0-rc.1.1", "1.0.0-rc"]), key=functools.cmp_to_key(compare))[0] == parse("1.0.0-rc")
