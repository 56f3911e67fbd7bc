import itertools
import random
from fractions import Fraction as F

import pytest

from ratmat import Matrix, ShapeError, SingularMatrixError, identity

# (rows, its reduced row echelon form, the pivot columns)
RREFS = [
    ([[1, 2], [3, 4]], [[1, 0], [0, 1]], (0, 1)),
    ([[2, 4], [1, 2]], [[1, 2], [0, 0]], (0,)),
    ([[0, 1], [0, 1]], [[0, 1], [0, 0]], (1,)),
    ([[0, 1, 2], [0, 2, 5], [0, 0, 0]], [[0, 1, 0], [0, 0, 1], [0, 0, 0]], (1, 2)),
    ([[1, 2, 3], [2, 4, 7]], [[1, 2, 0], [0, 0, 1]], (0, 2)),
    ([[0, 0], [0, 0]], [[0, 0], [0, 0]], ()),
    ([[0, 3, 0, 6], [0, 0, 0, 2], [0, 1, 0, 2]], [[0, 1, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0]], (1, 3)),
    ([[1], [2], [3]], [[1], [0], [0]], (0,)),
    ([[F(1, 2), 1, "0.5"]], [[1, 2, 1]], (0,)),
]


@pytest.mark.parametrize("rows, form, pivots", RREFS, ids=["rref%d" % i for i in range(len(RREFS))])
def test_rref_table(rows, form, pivots):
  reduced, got = Matrix(rows).rref()
  assert reduced == Matrix(form)
  assert got == pivots
  assert Matrix(rows).rank() == len(pivots)


# -- slow references ---------------------------------------------------------------------------

def reference_det(rows):
  n = len(rows)
  if n == 1:
    return F(rows[0][0])
  return sum(((-1) ** j * F(rows[0][j]) * reference_det([r[:j] + r[j + 1:] for r in rows[1:]]) for j in range(n)), F(0))


def reference_rank(rows):
  """The size of the largest square submatrix with a nonzero determinant."""
  n, m = len(rows), len(rows[0])
  for k in range(min(n, m), 0, -1):
    for rs in itertools.combinations(range(n), k):
      for cs in itertools.combinations(range(m), k):
        if reference_det([[rows[i][j] for j in cs] for i in rs]) != 0:
          return k
  return 0


def is_rref(rows, pivots):
  """Leading ones in increasing columns, zero above and below, zero rows last."""
  lead = []
  for row in rows:
    nz = [j for j, x in enumerate(row) if x != 0]
    lead.append(nz[0] if nz else None)
  k = len(pivots)
  if any(x is not None for x in lead[k:]) or tuple(lead[:k]) != tuple(pivots):
    return False
  return all(rows[i][c] == 1 and all(rows[r][c] == 0 for r in range(len(rows)) if r != i) for i, c in enumerate(pivots))


def random_rows(gen, n, m):
  dead = set(gen.sample(range(m), gen.randint(0, m - 1)))
  rows = [[0 if j in dead or gen.random() < 0.3 else gen.randint(-5, 5) for j in range(m)] for _ in range(n)]
  if n > 1 and gen.random() < 0.5:  # a dependent row
    a, b = gen.sample(range(n), 2)
    rows[a] = [gen.randint(-2, 2) * x for x in rows[b]]
  return rows


def test_random_rank_and_form():
  gen = random.Random(3141)
  for _ in range(300):
    n, m = gen.randint(1, 4), gen.randint(1, 5)
    rows = random_rows(gen, n, m)
    reduced, pivots = Matrix(rows).rref()
    assert is_rref([list(r) for r in reduced.rows], pivots), rows
    assert len(pivots) == Matrix(rows).rank() == reference_rank(rows), rows
    # the same row space: every original row is a combination of the pivot rows
    for row in rows:
      assert all(row[j] == sum(row[c] * reduced.rows[i][j] for i, c in enumerate(pivots)) for j in range(m)), rows


def test_random_solve():
  gen = random.Random(2718)
  for _ in range(300):
    n, m = gen.randint(1, 4), gen.randint(1, 5)
    rows = random_rows(gen, n, m)
    x0 = [gen.randint(-3, 3) for _ in range(m)]
    b = [sum(F(a) * v for a, v in zip(row, x0)) for row in rows]
    x = Matrix(rows).solve(b)
    assert all(isinstance(v, F) for v in x)
    assert [sum(F(a) * v for a, v in zip(row, x)) for row in rows] == b, rows
    if reference_rank(rows) < n:
      bad = list(b)
      bad[gen.randrange(n)] += 1
      if reference_rank([list(r) + [v] for r, v in zip(rows, bad)]) > reference_rank(rows):
        with pytest.raises(SingularMatrixError):
          Matrix(rows).solve(bad)


def test_random_inverse():
  gen = random.Random(1618)
  for _ in range(200):
    n = gen.randint(1, 5)
    rows = [[gen.randint(-6, 6) if gen.random() < 0.7 else 0 for _ in range(n)] for _ in range(n)]
    if reference_det(rows) == 0:
      with pytest.raises(SingularMatrixError):
        Matrix(rows).inverse()
      continue
    inv = Matrix(rows).inverse()
    assert Matrix(rows) * inv == identity(n) == inv * Matrix(rows)


def test_shapes():
  with pytest.raises(ShapeError):
    Matrix([[1, 2]]) * Matrix([[1, 2]])
  with pytest.raises(ShapeError):
    Matrix([[1, 2], [3]])
  assert Matrix([[1, 2, 3]]) * Matrix([[1], [1], [1]]) == Matrix([[6]])
