"""What templates see at render time: the undefined value and the loop variable."""


class Undefined:
  """The value of a name or attribute that does not exist: renders as '', is false, iterates as
  nothing and has length 0."""

  __slots__ = ()

  def __str__(self):
    return ""

  def __repr__(self):
    return "Undefined"

  def __bool__(self):
    return False

  def __iter__(self):
    return iter(())

  def __len__(self):
    return 0


UNDEFINED = Undefined()


class Loop:
  """`loop` inside a {% for %} block: index (from 1), index0 (from 0), first, last and length."""

  __slots__ = ("index0", "length")

  def __init__(self, index0, length):
    self.index0 = index0
    self.length = length

  @property
  def index(self):
    return self.index0 + 1

  @property
  def first(self):
    return self.index0 == 0

  @property
  def last(self):
    return self.index0 == self.length - 1


def is_missing(value):
  return value is None or isinstance(value, Undefined)


def text_of(value):
  """The text a value renders as: '' for None and undefined values, str() of anything else."""
  return "" if is_missing(value) else str(value)
