"""The buffer: its text, edits by offset, undo and redo, and positions."""

from textbuf.history import Edit, History
from textbuf.lines import LineIndex


class Buffer:

  def __init__(self, text=""):
    if not isinstance(text, str):
      raise TypeError("text must be a str")
    self._text = text
    self._history = History()
    self._index = None

  @property
  def text(self):
    return self._text

  def __len__(self):
    return len(self._text)

  def _check(self, start, end):
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end <= len(self._text)):
      raise IndexError("bad range %r..%r for a text of %d" % (start, end, len(self._text)))

  def _apply(self, edit):
    t = self._text
    assert t[edit.start:edit.start + len(edit.old)] == edit.old
    self._text = t[:edit.start] + edit.new + t[edit.start + len(edit.old):]
    self._index = None

  def replace(self, start, end, new):
    """Replace text[start:end] by `new`; one undo step."""
    self._check(start, end)
    if not isinstance(new, str):
      raise TypeError("new text must be a str")
    if start == end and not new:
      return
    self._text = self._text[:start] + new + self._text[end:]
    self._index = None
    edit = Edit(start, self._text[start:end], new)
    self._history.record(edit)

  def insert(self, offset, text):
    self.replace(offset, offset, text)

  def delete(self, start, end):
    self.replace(start, end, "")

  def undo(self):
    """Revert the last edit; False when there is none."""
    edit = self._history.undo()
    if edit is None:
      return False
    self._apply(edit.inverse())
    return True

  def redo(self):
    """Apply the last undone edit again; False when there is none."""
    edit = self._history.redo()
    if edit is None:
      return False
    self._apply(edit)
    return True

  @property
  def lines(self):
    if self._index is None:
      self._index = LineIndex(self._text)
    return self._index

  @property
  def line_count(self):
    return self.lines.line_count

  def line(self, n):
    start, end = self.lines.line_span(n)
    return self._text[start:end]

  def offset_to_pos(self, offset):
    return self.lines.offset_to_pos(offset)

  def pos_to_offset(self, pos):
    return self.lines.pos_to_offset(pos)
