"""apply_patch: a unified diff applied to a text, hunk by hunk, at the lines it names."""

import re

from patchkit.parse import PatchError, parse_patch


def split_lines(text):
  """`text` as lines that keep their '\\n' (the last one may lack it); only '\\n' ends a line."""
  return re.findall(r"[^\n]*\n|[^\n]+", text)


def apply_patch(text, diff):
  """The text `diff` (a one-file unified diff) turns `text` into. Each hunk must match `text`
  exactly where its header puts it; PatchError otherwise."""
  lines = split_lines(text)
  for hunk in parse_patch(diff):
    # A hunk that removes nothing (-5,0) inserts after line 5; any other starts at line 5.
    start = hunk.old_start if hunk.old_count == 0 else hunk.old_start - 1
    old = hunk.old_lines()
    if start < 0 or lines[start:start + len(old)] != old:
      raise PatchError(f"hunk @@ -{hunk.old_start},{hunk.old_count} does not match the text")
    lines[start:start + len(old)] = hunk.new_lines()
  return "".join(lines)
