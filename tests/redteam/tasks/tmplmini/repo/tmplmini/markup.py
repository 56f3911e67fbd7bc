"""Text that is safe to put into HTML as it is, and the escaping of everything else."""


class Markup(str):
  """A str that autoescaping leaves alone (already escaped, or trusted HTML)."""

  __slots__ = ()

  def __repr__(self):
    return f"Markup({str.__repr__(self)})"


def escape(text):
  """`text` (any value, through str()) with the HTML special characters replaced by entities,
  as Markup."""
  text = str(text)
  return Markup(text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))
