import pytest

from jpatch import JsonPatchError, apply_patch, parse_pointer, resolve


def test_resolve_members_and_items():
  doc = {"foo": ["bar", "baz"], "": 0, "a/b": 1}
  assert resolve(doc, "/foo/1") == "baz"
  assert resolve(doc, "/") == 0
  assert resolve(doc, "/a~1b") == 1


def test_parse_pointer():
  assert parse_pointer("") == []
  assert parse_pointer("/a/0") == ["a", "0"]


def test_add_and_remove():
  doc = {"a": [1, 2]}
  assert apply_patch(doc, [{"op": "add", "path": "/a/-", "value": 3}]) == {"a": [1, 2, 3]}
  assert apply_patch(doc, [{"op": "remove", "path": "/a/0"}]) == {"a": [2]}
  assert doc == {"a": [1, 2]}


def test_failed_test_operation():
  with pytest.raises(JsonPatchError):
    apply_patch({"a": "x"}, [{"op": "test", "path": "/a", "value": "y"}])
