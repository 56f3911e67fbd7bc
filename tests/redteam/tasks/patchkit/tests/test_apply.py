import difflib
import os
import random

import pytest

from patchkit import PatchError, apply_patch

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
CASES = sorted(name[:-5] for name in os.listdir(DATA) if name.endswith(".diff"))
WORDS = ["import os", "def main():", "    return 0", "x = 1", "# note", "print(x)", "pass", "if x:",
         "    y = 2", "else:", "class A:", "    '''doc'''", "for i in range(3):", "try:", "finally:"]


def read(name):
  with open(os.path.join(DATA, name), encoding="utf-8", newline="") as fh:
    return fh.read()


@pytest.mark.parametrize("name", CASES)
def test_data_case(name):
  assert apply_patch(read(name + ".orig"), read(name + ".diff")) == read(name + ".expected")


def edited(rng, lines, fresh):
  """`lines` after 1-4 random insertions, deletions and replacements."""
  lines = list(lines)
  for _ in range(rng.randint(1, 4)):
    at = rng.randrange(len(lines) + 1)
    op = rng.choice(["insert", "delete", "replace"])
    if op == "insert" or at == len(lines):
      lines[at:at] = [f"{next(fresh)}\n" for _ in range(rng.randint(1, 3))]
    elif op == "delete":
      del lines[at:at + rng.randint(1, 2)]
    else:
      lines[at] = f"{next(fresh)}\n"
  return lines


@pytest.mark.parametrize("seed", range(60))
def test_round_trip_difflib(seed):
  rng = random.Random(seed)
  old = [f"{rng.choice(WORDS)}  # {i}\n" for i in range(rng.randint(10, 40))]
  fresh = (f"added line {k}" for k in range(1000))
  new = edited(rng, old, fresh)
  diff = "".join(difflib.unified_diff(old, new, "a/f.py", "b/f.py"))
  if not diff:
    return
  assert apply_patch("".join(old), diff) == "".join(new)


def test_context_mismatch_raises():
  with pytest.raises(PatchError):
    apply_patch("a\nb\nc\n", "@@ -1,2 +1,2 @@\n a\n-B\n+b\n")


def test_garbage_in_hunk_raises():
  with pytest.raises(PatchError):
    apply_patch("a\nb\n", "@@ -1,2 +1,2 @@\n a\n*b\n")
