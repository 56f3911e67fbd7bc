"""The unit symbols unitq knows, the SI prefixes, and resolving a (possibly prefixed) symbol."""

from fractions import Fraction as F

from unitq.errors import UnitError

BASE = ("m", "kg", "s", "A", "K", "mol", "cd")


def dims(m=0, kg=0, s=0, A=0, K=0, mol=0, cd=0):  # pylint: disable=invalid-name
  return (m, kg, s, A, K, mol, cd)


# symbol: (scale to SI, dimension exponents, takes SI prefixes)
UNITS = {
    "m": (F(1), dims(m=1), True),
    "g": (F(1, 1000), dims(kg=1), True),
    "s": (F(1), dims(s=1), True),
    "A": (F(1), dims(A=1), True),
    "K": (F(1), dims(K=1), True),
    "mol": (F(1), dims(mol=1), True),
    "cd": (F(1), dims(cd=1), True),
    "min": (F(60), dims(s=1), False),
    "h": (F(3600), dims(s=1), False),
    "d": (F(86400), dims(s=1), False),
    "a": (F(31557600), dims(s=1), True),
    "Hz": (F(1), dims(s=-1), True),
    "N": (F(1), dims(m=1, kg=1, s=-2), True),
    "Pa": (F(1), dims(m=-1, kg=1, s=-2), True),
    "J": (F(1), dims(m=2, kg=1, s=-2), True),
    "W": (F(1), dims(m=2, kg=1, s=-3), True),
    "C": (F(1), dims(s=1, A=1), True),
    "V": (F(1), dims(m=2, kg=1, s=-3, A=-1), True),
    "Ohm": (F(1), dims(m=2, kg=1, s=-3, A=-2), True),
    "L": (F(1, 1000), dims(m=3), True),
    "t": (F(1000), dims(kg=1), False),
    "ha": (F(10000), dims(m=2), False),
    "bar": (F(100000), dims(m=-1, kg=1, s=-2), True),
    "eV": (F(1602176634, 10 ** 28), dims(m=2, kg=1, s=-2), True),
    "in": (F(127, 5000), dims(m=1), False),
    "ft": (F(381, 1250), dims(m=1), False),
    "yd": (F(1143, 1250), dims(m=1), False),
    "mi": (F(201168, 125), dims(m=1), False),
    "lb": (F(45359237, 10 ** 8), dims(kg=1), False),
    "oz": (F(45359237, 16 * 10 ** 8), dims(kg=1), False),
}

PREFIXES = {
    "Y": F(10) ** 24, "Z": F(10) ** 21, "E": F(10) ** 18, "P": F(10) ** 15, "T": F(10) ** 12,
    "G": F(10) ** 9, "M": F(10) ** 6, "k": F(10) ** 3, "h": F(10) ** 2, "da": F(10),
    "d": F(10) ** -1, "c": F(10) ** -2, "m": F(10) ** -3, "u": F(10) ** -6, "\u00b5": F(10) ** -6,
    "n": F(10) ** -9, "p": F(10) ** -12, "f": F(10) ** -15, "a": F(10) ** -18, "z": F(10) ** -21,
    "y": F(10) ** -24,
}


def resolve(symbol):
  """(scale, dims) of a unit symbol, with an optional SI prefix: a symbol the table knows is
  itself ('min' is the minute, never a milli-inch), otherwise a prefix and a symbol that takes
  prefixes ('dam' is the decametre)."""
  for prefix in PREFIXES:
    rest = symbol[len(prefix):]
    if symbol.startswith(prefix) and rest in UNITS:
      return PREFIXES[prefix] * UNITS[rest][0], UNITS[rest][1]
  if symbol in UNITS:
    scale, dim, _ = UNITS[symbol]
    return scale, dim
  raise UnitError("unknown unit: %r" % symbol)
