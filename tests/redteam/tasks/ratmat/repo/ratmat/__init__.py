"""Exact matrices over fractions.Fraction: products, determinants, reduced row echelon form, rank,
inverses and linear systems."""

from ratmat.entries import to_fraction
from ratmat.matrix import Matrix, MatrixError, ShapeError, SingularMatrixError, identity

__all__ = ["Matrix", "MatrixError", "ShapeError", "SingularMatrixError", "identity", "to_fraction"]
