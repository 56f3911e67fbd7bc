"""Edits and the undo and redo stacks."""

from collections import namedtuple


class Edit(namedtuple("Edit", "start old new")):
  """Replace `old` (the text at `start`) by `new`."""

  def inverse(self):
    return Edit(self.start, self.new, self.old)


class History:
  """Unlimited undo and redo. A new edit empties the redo stack."""

  def __init__(self):
    self._undo = []
    self._redo = []

  def record(self, edit):
    self._undo.append(edit)

  def undo(self):
    """The edit to revert (moved to the redo stack), or None."""
    if not self._undo:
      return None
    edit = self._undo.pop()
    self._redo.append(edit)
    return edit

  def redo(self):
    """The edit to apply again (moved back to the undo stack), or None."""
    if not self._redo:
      return None
    edit = self._redo.pop()
    self._undo.append(edit)
    return edit

  @property
  def can_undo(self):
    return bool(self._undo)

  @property
  def can_redo(self):
    return bool(self._redo)
