from fractions import Fraction

from ratmat import Matrix, identity, to_fraction


def test_integer_entries():
  assert to_fraction("3/4") == Fraction(3, 4)
  assert Matrix([[1, 2], [3, 4]]).shape == (2, 2)


def test_det_without_swaps():
  assert Matrix([[1, 2], [3, 4]]).det() == -2
  assert identity(3).det() == 1


def test_inverse():
  a = Matrix([[2, 1], [1, 1]])
  assert a * a.inverse() == identity(2)


def test_full_rank():
  assert Matrix([[1, 0], [0, 1]]).rank() == 2
