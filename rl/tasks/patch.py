"""Unified diffs for reference solutions: making them from file states and applying them.

Pure Python (no `patch`/`git` binary), so a reference state can be built anywhere. Handles
several files per patch, new and deleted files, and "\\ No newline at end of file" markers.
Byte-exact: lines split on "\n" only (a bare CR or a CRLF stays inside its line), files are
read and written as bytes, and bytes that are not UTF-8 (latin-1 text, binary data) travel as
surrogate escapes, so a file the patch touches keeps every byte it does not change.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import pathlib
import re

_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_NO_NEWLINE = "\\ No newline at end of file"


ENCODING_ERRORS = "surrogateescape"  # undecodable bytes survive a str round trip


def decode_bytes(data: bytes) -> str:
  """File bytes as str without loss (invalid UTF-8 bytes become surrogate escapes)."""
  return data.decode("utf-8", ENCODING_ERRORS)


def encode_text(text: str) -> bytes:
  """The inverse of `decode_bytes`."""
  return text.encode("utf-8", ENCODING_ERRORS)


def split_lines(text: str) -> list[str]:
  """Lines with their endings, split on "\n" only (str.splitlines also splits on CR, FF ...)."""
  lines = text.split("\n")
  out = [line + "\n" for line in lines[:-1]]
  if lines[-1]:
    out.append(lines[-1])
  return out


class PatchError(ValueError):
  """A patch is malformed or does not apply; the message names the file and hunk."""


@dataclasses.dataclass
class Hunk:
  old_start: int
  old_lines: list[str]  # with their line endings
  new_lines: list[str]


@dataclasses.dataclass
class FilePatch:
  old_path: str | None  # None for a new file
  new_path: str | None  # None for a deleted file
  hunks: list[Hunk]


def _strip_prefix(path: str) -> str | None:
  path = path.split("\t")[0].strip()
  if path == "/dev/null":
    return None
  if path.startswith(("a/", "b/")):
    path = path[2:]
  return path


def _check_path(path: str) -> str:
  p = pathlib.PurePosixPath(path)
  if p.is_absolute() or ".." in p.parts or not path:
    raise PatchError(f"patch path {path!r} escapes the workspace")
  return str(p)


def make_patch(before: dict[str, str], after: dict[str, str]) -> str:
  """A unified diff (a/ b/ prefixes) turning the files `before` into `after` (path -> text)."""
  out: list[str] = []
  for path in sorted(set(before) | set(after)):
    old, new = before.get(path), after.get(path)
    if old == new:
      continue
    old_lines = split_lines(old or "")
    new_lines = split_lines(new or "")
    header_old = "/dev/null" if old is None else f"a/{path}"
    header_new = "/dev/null" if new is None else f"b/{path}"
    out.append(f"diff --git a/{path} b/{path}\n")
    diff = list(difflib.unified_diff(old_lines, new_lines, header_old, header_new, n=3))
    for line in diff:
      if line.endswith("\n"):
        out.append(line)
      else:  # last line of a file without a trailing newline
        out.append(line + "\n" + _NO_NEWLINE + "\n")
  return "".join(out)


def read_tree(directory: str | os.PathLike) -> dict[str, str]:
  """Files under `directory` as {relative posix path: content}, every byte kept (decode_bytes)."""
  return {path: decode_bytes(data) for path, data in read_tree_bytes(directory).items()}


def read_tree_bytes(directory: str | os.PathLike) -> dict[str, bytes]:
  """Regular files under `directory` as {relative posix path: bytes} (symlinks, __pycache__ skipped)."""
  directory = pathlib.Path(directory)
  files = {}
  for p in sorted(directory.rglob("*")):
    if p.is_file() and not p.is_symlink() and "__pycache__" not in p.parts:
      files[p.relative_to(directory).as_posix()] = p.read_bytes()
  return files


def make_patch_dirs(before_dir: str | os.PathLike, after_dir: str | os.PathLike) -> str:
  return make_patch(read_tree(before_dir), read_tree(after_dir))


def parse_patch(text: str) -> list[FilePatch]:
  """Parses a unified diff (plain or git-style) into file patches."""
  lines = split_lines(text)
  patches: list[FilePatch] = []
  i = 0
  while i < len(lines):
    line = lines[i]
    if not line.startswith("--- "):
      i += 1
      continue
    if i + 1 >= len(lines) or not lines[i + 1].startswith("+++ "):
      raise PatchError(f"line {i + 1}: '---' header without a '+++' line")
    old_path, new_path = _strip_prefix(line[4:]), _strip_prefix(lines[i + 1][4:])
    if old_path is None and new_path is None:
      raise PatchError(f"line {i + 1}: both sides are /dev/null")
    fp = FilePatch(old_path and _check_path(old_path), new_path and _check_path(new_path), [])
    i += 2
    while i < len(lines) and lines[i].startswith("@@"):
      m = _HUNK_RE.match(lines[i])
      if not m:
        raise PatchError(f"line {i + 1}: bad hunk header {lines[i].strip()!r}")
      old_count = int(m.group(2)) if m.group(2) is not None else 1
      new_count = int(m.group(4)) if m.group(4) is not None else 1
      hunk = Hunk(int(m.group(1)), [], [])
      i += 1
      seen_old = seen_new = 0
      while i < len(lines) and (seen_old < old_count or seen_new < new_count):
        body = lines[i]
        tag, content = body[:1], body[1:]
        if body.startswith("\\"):
          i += 1
          continue
        if tag == " " or body in ("\n", "\r\n"):  # some tools drop the space of empty context
          content = content if tag == " " else "\n"
          hunk.old_lines.append(content)
          hunk.new_lines.append(content)
          seen_old += 1
          seen_new += 1
        elif tag == "-":
          hunk.old_lines.append(content)
          seen_old += 1
        elif tag == "+":
          hunk.new_lines.append(content)
          seen_new += 1
        else:
          raise PatchError(f"line {i + 1}: unexpected line in hunk of {new_path or old_path}: {body[:40]!r}")
        i += 1
        if i < len(lines) and lines[i].startswith(_NO_NEWLINE[:10]):
          # The marker applies to the line just read: it has no trailing newline.
          target = hunk.new_lines if tag == "+" else hunk.old_lines
          if tag == " ":
            hunk.new_lines[-1] = _drop_newline(hunk.new_lines[-1])
          target[-1] = _drop_newline(target[-1])
          i += 1
      if seen_old != old_count or seen_new != new_count:
        raise PatchError(f"hunk at line {m.group(0)} of {new_path or old_path} is truncated")
      fp.hunks.append(hunk)
    patches.append(fp)
  if not patches and text.strip():
    raise PatchError("no file headers ('--- a/...', '+++ b/...') found in patch")
  return patches


def _drop_newline(line: str) -> str:
  """The line without the one newline the diff added after a file's unterminated last line."""
  return line[:-1] if line.endswith("\n") else line


def _apply_hunks(content: str, hunks: list[Hunk], path: str) -> str:
  lines = split_lines(content)
  offset = 0
  for n, hunk in enumerate(hunks, 1):
    start = max(hunk.old_start - 1, 0) + offset
    if not hunk.old_lines:  # pure insertion (new file or at a position)
      pos = hunk.old_start if hunk.old_start > 0 else 0
      pos += offset
      lines[pos:pos] = hunk.new_lines
      offset += len(hunk.new_lines)
      continue
    found = None
    # Exact position first, then search outwards (the file may have shifted a little).
    for delta in range(0, len(lines) + 1):
      for cand in (start + delta, start - delta) if delta else (start,):
        if 0 <= cand <= len(lines) - len(hunk.old_lines) and lines[cand:cand + len(hunk.old_lines)] == hunk.old_lines:
          found = cand
          break
      if found is not None:
        break
    if found is None:
      raise PatchError(f"hunk {n} of {path} does not apply (context not found near line {hunk.old_start})")
    lines[found:found + len(hunk.old_lines)] = hunk.new_lines
    offset = found - (hunk.old_start - 1) + len(hunk.new_lines) - len(hunk.old_lines)
  return "".join(lines)


def apply_patch_to_files(files: dict[str, str], patch_text: str) -> dict[str, str]:
  """Applies a patch to an in-memory tree {path: text}; returns the new tree."""
  result = dict(files)
  for fp in parse_patch(patch_text):
    if fp.old_path is None:
      if fp.new_path in result and result[fp.new_path]:
        raise PatchError(f"patch creates {fp.new_path}, which already exists")
      result[fp.new_path] = _apply_hunks("", fp.hunks, fp.new_path)
      continue
    if fp.old_path not in result:
      raise PatchError(f"patch modifies {fp.old_path}, which does not exist")
    new_content = _apply_hunks(result[fp.old_path], fp.hunks, fp.old_path)
    if fp.new_path is None:
      del result[fp.old_path]
    else:
      if fp.new_path != fp.old_path:
        del result[fp.old_path]
      result[fp.new_path] = new_content
  return result


def apply_patch(workspace_dir: str | os.PathLike, patch_text: str) -> list[str]:
  """Applies a unified diff to the files under `workspace_dir` in place; returns changed paths.

  All hunks are checked before anything is written, so a failing patch leaves the
  workspace untouched.
  """
  workspace = pathlib.Path(workspace_dir)
  patches = parse_patch(patch_text)
  touched = sorted({p for fp in patches for p in (fp.old_path, fp.new_path) if p is not None})
  before = {}
  for path in touched:
    f = workspace / path
    if f.is_file():
      before[path] = decode_bytes(f.read_bytes())
  after = apply_patch_to_files(before, patch_text)
  for path in touched:
    f = workspace / path
    if path in after:
      f.parent.mkdir(parents=True, exist_ok=True)
      if before.get(path) != after[path] or not f.exists():
        f.write_bytes(encode_text(after[path]))
    elif f.exists():
      f.unlink()
  return touched
