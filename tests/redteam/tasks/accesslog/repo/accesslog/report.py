"""Summaries of an access-log file."""

from accesslog.parse import parse_line


def summarize(path):
  """A dict for the log at `path`: requests, errors (status 400 and above), error_rate (0 to 1),
  mean_ms (mean latency) and by_method ({method: number of requests})."""
  with open(path, encoding="utf-8") as fh:
    lines = fh.read().splitlines()
  requests = [r for r in map(parse_line, lines) if r is not None]
  n = len(lines)
  errors = sum(1 for r in requests if r.status >= 400)
  by_method = {}
  for r in requests:
    by_method[r.method] = by_method.get(r.method, 0) + 1
  return {
      "requests": n,
      "errors": errors,
      "error_rate": errors / n if n else 0.0,
      "mean_ms": sum(r.ms for r in requests) / n if n else 0.0,
      "by_method": by_method,
  }


def print_report(path):
  """Prints the summary of the log at `path`."""
  s = summarize(path)
  print(f"requests: {s['requests']}")
  print(f"errors: {s['errors']} ({s['error_rate']:.1%})")
  print(f"mean: {s['mean_ms']:.1f} ms")
  for method in sorted(s["by_method"]):
    print(f"  {method} {s['by_method'][method]}")
