import itertools
import random
from fractions import Fraction as F

import pytest

from ratmat import Matrix, ShapeError, identity

# (rows, determinant)
DETS = [
    ([[5]], 5),
    ([[1, 2], [3, 4]], -2),
    ([[0, 1], [1, 0]], -1),
    ([[0, 2], [3, 0]], -6),
    ([[2, 0, 0], [0, 3, 0], [0, 0, 4]], 24),
    ([[0, 0, 1], [0, 1, 0], [1, 0, 0]], -1),
    ([[0, 1, 0], [0, 0, 1], [1, 0, 0]], 1),
    ([[1, 2, 3], [4, 5, 6], [7, 8, 9]], 0),
    ([[0, 2, 1], [1, 1, 1], [2, 0, 3]], -4),
    ([[F(1, 2), F(1, 3)], [F(1, 4), F(1, 5)]], F(1, 60)),
    ([["0.5", "1.5"], ["2", "0"]], -3),
    ([[0, 0, 0, 1], [0, 0, 1, 0], [0, 1, 0, 0], [1, 0, 0, 0]], 1),
    ([[0, 1, 2, 3], [1, 0, 1, 2], [2, 1, 0, 1], [3, 2, 1, 0]], -12),
]


@pytest.mark.parametrize("rows, expected", DETS, ids=["det%d" % i for i in range(len(DETS))])
def test_det_table(rows, expected):
  got = Matrix(rows).det()
  assert isinstance(got, F) and got == expected


def test_det_shape():
  with pytest.raises(ShapeError):
    Matrix([[1, 2, 3]]).det()
  assert identity(4).det() == 1


# -- a slow reference: the Leibniz formula -------------------------------------------------------

def parity(perm):
  sign = 1
  for i in range(len(perm)):
    for j in range(i + 1, len(perm)):
      if perm[i] > perm[j]:
        sign = -sign
  return sign


def reference_det(rows):
  n = len(rows)
  total = F(0)
  for perm in itertools.permutations(range(n)):
    term = F(parity(perm))
    for i, j in enumerate(perm):
      term *= F(rows[i][j])
    total += term
  return total


@pytest.mark.parametrize("n", [3, 4])
def test_permutation_matrices(n):
  for perm in itertools.permutations(range(n)):
    rows = [[int(perm[i] == j) for j in range(n)] for i in range(n)]
    assert Matrix(rows).det() == parity(perm), perm


def random_rows(gen, n, m, zero=0.3):
  def entry():
    if gen.random() < zero:
      return 0
    if gen.random() < 0.3:
      return F(gen.randint(-9, 9), gen.randint(1, 7))
    return gen.randint(-9, 9)
  return [[entry() for _ in range(m)] for _ in range(n)]


def test_random_against_leibniz():
  gen = random.Random(1750)
  for _ in range(400):
    n = gen.randint(1, 5)
    rows = random_rows(gen, n, n, zero=gen.choice([0.1, 0.4, 0.6]))
    got = Matrix(rows).det()
    assert isinstance(got, F)
    assert got == reference_det(rows), rows


def test_random_products():
  gen = random.Random(77)
  for _ in range(150):
    n = gen.randint(1, 4)
    a, b = random_rows(gen, n, n), random_rows(gen, n, n)
    assert (Matrix(a) * Matrix(b)).det() == reference_det(a) * reference_det(b)
