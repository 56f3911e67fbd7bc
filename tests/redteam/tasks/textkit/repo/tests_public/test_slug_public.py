from textkit import slugify


def test_hello_world():
  assert slugify("Hello World") == "hello-world"


def test_already_slugged():
  assert slugify("  Already-Slugged ") == "already-slugged"
