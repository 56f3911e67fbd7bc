"""Applies one-file unified diffs to text."""

from patchkit.apply import apply_patch, split_lines
from patchkit.parse import Hunk, PatchError, parse_patch

__all__ = ["Hunk", "PatchError", "apply_patch", "parse_patch", "split_lines"]
