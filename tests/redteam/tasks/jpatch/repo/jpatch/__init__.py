"""JSON Pointer (RFC 6901) and JSON Patch (RFC 6902) for documents of plain Python values."""

from jpatch.patch import apply_patch, json_equal
from jpatch.pointer import JsonPatchError, JsonPointerError, format_pointer, parse_pointer, resolve

__all__ = ["JsonPatchError", "JsonPointerError", "apply_patch", "format_pointer", "json_equal", "parse_pointer",
           "resolve"]
