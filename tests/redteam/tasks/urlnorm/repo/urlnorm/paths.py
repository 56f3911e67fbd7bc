"""Removing "." and ".." segments from a path."""


def remove_dot_segments(path):
  """`path` without its "." and ".." segments (RFC 3986, section 5.2.4)."""
  absolute = path.startswith("/")
  out = []
  for segment in path.split("/")[1 if absolute else 0:]:
    if segment == ".":
      continue
    if segment == "..":
      if out:
        out.pop()
      continue
    out.append(segment)
  return ("/" if absolute else "") + "/".join(out)
