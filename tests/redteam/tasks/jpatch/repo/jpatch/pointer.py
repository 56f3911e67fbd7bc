"""JSON Pointers (RFC 6901): parsing and formatting them, and finding the value one names."""


class JsonPatchError(ValueError):
  """A patch that cannot be applied: a bad operation, a missing target or a failed test."""


class JsonPointerError(JsonPatchError):
  """A malformed pointer, or one that names no value in the document."""


def unescape(token):
  """A reference token as written in a pointer -> the member name it stands for."""
  return token.replace("~0", "~").replace("~1", "/")


def escape(name):
  """A member name -> the reference token that stands for it in a pointer."""
  return name.replace("/", "~1").replace("~", "~0")


def parse_pointer(pointer):
  """The list of member names (str) a pointer is made of: "" is [], "/a~1b/0" is ["a/b", "0"]."""
  if not isinstance(pointer, str):
    raise JsonPointerError(f"a pointer is a string, not {type(pointer).__name__}")
  if pointer == "":
    return []
  if not pointer.startswith("/"):
    raise JsonPointerError(f"a pointer starts with '/': {pointer!r}")
  return [unescape(token) for token in pointer[1:].split("/")]


def format_pointer(tokens):
  """The pointer for a list of member names and array indexes (the inverse of parse_pointer)."""
  return "".join("/" + escape(str(token)) for token in tokens)


def array_index(token, length, allow_end=False):
  """The index that `token` names in an array of `length` items. With allow_end (for add), "-"
  and `length` itself name the position after the last item."""
  if token == "-" and allow_end:
    return length
  try:
    index = int(token)
  except ValueError:
    raise JsonPointerError(f"not an array index: {token!r}") from None
  if index > length or (index == length and not allow_end):
    raise JsonPointerError(f"array index {token} is out of range (length {length})")
  return index


def child(value, token):
  """The member or item `token` names in `value`."""
  if isinstance(value, dict):
    if token not in value:
      raise JsonPointerError(f"no member {token!r}")
    return value[token]
  if isinstance(value, list):
    return value[array_index(token, len(value))]
  raise JsonPointerError(f"cannot look up {token!r} in a {type(value).__name__}")


def resolve(doc, pointer):
  """The value `pointer` names in `doc`."""
  value = doc
  for token in parse_pointer(pointer):
    value = child(value, token)
  return value
