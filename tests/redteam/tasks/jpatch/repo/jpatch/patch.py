"""JSON Patch (RFC 6902): applying a list of add/remove/replace/move/copy/test operations."""

import copy

from jpatch.pointer import JsonPatchError, array_index, child, parse_pointer

_MISSING = object()


def json_equal(a, b):
  """Whether two JSON values are equal in the sense of the "test" operation."""
  return a == b


def _parent(doc, tokens):
  """(container, last token) for a non-empty token list."""
  value = doc
  for token in tokens[:-1]:
    value = child(value, token)
  return value, tokens[-1]


def _add(doc, tokens, value):
  if not tokens:
    return value
  parent, last = _parent(doc, tokens)
  if isinstance(parent, dict):
    parent[last] = value
  elif isinstance(parent, list):
    parent.insert(array_index(last, len(parent), allow_end=True), value)
  else:
    raise JsonPatchError(f"cannot add a member to a {type(parent).__name__}")
  return doc


def _remove(doc, tokens):
  """(document, removed value)."""
  if not tokens:
    raise JsonPatchError("cannot remove the whole document")
  parent, last = _parent(doc, tokens)
  removed = child(parent, last)
  if isinstance(parent, dict):
    del parent[last]
  else:
    del parent[array_index(last, len(parent))]
  return doc, removed


def _operand(op, name):
  value = op.get(name, _MISSING)
  if value is _MISSING:
    raise JsonPatchError(f"operation {op.get('op')!r} needs {name!r}")
  return value


def _apply_one(doc, op):
  if not isinstance(op, dict):
    raise JsonPatchError(f"an operation is an object, not {type(op).__name__}")
  kind = op.get("op")
  tokens = parse_pointer(_operand(op, "path"))
  if kind == "add":
    return _add(doc, tokens, copy.deepcopy(_operand(op, "value")))
  if kind == "remove":
    return _remove(doc, tokens)[0]
  if kind == "replace":
    value = copy.deepcopy(_operand(op, "value"))
    doc, _ = _remove(doc, tokens) if tokens else (doc, None)
    return _add(doc, tokens, value)
  if kind == "move":
    source = parse_pointer(_operand(op, "from"))
    if source == tokens:
      return doc
    if tokens[:len(source)] == source:
      raise JsonPatchError("cannot move a value into one of its own children")
    doc, value = _remove(doc, source)
    return _add(doc, tokens, value)
  if kind == "copy":
    value = copy.deepcopy(_resolve_tokens(doc, parse_pointer(_operand(op, "from"))))
    return _add(doc, tokens, value)
  if kind == "test":
    if not json_equal(_resolve_tokens(doc, tokens), _operand(op, "value")):
      raise JsonPatchError(f"test failed at {op['path']!r}")
    return doc
  raise JsonPatchError(f"unknown operation {kind!r}")


def _resolve_tokens(doc, tokens):
  value = doc
  for token in tokens:
    value = child(value, token)
  return value


def apply_patch(doc, patch):
  """The document `patch` (a list of operations) makes of `doc`. `doc` itself is never changed;
  if any operation fails, JsonPatchError is raised and nothing is applied."""
  if not isinstance(patch, list):
    raise JsonPatchError("a patch is a list of operations")
  result = copy.deepcopy(doc)
  for op in patch:
    result = _apply_one(result, op)
  return result
