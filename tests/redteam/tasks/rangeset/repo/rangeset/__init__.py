"""Sets of integers stored as sorted, disjoint half-open ranges."""

from rangeset.ranges import RangeSet

__all__ = ["RangeSet"]
