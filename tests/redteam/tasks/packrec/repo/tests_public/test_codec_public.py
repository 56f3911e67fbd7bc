import pytest

from packrec import CodecError, Schema, decode_uvarint, encode_uvarint, unzigzag, zigzag


def test_uvarint():
  assert encode_uvarint(0) == b"\x00"
  assert encode_uvarint(300) == b"\xac\x02"
  assert decode_uvarint(b"\xac\x02") == (300, 2)


def test_small_zigzag():
  assert [zigzag(n) for n in (0, -1, 1, -2, 2)] == [0, 1, 2, 3, 4]
  assert unzigzag(3) == -2


def test_ascii_record():
  schema = Schema([("id", "uint"), ("name", "str"), ("ok", "bool")])
  record = {"id": 5, "name": "abc", "ok": True}
  assert schema.pack(record) == b"\x05\x03abc\x01"
  assert schema.unpack(schema.pack(record)) == record


def test_negative_uint():
  with pytest.raises(CodecError):
    encode_uvarint(-1)
