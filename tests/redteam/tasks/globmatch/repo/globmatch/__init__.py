"""Glob patterns for slash-separated paths: *, **, ?, [...] classes, {a,b} braces, backslash escapes."""

from globmatch.braces import expand_braces
from globmatch.matcher import compile, filter_paths, match, translate

__all__ = ["compile", "expand_braces", "filter_paths", "match", "translate"]
