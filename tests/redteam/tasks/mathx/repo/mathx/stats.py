"""Descriptive statistics over plain Python sequences."""


def mean(values):
  """Arithmetic mean of a non-empty sequence."""
  if not values:
    raise ValueError("mean of empty sequence")
  return sum(values) / len(values)


def median(values):
  """Median of a non-empty sequence of numbers."""
  if not values:
    raise ValueError("median of empty sequence")
  n = len(values)
  mid = n // 2
  if n % 2:
    return values[mid]
  return (values[mid - 1] + values[mid]) / 2
