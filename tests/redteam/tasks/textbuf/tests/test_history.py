import random

import pytest

from textbuf import Buffer


def test_undo_delete_and_replace():
  b = Buffer("hello world")
  b.delete(5, 11)
  assert b.text == "hello"
  b.replace(0, 1, "J")
  assert b.text == "Jello"
  assert b.undo() and b.text == "hello"
  assert b.undo() and b.text == "hello world"
  assert not b.undo() and b.text == "hello world"


def test_redo():
  b = Buffer("abc")
  b.insert(3, "d")
  b.replace(0, 2, "XYZ")
  assert b.text == "XYZcd"
  assert b.undo() and b.undo() and b.text == "abc"
  assert b.redo() and b.text == "abcd"
  assert b.redo() and b.text == "XYZcd"
  assert not b.redo()


def test_new_edit_clears_redo():
  b = Buffer("one two")
  b.delete(3, 7)
  assert b.undo() and b.text == "one two"
  b.insert(0, ">")
  assert not b.redo() and b.text == ">one two"
  assert b.undo() and b.text == "one two"
  assert not b.undo()


def test_noop_edits_are_not_recorded():
  b = Buffer("x")
  b.insert(1, "")
  b.delete(0, 0)
  assert not b.undo()


@pytest.mark.parametrize("args", [(-1, 0, "a"), (0, 5, "a"), (2, 1, "a")])
def test_bad_ranges(args):
  with pytest.raises(IndexError):
    Buffer("abc").replace(*args)


# -- seeded edit sessions against a slow model that keeps every version ------------------------------

class SnapshotModel:
  """The versions of the text; `at` is the current one, undo and redo move along the list."""

  def __init__(self, text):
    self.versions, self.at = [text], 0

  @property
  def text(self):
    return self.versions[self.at]

  def edit(self, start, end, new):
    t = self.text
    if start == end and not new:
      return
    self.versions = self.versions[:self.at + 1] + [t[:start] + new + t[end:]]
    self.at += 1

  def undo(self):
    if self.at == 0:
      return False
    self.at -= 1
    return True

  def redo(self):
    if self.at + 1 == len(self.versions):
      return False
    self.at += 1
    return True


def random_session(gen, steps):
  text = "".join(gen.choice("abcdef \n") for _ in range(gen.randint(0, 60)))
  b, model = Buffer(text), SnapshotModel(text)
  for _ in range(steps):
    op = gen.choice(["insert", "delete", "replace", "undo", "undo", "redo"])
    n = len(model.text)
    start = gen.randint(0, n)
    end = min(n, start + gen.randint(0, 20))
    new = "".join(gen.choice("ghij\n") for _ in range(gen.randint(0, 8)))
    if op == "insert":
      b.insert(start, new)
      model.edit(start, start, new)
    elif op == "delete":
      b.delete(start, end)
      model.edit(start, end, "")
    elif op == "replace":
      b.replace(start, end, new)
      model.edit(start, end, new)
    elif op == "undo":
      assert b.undo() == model.undo()
    else:
      assert b.redo() == model.redo()
    assert b.text == model.text
    yield b, model


def test_random_sessions():
  gen = random.Random(2718)
  for _ in range(300):
    for b, model in random_session(gen, gen.randint(1, 40)):
      pass
    while model.undo():
      assert b.undo() and b.text == model.text
    assert not b.undo()


def test_random_sessions_positions():
  gen = random.Random(1618)
  for _ in range(150):
    for b, model in random_session(gen, gen.randint(1, 30)):
      offset = gen.randint(0, len(model.text))
      line = model.text[:offset].count("\n")
      assert tuple(b.offset_to_pos(offset)) == (line, offset - (model.text.rfind("\n", 0, offset) + 1))
      assert b.line_count == model.text.count("\n") + 1
