"""Records in a stream of `key: value` lines; a blank line ends a record."""


def parse_records(lines):
  """Yields one dict per record of `lines` (strings, with or without newlines)."""
  record = {}
  for line in lines:
    text = line.strip()
    if not text:
      if record:
        yield record
        record = {}
      continue
    key, sep, value = text.partition(":")
    if not sep:
      raise ValueError(f"not a 'key: value' line: {line!r}")
    record[key.strip()] = value.strip()
  if record:
    yield record
