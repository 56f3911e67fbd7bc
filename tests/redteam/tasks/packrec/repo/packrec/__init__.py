"""Compact binary records: varints, zigzag integers, length-prefixed strings."""

from packrec.codec import CodecError, Schema, decode_uvarint, encode_uvarint, unzigzag, zigzag

__all__ = ["CodecError", "Schema", "decode_uvarint", "encode_uvarint", "unzigzag", "zigzag"]
