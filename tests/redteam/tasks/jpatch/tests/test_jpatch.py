import copy
import json
import os
import random
import re

import pytest

from jpatch import JsonPatchError, JsonPointerError, apply_patch, json_equal, parse_pointer, resolve

HERE = os.path.dirname(os.path.abspath(__file__))

with open(os.path.join(HERE, "cases.json"), encoding="utf-8") as fh:
  CASES = json.load(fh)


def canonical(value):
  """JSON text that tells true from 1 (a plain == would not)."""
  return json.dumps(value, sort_keys=True)


# -- the cases of cases.json ---------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[re.sub(r"[^a-z0-9]+", "-", c["comment"]).strip("-") for c in CASES])
def test_case(case):
  doc = copy.deepcopy(case["doc"])
  if "error" in case:
    with pytest.raises(JsonPatchError):
      apply_patch(doc, case["patch"])
  else:
    assert canonical(apply_patch(doc, case["patch"])) == canonical(case["expected"])
  assert canonical(doc) == canonical(case["doc"]), "apply_patch changed its input"


# -- pointers ------------------------------------------------------------------------------


def reference_escape(name):
  return name.replace("~", "~0").replace("/", "~1")


PIECES = ["a", "b", "~", "/", "0", "1", "~0", "~1", "01", " ", "\u00e9"]


@pytest.mark.parametrize("seed", range(5))
def test_parse_random_pointers(seed):
  rng = random.Random(seed)
  for _ in range(300):
    tokens = ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 5))) for _ in range(rng.randint(0, 4))]
    text = "".join("/" + reference_escape(t) for t in tokens)
    assert parse_pointer(text) == tokens, text


def random_document(rng, depth):
  if depth == 0 or rng.random() < 0.3:
    return rng.choice([0, 1, "x", None, True, 2.5])
  if rng.random() < 0.5:
    return [random_document(rng, depth - 1) for _ in range(rng.randint(1, 4))]
  return {"".join(rng.choice(PIECES) for _ in range(rng.randint(0, 3))): random_document(rng, depth - 1)
          for _ in range(rng.randint(1, 4))}


@pytest.mark.parametrize("seed", range(5))
def test_resolve_random_documents(seed):
  rng = random.Random(1000 + seed)
  for _ in range(100):
    doc = random_document(rng, 4)
    value, path = doc, []
    while isinstance(value, (list, dict)) and value and rng.random() < 0.8:
      key = rng.randrange(len(value)) if isinstance(value, list) else rng.choice(sorted(value))
      path.append(str(key))
      value = value[key]
    assert resolve(doc, "".join("/" + reference_escape(t) for t in path)) is value


@pytest.mark.parametrize("pointer", ["a", "/~2", "/x~", "/~9~0", "/a/~"])
def test_malformed_pointers(pointer):
  with pytest.raises(JsonPointerError):
    parse_pointer(pointer)


@pytest.mark.parametrize("pointer", ["/-1", "/01", "/00", "/3", "/-", "/1.0", "/-0"])
def test_bad_array_indexes(pointer):
  with pytest.raises(JsonPointerError):
    resolve(["a", "b", "c"], pointer)


def test_missing_member():
  with pytest.raises(JsonPointerError):
    resolve({"a": {"b": 1}}, "/a/c")
  with pytest.raises(JsonPointerError):
    resolve({"a": 1}, "/a/b")


# -- equality of the test operation -----------------------------------------------------------

EQUAL = [(1, 1), ("a", "a"), (None, None), (True, True), ([1, "x"], [1, "x"]), ({"a": 1, "b": [2]}, {"b": [2], "a": 1}),
         ([], []), ({}, {})]
NOT_EQUAL = [(True, 1), (False, 0), ([1, True], [1, 1]), ([False], [0]), (None, False), ("1", 1), ([1, 2], [2, 1]),
             ({"a": 1}, {"a": 1, "b": 2}), ({"a": None}, {}), ([1], 1)]


@pytest.mark.parametrize("a, b", EQUAL)
def test_json_equal(a, b):
  assert json_equal(a, b) is True


@pytest.mark.parametrize("a, b", NOT_EQUAL)
def test_json_not_equal(a, b):
  assert json_equal(a, b) is False
