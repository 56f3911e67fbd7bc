"""The errors shellwords raises."""


class SplitError(ValueError):
  """Text that cannot be split: an unterminated quote or a trailing backslash. `pos` is the offset
  of the quote that is not closed, or of the backslash."""

  def __init__(self, message, pos):
    super().__init__("%s at offset %d" % (message, pos))
    self.pos = pos
