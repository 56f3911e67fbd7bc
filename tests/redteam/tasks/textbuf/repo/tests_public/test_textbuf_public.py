from textbuf import Buffer, Position


def test_insert_and_undo():
  b = Buffer("abc")
  b.insert(1, "XY")
  assert b.text == "aXYbc"
  assert b.undo() and b.text == "abc"


def test_positions_inside_a_line():
  b = Buffer("hello\nworld")
  assert b.offset_to_pos(2) == Position(0, 2)
  assert b.pos_to_offset((1, 3)) == 9


def test_line_count():
  assert Buffer("a\nb\n").line_count == 3
