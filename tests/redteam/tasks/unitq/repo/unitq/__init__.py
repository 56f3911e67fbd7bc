"""Physical quantities with exact values: units with dimension exponents, unit expressions such as
'kg*m/s^2', exact conversion over fractions.Fraction, and arithmetic that checks dimensions."""

from unitq.errors import DimensionError, UnitError
from unitq.parse import parse_unit
from unitq.quantity import Quantity, Unit

__all__ = ["DimensionError", "Quantity", "Unit", "UnitError", "parse_unit"]
