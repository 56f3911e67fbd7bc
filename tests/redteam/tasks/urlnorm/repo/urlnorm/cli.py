"""The command line: URLs on stdin, one a line; their normal forms on stdout."""

import argparse
import sys

from urlnorm.core import normalize


def main(argv=None, stdin=None, stdout=None, stderr=None):
  """Runs the command line; returns its exit status."""
  stdin = sys.stdin if stdin is None else stdin
  stdout = sys.stdout if stdout is None else stdout
  stderr = sys.stderr if stderr is None else stderr
  parser = argparse.ArgumentParser(prog="urlnorm", description="Normalise URLs read from stdin, one a line.")
  parser.add_argument("--check", action="store_true",
                      help="print only the lines that are not in normal form; exit 1 if there are any")
  args = parser.parse_args(argv)
  status = 0
  for number, line in enumerate(stdin, 1):
    url = line.strip()
    if not url:
      continue
    try:
      normal = normalize(url)
    except ValueError as e:
      print(f"urlnorm: line {number}: {e}", file=stderr)
      status = 2
      continue
    if not args.check:
      print(normal, file=stdout)
    elif normal != url:
      print(url, file=stdout)
      status = status or 1
  return status
