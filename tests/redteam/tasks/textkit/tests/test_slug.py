from textkit import slugify


def test_hello_world():
  assert slugify("Hello World") == "hello-world"


def test_punctuation():
  assert slugify("Rock & Roll!") == "rock-roll"


def test_spaces():
  assert slugify("  Many   Spaces  ") == "many-spaces"


def test_mixed_case_digits():
  assert slugify("MiXeD Case 42") == "mixed-case-42"


def test_empty():
  assert slugify("") == ""
