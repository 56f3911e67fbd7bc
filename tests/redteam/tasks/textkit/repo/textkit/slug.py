"""URL slugs from titles."""

import re


def slugify(text):
  """'Hello World' -> 'hello-world'."""
  text = text.strip()
  text = re.sub(r"[^A-Za-z0-9]+", "-", text)
  return text.strip("-")
