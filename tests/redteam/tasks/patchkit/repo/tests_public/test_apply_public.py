import pytest

from patchkit import PatchError, apply_patch, parse_patch

OLD = "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\niota\nkappa\n"


def test_single_hunk():
  diff = "--- a/greek.txt\n+++ b/greek.txt\n@@ -2,3 +2,3 @@\n beta\n-gamma\n+GAMMA\n delta\n"
  assert apply_patch(OLD, diff) == OLD.replace("gamma", "GAMMA")


def test_two_hunks_same_length():
  diff = ("--- a/greek.txt\n+++ b/greek.txt\n@@ -1,2 +1,2 @@\n-alpha\n+ALPHA\n beta\n"
          "@@ -8,3 +8,3 @@\n theta\n-iota\n+IOTA\n kappa\n")
  assert apply_patch(OLD, diff) == OLD.replace("alpha", "ALPHA").replace("iota", "IOTA")


def test_parse_counts():
  (hunk,) = parse_patch("@@ -3 +3,2 @@\n-c\n+c\n+d\n")
  assert (hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count) == (3, 1, 3, 2)
  assert hunk.old_lines() == ["c\n"] and hunk.new_lines() == ["c\n", "d\n"]


def test_context_mismatch():
  with pytest.raises(PatchError):
    apply_patch(OLD, "@@ -2,2 +2,2 @@\n beta\n-GAMMA\n+gamma\n")
