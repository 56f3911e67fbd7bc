"""Parsing and summarising column values."""


def parse_amount(cell):
  """'$1,200.50' -> 1200.5; a blank or non-numeric cell counts as 0.0."""
  text = cell.strip().replace(",", "").replace("$", "")
  try:
    return float(text)
  except ValueError:
    return 0.0


def summarize(values):
  """(rows, total, mean) of a list of numbers; the mean of no rows is 0."""
  rows = len(values)
  total = sum(values)
  return rows, total, (total / rows if rows else 0.0)


def format_number(x):
  """At most four decimals, no trailing zeros: 12.5, 4.1667, 3."""
  text = f"{x:.4f}".rstrip("0").rstrip(".")
  return "0" if text in ("", "-0") else text


def format_line(rows, total, mean):
  return f"rows={rows} total={format_number(total)} mean={format_number(mean)}"
