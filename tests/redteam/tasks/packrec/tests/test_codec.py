import random

import pytest

from packrec import CodecError, Schema, decode_uvarint, encode_uvarint, unzigzag, zigzag


def reference_uvarint(n):
  """LEB128 the slow way: the binary digits, cut into groups of seven from the right."""
  bits = bin(n)[2:]
  groups = [bits[max(i - 7, 0):i] for i in range(len(bits), 0, -7)] or ["0"]
  out = []
  for i, group in enumerate(groups):
    more = "1" if i < len(groups) - 1 else "0"
    out.append(int(more + group.rjust(7, "0"), 2))
  return bytes(out)


def reference_zigzag(n):
  """Position of n in the sequence 0, -1, 1, -2, 2, ..."""
  return 2 * n if n >= 0 else -2 * n - 1


def reference_pack(fields, record):
  out = b""
  for name, kind in fields:
    value = record[name]
    if kind == "uint":
      out += reference_uvarint(value)
    elif kind == "sint":
      out += reference_uvarint(reference_zigzag(value))
    elif kind == "bool":
      out += bytes([int(value)])
    else:
      raw = value.encode("utf-8") if kind == "str" else value
      out += reference_uvarint(len(raw)) + raw
  return out


CHARS = "abcxyz019 -_\u00e9\u00fc\u00df\u0394\u20ac\u65e5\u672c\U0001f600\U0001f680"
INT_EDGES = [0, 1, -1, 63, -64, 64, -65, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, -(2 ** 31) - 1, 2 ** 32,
             -(2 ** 32), 2 ** 53 + 1, 2 ** 63 - 1, -(2 ** 63)]


def random_value(rng, kind):
  if kind == "uint":
    return rng.choice([rng.randrange(128), rng.randrange(2 ** 64), rng.choice([127, 128, 16383, 16384])])
  if kind == "sint":
    return rng.choice([rng.randint(-300, 300), rng.randint(-(2 ** 63), 2 ** 63 - 1), rng.choice(INT_EDGES)])
  if kind == "bool":
    return rng.random() < 0.5
  if kind == "str":
    return "".join(rng.choice(CHARS) for _ in range(rng.randint(0, 12)))
  return bytes(rng.randrange(256) for _ in range(rng.randint(0, 12)))


UVARINT_TABLE = [(0, b"\x00"), (1, b"\x01"), (127, b"\x7f"), (128, b"\x80\x01"), (300, b"\xac\x02"),
                 (16384, b"\x80\x80\x01"), (2 ** 32, b"\x80\x80\x80\x80\x10"),
                 (2 ** 64 - 1, b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01")]


@pytest.mark.parametrize("n,encoded", UVARINT_TABLE)
def test_uvarint_golden(n, encoded):
  assert encode_uvarint(n) == encoded
  assert decode_uvarint(b"\x99" + encoded + b"\x00", 1) == (n, 1 + len(encoded))


ZIGZAG_TABLE = [(0, 0), (-1, 1), (1, 2), (-2, 3), (2147483647, 4294967294), (-2147483648, 4294967295),
                (2147483648, 4294967296), (-2147483649, 4294967297), (2 ** 40, 2 ** 41), (-(2 ** 40), 2 ** 41 - 1),
                (2 ** 63 - 1, 2 ** 64 - 2), (-(2 ** 63), 2 ** 64 - 1)]


@pytest.mark.parametrize("n,z", ZIGZAG_TABLE)
def test_zigzag_golden(n, z):
  assert zigzag(n) == z
  assert unzigzag(z) == n


def test_golden_record():
  schema = Schema([("id", "uint"), ("delta", "sint"), ("name", "str"), ("ok", "bool"), ("blob", "bytes")])
  record = {"id": 300, "delta": -3, "name": "caf\u00e9", "ok": False, "blob": b"\x00\xff"}
  assert schema.pack(record) == b"\xac\x02\x05\x05caf\xc3\xa9\x00\x02\x00\xff"
  assert schema.unpack(schema.pack(record)) == record


def test_unicode_strings_round_trip():
  schema = Schema([("a", "str"), ("b", "str"), ("n", "sint")])
  record = {"a": "\u65e5\u672c\u8a9e", "b": "\U0001f600!", "n": -(2 ** 35)}
  data = schema.pack(record)
  assert data[:1] == b"\x09" and data[10:11] == b"\x05"
  assert schema.unpack(data) == record


def test_errors():
  schema = Schema([("a", "uint"), ("s", "str")])
  with pytest.raises(CodecError):
    schema.pack({"a": 1})
  with pytest.raises(CodecError):
    schema.unpack(b"\x01\x05ab")
  with pytest.raises(CodecError):
    schema.unpack(b"\x01\x01a\x00")
  with pytest.raises(CodecError):
    decode_uvarint(b"\x80\x80")


@pytest.mark.parametrize("seed", range(8))
def test_random_records_against_reference(seed):
  rng = random.Random(seed)
  kinds = ["uint", "sint", "bool", "str", "bytes"]
  fields = [(f"f{i}", rng.choice(kinds)) for i in range(rng.randint(1, 7))]
  schema = Schema(fields)
  records = [{name: random_value(rng, kind) for name, kind in fields} for _ in range(40)]
  for record in records:
    assert schema.pack(record) == reference_pack(fields, record), record
    assert schema.unpack(schema.pack(record)) == record
  packed = schema.pack_many(records)
  assert packed == reference_uvarint(len(records)) + b"".join(reference_pack(fields, r) for r in records)
  assert schema.unpack_many(packed) == records


@pytest.mark.parametrize("seed", range(4))
def test_random_zigzag_round_trip(seed):
  rng = random.Random(50 + seed)
  for _ in range(500):
    n = rng.randint(-(2 ** 63), 2 ** 63 - 1) >> rng.randrange(64)
    assert zigzag(n) == reference_zigzag(n), n
    assert unzigzag(zigzag(n)) == n
    assert decode_uvarint(encode_uvarint(zigzag(n))) == (reference_zigzag(n), len(reference_uvarint(reference_zigzag(n))))
