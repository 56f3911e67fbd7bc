"""A text buffer: insert, delete and replace by offset, unlimited undo and redo, and mapping between
offsets and (line, column) positions."""

from textbuf.buffer import Buffer
from textbuf.history import Edit, History
from textbuf.lines import LineIndex, Position

__all__ = ["Buffer", "Edit", "History", "LineIndex", "Position"]
