"""A least-recently-used cache bounded by size and by time, with an injectable clock."""

from lrucache.cache import TTLCache
from lrucache.memo import memoize

__all__ = ["TTLCache", "memoize"]
