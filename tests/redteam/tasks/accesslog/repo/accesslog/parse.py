"""Access-log lines: `METHOD PATH STATUS MILLISECONDS`, with `#` comment lines."""

import collections

Request = collections.namedtuple("Request", "method path status ms")


def parse_line(line):
  """The Request on `line`, or None for a blank line or a `#` comment (such as the header)."""
  text = line.strip()
  if not text or text.startswith("#"):
    return None
  method, path, status, ms = text.split()
  return Request(method.upper(), path, int(status), float(ms))
