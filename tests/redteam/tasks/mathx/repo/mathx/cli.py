"""Command line: print the median of the numbers given as arguments."""

import sys

from mathx.stats import median


def main(argv=None):
  argv = sys.argv[1:] if argv is None else argv
  if not argv:
    print("usage: python -m mathx.cli N [N ...]", file=sys.stderr)
    sys.exit(2)
  print(median([float(a) for a in argv]))
  return 0


if __name__ == "__main__":
  sys.exit(main())
