"""Reads a one-file unified diff into hunks."""

import re
from dataclasses import dataclass, field

_HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_PREAMBLE = ("--- ", "+++ ", "diff ", "index ", "Index: ", "===")


class PatchError(ValueError):
  """A malformed diff, or one that does not fit the text it is applied to."""


@dataclass
class Hunk:
  """One @@ block. `lines` holds (tag, text) pairs, tag one of ' ', '-', '+'; each text keeps its
  line ending, and a line the diff marks '\\ No newline at end of file' has none."""

  old_start: int
  old_count: int
  new_start: int
  new_count: int
  lines: list = field(default_factory=list)

  def old_lines(self):
    return [text for tag, text in self.lines if tag != "+"]

  def new_lines(self):
    return [text for tag, text in self.lines if tag != "-"]


def parse_patch(diff):
  """The hunks of `diff`, in order. File headers (---, +++, diff, index) are skipped; a count
  left out of a hunk header (@@ -3 +3 @@) is 1."""
  hunks = []
  hunk = None
  old_left = new_left = 0
  for number, line in enumerate(re.findall(r"[^\n]*\n|[^\n]+", diff), 1):
    if line.startswith("\\"):
      continue
    if old_left or new_left:
      tag, text = line[:1], line[1:]
      if line in ("\n", "\r\n"):  # an empty context line whose leading space was stripped
        tag, text = " ", line
      if tag not in " -+":
        raise PatchError(f"line {number}: {line!r} inside a hunk")
      old_left -= tag != "+"
      new_left -= tag != "-"
      if old_left < 0 or new_left < 0:
        raise PatchError(f"line {number}: hunk longer than its header says")
      hunk.lines.append((tag, text))
      continue
    m = _HEADER.match(line)
    if m:
      old_count = 1 if m[2] is None else int(m[2])
      new_count = 1 if m[4] is None else int(m[4])
      hunk = Hunk(int(m[1]), old_count, int(m[3]), new_count)
      hunks.append(hunk)
      old_left, new_left = old_count, new_count
    elif line.strip() and not line.startswith(_PREAMBLE):
      raise PatchError(f"line {number}: unexpected {line!r}")
  if old_left or new_left:
    raise PatchError("the diff ends inside a hunk")
  if not hunks:
    raise PatchError("no hunks in the diff")
  return hunks
