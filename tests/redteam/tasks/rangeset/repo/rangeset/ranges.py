"""RangeSet: a set of integers kept as sorted, disjoint, non-touching half-open ranges
[start, end), so that equal sets always have the same ranges."""

import bisect


class RangeSet:
  """A set of integers. `RangeSet([(1, 4), (6, 8)])` holds 1, 2, 3, 6 and 7."""

  def __init__(self, ranges=()):
    self._starts = []  # sorted; range i is [self._starts[i], self._ends[i])
    self._ends = []
    for start, end in ranges:
      self.add(start, end)

  @staticmethod
  def _check(start, end):
    if not isinstance(start, int) or not isinstance(end, int):
      raise TypeError(f"range bounds must be integers: {start!r}, {end!r}")
    if end < start:
      raise ValueError(f"empty range reversed: [{start}, {end})")

  def add(self, start, end):
    """Adds every integer in [start, end), merging the ranges it overlaps or touches."""
    self._check(start, end)
    if start == end:
      return
    lo = bisect.bisect_right(self._ends, start)   # the first range that ends after start
    hi = bisect.bisect_left(self._starts, end)    # past the last range that starts before end
    if lo < hi:
      start = min(start, self._starts[lo])
      end = max(end, self._ends[hi - 1])
    self._starts[lo:hi] = [start]
    self._ends[lo:hi] = [end]

  def remove(self, start, end):
    """Removes every integer in [start, end); the ranges it cuts keep their other parts."""
    self._check(start, end)
    if start == end:
      return
    lo = bisect.bisect_right(self._ends, start)   # the first range that ends after start
    hi = bisect.bisect_left(self._starts, end)    # past the last range that starts before end
    if lo >= hi:
      return
    starts, ends = [], []
    if self._starts[lo] < start:      # the first range sticks out on the left
      starts.append(self._starts[lo])
      ends.append(start)
    elif self._ends[hi - 1] > end:    # the last range sticks out on the right
      starts.append(end)
      ends.append(self._ends[hi - 1])
    self._starts[lo:hi] = starts
    self._ends[lo:hi] = ends

  def __contains__(self, value):
    i = bisect.bisect_right(self._starts, value) - 1
    return i >= 0 and value < self._ends[i]

  def __len__(self):
    """The number of integers in the set."""
    return sum(end - start for start, end in zip(self._starts, self._ends))

  def __iter__(self):
    """The ranges, as (start, end) tuples in increasing order."""
    return iter(list(zip(self._starts, self._ends)))

  def ranges(self):
    return list(self)

  def __eq__(self, other):
    if not isinstance(other, RangeSet):
      return NotImplemented
    return self._starts == other._starts and self._ends == other._ends

  def __repr__(self):
    return f"RangeSet({self.ranges()!r})"

  def copy(self):
    new = RangeSet()
    new._starts, new._ends = list(self._starts), list(self._ends)
    return new

  def __or__(self, other):
    new = self.copy()
    for start, end in other:
      new.add(start, end)
    return new

  def __sub__(self, other):
    new = self.copy()
    for start, end in other:
      new.remove(start, end)
    return new

  def __and__(self, other):
    out, mine, theirs = RangeSet(), self.ranges(), other.ranges()
    i = j = 0
    while i < len(mine) and j < len(theirs):
      start, end = max(mine[i][0], theirs[j][0]), min(mine[i][1], theirs[j][1])
      if start < end:
        out.add(start, end)
      if mine[i][1] < theirs[j][1]:
        i += 1
      else:
        j += 1
    return out
