"""Fixed-size chunks of an iterable, produced lazily."""

DEFAULT_SIZE = 100


def chunked(iterable, size=None):
  """Yields lists of `size` consecutive items of `iterable` (DEFAULT_SIZE when None); the last
  list holds what is left over and may be shorter. Reads the input only as far as needed."""
  if size is None:
    size = DEFAULT_SIZE
  if size < 1:
    raise ValueError(f"chunk size must be at least 1: {size}")
  chunk = []
  for item in iterable:
    chunk.append(item)
    if len(chunk) == size:
      yield chunk
      chunk = []


def flatten(chunks):
  """The items of every chunk in `chunks`, in order."""
  for chunk in chunks:
    yield from chunk
