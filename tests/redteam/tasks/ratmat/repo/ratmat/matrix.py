"""An immutable matrix of Fractions and the algorithms of Gaussian elimination."""

from fractions import Fraction

from ratmat.entries import to_fraction


class MatrixError(ValueError):
  """Base of the errors of this package."""


class ShapeError(MatrixError):
  """Shapes that do not fit the operation."""


class SingularMatrixError(MatrixError):
  """A singular matrix where an invertible one is needed, or a system without a solution."""


class Matrix:
  """rows x cols Fractions, given as a sequence of equally long rows of entries (see to_fraction)."""

  __slots__ = ("_rows",)

  def __init__(self, rows):
    rows = tuple(tuple(to_fraction(x) for x in row) for row in rows)
    if not rows or not rows[0]:
      raise ShapeError("a matrix needs at least one row and one column")
    if any(len(row) != len(rows[0]) for row in rows):
      raise ShapeError("rows of different lengths")
    self._rows = rows

  @property
  def rows(self):
    return self._rows

  @property
  def shape(self):
    return len(self._rows), len(self._rows[0])

  def __getitem__(self, index):
    r, c = index
    return self._rows[r][c]

  def tolist(self):
    return [list(row) for row in self._rows]

  def __eq__(self, other):
    if not isinstance(other, Matrix):
      return NotImplemented
    return self._rows == other._rows

  def __hash__(self):
    return hash(self._rows)

  def __repr__(self):
    return "Matrix([%s])" % ", ".join("[%s]" % ", ".join(str(x) for x in row) for row in self._rows)

  def transpose(self):
    return Matrix(zip(*self._rows))

  def __add__(self, other):
    if not isinstance(other, Matrix) or other.shape != self.shape:
      raise ShapeError("cannot add %r and %r" % (self.shape, getattr(other, "shape", other)))
    return Matrix([[a + b for a, b in zip(r, s)] for r, s in zip(self._rows, other._rows)])

  def __sub__(self, other):
    return self + other * -1

  def __mul__(self, other):
    if isinstance(other, Matrix):
      n, k = self.shape
      k2, m = other.shape
      if k != k2:
        raise ShapeError("cannot multiply %r by %r" % (self.shape, other.shape))
      cols = other.transpose().rows
      return Matrix([[sum((a * b for a, b in zip(row, col)), Fraction(0)) for col in cols] for row in self._rows])
    scalar = to_fraction(other)
    return Matrix([[x * scalar for x in row] for row in self._rows])

  __rmul__ = __mul__

  def det(self):
    """The determinant, by elimination with row swaps."""
    n, cols = self.shape
    if n != cols:
      raise ShapeError("determinant of a non-square %r matrix" % (self.shape,))
    m = [list(row) for row in self._rows]
    result = Fraction(1)
    for c in range(n):
      p = next((r for r in range(c, n) if m[r][c] != 0), None)
      if p is None:
        return Fraction(0)
      if p != c:
        m[c], m[p] = m[p], m[c]
      pivot = m[c][c]
      result *= pivot
      for r in range(c + 1, n):
        factor = m[r][c] / pivot
        if factor:
          for k in range(c, n):
            m[r][k] -= factor * m[c][k]
    return result

  def rref(self):
    """(the reduced row echelon form, the tuple of its pivot columns)."""
    rows, cols = self.shape
    m = [list(row) for row in self._rows]
    pivots = []
    for r in range(min(rows, cols)):
      c = r
      p = next((i for i in range(r, rows) if m[i][c] != 0), None)
      if p is None:
        continue
      m[r], m[p] = m[p], m[r]
      pivot = m[r][c]
      m[r] = [x / pivot for x in m[r]]
      for i in range(rows):
        if i != r and m[i][c] != 0:
          factor = m[i][c]
          m[i] = [x - factor * y for x, y in zip(m[i], m[r])]
      pivots.append(c)
    return Matrix(m), tuple(pivots)

  def rank(self):
    return len(self.rref()[1])

  def inverse(self):
    n, cols = self.shape
    if n != cols:
      raise ShapeError("inverse of a non-square %r matrix" % (self.shape,))
    aug = Matrix([list(row) + [Fraction(int(i == j)) for j in range(n)] for i, row in enumerate(self._rows)])
    reduced, pivots = aug.rref()
    if pivots[:n] != tuple(range(n)):
      raise SingularMatrixError("the matrix is singular")
    return Matrix([row[n:] for row in reduced.rows])

  def solve(self, b):
    """One solution x of self * x = b (b a sequence of entries): free variables are 0. Raises
    SingularMatrixError when there is none."""
    rows, cols = self.shape
    b = [to_fraction(x) for x in b]
    if len(b) != rows:
      raise ShapeError("right-hand side of length %d for %d rows" % (len(b), rows))
    reduced, pivots = Matrix([list(row) + [v] for row, v in zip(self._rows, b)]).rref()
    if cols in pivots:
      raise SingularMatrixError("the system has no solution")
    x = [Fraction(0)] * cols
    for r, c in enumerate(pivots):
      x[c] = reduced.rows[r][cols]
    return x


def identity(n):
  return Matrix([[int(i == j) for j in range(n)] for i in range(n)])
