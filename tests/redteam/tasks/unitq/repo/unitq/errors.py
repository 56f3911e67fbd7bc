"""The errors unitq raises."""


class UnitError(ValueError):
  """A unit expression or symbol that cannot be read."""


class DimensionError(ValueError):
  """An operation on quantities whose dimensions do not fit."""
