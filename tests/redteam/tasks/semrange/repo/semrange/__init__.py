"""Semantic versions and npm-style version ranges."""

from semrange.version import Version, compare, parse
from semrange.ranges import Range, max_satisfying, satisfies

__all__ = ["Version", "Range", "compare", "parse", "satisfies", "max_satisfying"]
