"""The error a malformed template raises."""


class TemplateSyntaxError(ValueError):
  """A template that cannot be parsed: an unclosed tag or block, an unknown filter, a bad literal."""
