import random

import pytest

from textbuf import Buffer, LineIndex, Position

TEXT = "alpha\nbeta\n\ngamma delta\n"

# (offset, position) in TEXT
POSITIONS = [
    (0, (0, 0)), (3, (0, 3)), (5, (0, 5)), (6, (1, 0)), (10, (1, 4)), (11, (2, 0)), (12, (3, 0)),
    (17, (3, 5)), (23, (3, 11)), (24, (4, 0)),
]


@pytest.mark.parametrize("offset, pos", POSITIONS, ids=["o%d" % o for o, _ in POSITIONS])
def test_position_table(offset, pos):
  b = Buffer(TEXT)
  got = b.offset_to_pos(offset)
  assert isinstance(got, Position) and got == pos and tuple(got) == pos
  assert b.pos_to_offset(pos) == offset


def test_lines_table():
  b = Buffer(TEXT)
  assert b.line_count == 5
  assert [b.line(i) for i in range(5)] == ["alpha", "beta", "", "gamma delta", ""]
  assert Buffer("").line_count == 1 and Buffer("").offset_to_pos(0) == (0, 0)
  assert Buffer("\n\n").offset_to_pos(1) == (1, 0) and Buffer("\n\n").offset_to_pos(2) == (2, 0)


@pytest.mark.parametrize("bad", [-1, len(TEXT) + 1])
def test_offset_errors(bad):
  with pytest.raises(IndexError):
    Buffer(TEXT).offset_to_pos(bad)


@pytest.mark.parametrize("pos", [(0, 6), (5, 0), (-1, 0), (2, 1), (1, -1)])
def test_position_errors(pos):
  with pytest.raises(IndexError):
    Buffer(TEXT).pos_to_offset(pos)


# -- seeded texts against a slow reference that counts newlines -------------------------------------

def reference_pos(text, offset):
  line = text[:offset].count("\n")
  return (line, offset - (text.rfind("\n", 0, offset) + 1))


def random_text(gen, n):
  return "".join(gen.choice("abc xyz\n\n") for _ in range(n))


def test_random_positions():
  gen = random.Random(31337)
  for _ in range(300):
    text = random_text(gen, gen.randint(0, 120))
    index = LineIndex(text)
    assert index.line_count == text.count("\n") + 1
    for offset in range(len(text) + 1):
      pos = index.offset_to_pos(offset)
      assert tuple(pos) == reference_pos(text, offset), (text, offset)
      assert index.pos_to_offset(pos) == offset


def test_random_lines():
  gen = random.Random(8)
  for _ in range(200):
    b = Buffer(random_text(gen, gen.randint(0, 200)))
    assert [b.line(i) for i in range(b.line_count)] == b.text.split("\n")
