"""Lazy helpers over iterables: fixed-size chunks and `key: value` records."""

from streamkit.chunks import chunked, flatten
from streamkit.records import parse_records

__all__ = ["chunked", "flatten", "parse_records"]
