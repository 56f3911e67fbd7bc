"""Command line: python -m csvtool summarize FILE [--column NAME]."""

import argparse
import csv
import sys

from csvtool import stats


def read_column(path, column):
  """The values of `column` in the CSV file at `path` (its first line is the header)."""
  with open(path, newline="", encoding="utf-8") as fh:
    rows = [row for row in csv.reader(fh) if row]
  if not rows:
    return []
  header = [name.strip() for name in rows[0]]
  if column not in header:
    raise KeyError(column)
  idx = header.index(column)
  return [stats.parse_amount(row[idx]) if idx < len(row) else 0.0 for row in rows]


def build_parser():
  parser = argparse.ArgumentParser(prog="csvtool", description=__doc__)
  sub = parser.add_subparsers(dest="command", required=True)
  summ = sub.add_parser("summarize", help="rows, total and mean of one column")
  summ.add_argument("file")
  summ.add_argument("--column", default="amount")
  return parser


def main(argv=None):
  args = build_parser().parse_args(argv)
  if args.command == "summarize":
    try:
      values = read_column(args.file, args.column)
    except OSError as e:
      print(f"csvtool: cannot read {args.file}: {e.strerror}", file=sys.stderr)
      return 2
    except KeyError:
      print(f"csvtool: no column {args.column!r} in {args.file}", file=sys.stderr)
      return 2
    print(stats.format_line(*stats.summarize(values)))
  return 0
