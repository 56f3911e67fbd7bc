"""Offsets and (line, column) positions. Lines are separated by '\n' only; every other character,
'\r' included, belongs to its line."""

import bisect
from collections import namedtuple

Position = namedtuple("Position", "line col")


class LineIndex:
  """The start offset of every line of a text."""

  def __init__(self, text):
    self.length = len(text)
    self.starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]

  @property
  def line_count(self):
    return len(self.starts)

  def line_span(self, line):
    """(start, end) offsets of a line, its '\n' excluded."""
    if not 0 <= line < len(self.starts):
      raise IndexError("no line %d" % line)
    end = self.starts[line + 1] - 1 if line + 1 < len(self.starts) else self.length
    return self.starts[line], end

  def offset_to_pos(self, offset):
    if not 0 <= offset <= self.length:
      raise IndexError("offset %d outside 0..%d" % (offset, self.length))
    line = max(bisect.bisect_left(self.starts, offset) - 1, 0)
    return Position(line, offset - self.starts[line])

  def pos_to_offset(self, pos):
    line, col = pos
    start, end = self.line_span(line)
    if not 0 <= col <= end - start:
      raise IndexError("column %d outside line %d" % (col, line))
    return start + col
