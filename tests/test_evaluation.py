"""pass@k against the exact combinatorial formula and edge cases."""

import math

import pytest

from rl.train.evaluate import pass_at_k, pass_at_k_table, reward_ability_correlation


@pytest.mark.parametrize("n,c,k", [(10, 3, 1), (10, 3, 5), (200, 17, 10), (5, 0, 2), (5, 5, 3), (7, 4, 4)])
def test_matches_binomial_formula(n, c, k):
  expected = 1.0 - math.comb(n - c, k) / math.comb(n, k)
  assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


def test_pass_at_1_is_fraction_correct():
  assert pass_at_k(8, 3, 1) == pytest.approx(3 / 8)


@pytest.mark.parametrize("args", [(0, 0, 1), (5, 6, 1), (5, 2, 0), (5, 2, 6), (5.0, 2, 1)])
def test_bad_arguments(args):
  with pytest.raises((ValueError, TypeError)):
    pass_at_k(*args)


def test_table_and_correlation():
  table = pass_at_k_table([("a", True), ("a", False), ("b", False), ("b", False)], ks=[1, 2, 4])
  assert table["pass@1"] == pytest.approx(0.25) and table["pass@2"] == pytest.approx(0.5)
  assert "pass@4" not in table
  out = reward_ability_correlation([0.1, 0.5, 0.9], [0.2, 0.2, 0.1])
  assert out["verdict"].startswith("WARNING")
