"""Varints (unsigned LEB128), zigzag codes for signed integers and schema-driven records."""


class CodecError(ValueError):
  """A value that does not fit its field, or bytes that are not a valid encoding."""


def encode_uvarint(n):
  """The unsigned LEB128 bytes of the non-negative int `n` (7 bits a byte, low bits first)."""
  if not isinstance(n, int) or isinstance(n, bool) or n < 0:
    raise CodecError(f"not a non-negative int: {n!r}")
  out = bytearray()
  while True:
    byte = n & 0x7F
    n >>= 7
    if n:
      out.append(byte | 0x80)
    else:
      out.append(byte)
      return bytes(out)


def decode_uvarint(data, pos=0):
  """(value, position after it) of the varint at data[pos:]."""
  result = shift = 0
  while True:
    if pos >= len(data):
      raise CodecError("truncated varint")
    byte = data[pos]
    pos += 1
    result |= (byte & 0x7F) << shift
    shift += 7
    if not byte & 0x80:
      return result, pos


def zigzag(n):
  """Signed to unsigned, small magnitudes first: 0, -1, 1, -2, 2, ... -> 0, 1, 2, 3, 4, ..."""
  if not isinstance(n, int) or isinstance(n, bool):
    raise CodecError(f"not an int: {n!r}")
  return (n << 1) ^ (n >> 31)


def unzigzag(z):
  """The inverse of zigzag."""
  return (z >> 1) ^ -(z & 1)


def _encode(kind, value):
  if kind == "uint":
    return encode_uvarint(value)
  if kind == "sint":
    return encode_uvarint(zigzag(value))
  if kind == "bool":
    if not isinstance(value, bool):
      raise CodecError(f"not a bool: {value!r}")
    return b"\x01" if value else b"\x00"
  if kind == "str":
    if not isinstance(value, str):
      raise CodecError(f"not a str: {value!r}")
    return encode_uvarint(len(value)) + value.encode("utf-8")
  if not isinstance(value, (bytes, bytearray)):
    raise CodecError(f"not bytes: {value!r}")
  return encode_uvarint(len(value)) + bytes(value)


def _decode(kind, data, pos):
  if kind == "uint":
    return decode_uvarint(data, pos)
  if kind == "sint":
    z, pos = decode_uvarint(data, pos)
    return unzigzag(z), pos
  if kind == "bool":
    if pos >= len(data) or data[pos] > 1:
      raise CodecError("bad bool byte")
    return data[pos] == 1, pos + 1
  size, pos = decode_uvarint(data, pos)
  raw = bytes(data[pos:pos + size])
  if len(raw) < size:
    raise CodecError("truncated field")
  if kind == "bytes":
    return raw, pos + size
  try:
    return raw.decode("utf-8"), pos + size
  except UnicodeDecodeError as e:
    raise CodecError(f"bad UTF-8 in a str field: {e}") from None


class Schema:
  """An ordered list of (field name, field type) pairs."""

  TYPES = ("uint", "sint", "bool", "str", "bytes")

  def __init__(self, fields):
    self.fields = [(name, kind) for name, kind in fields]
    for name, kind in self.fields:
      if kind not in self.TYPES:
        raise CodecError(f"unknown field type {kind!r} for {name!r}")

  def pack(self, record):
    """The bytes of one record (a dict with every field of the schema)."""
    out = bytearray()
    for name, kind in self.fields:
      if name not in record:
        raise CodecError(f"missing field {name!r}")
      out += _encode(kind, record[name])
    return bytes(out)

  def _unpack_at(self, data, pos):
    record = {}
    for name, kind in self.fields:
      record[name], pos = _decode(kind, data, pos)
    return record, pos

  def unpack(self, data):
    """The record packed in `data` (CodecError if bytes are left over)."""
    record, pos = self._unpack_at(data, 0)
    if pos != len(data):
      raise CodecError(f"{len(data) - pos} trailing bytes")
    return record

  def pack_many(self, records):
    records = list(records)
    return encode_uvarint(len(records)) + b"".join(self.pack(r) for r in records)

  def unpack_many(self, data):
    count, pos = decode_uvarint(data, 0)
    out = []
    for _ in range(count):
      record, pos = self._unpack_at(data, pos)
      out.append(record)
    if pos != len(data):
      raise CodecError(f"{len(data) - pos} trailing bytes")
    return out
