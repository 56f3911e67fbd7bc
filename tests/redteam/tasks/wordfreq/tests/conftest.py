import json
import pathlib

import pytest

DATA = pathlib.Path(__file__).parent / "data"
NAMES = sorted(p.stem for p in DATA.glob("*.txt"))


@pytest.fixture(params=NAMES)
def sample(request):
  """(text, n, expected top words) for one document in tests/data."""
  text = (DATA / f"{request.param}.txt").read_text(encoding="utf-8")
  expected = json.loads((DATA / f"{request.param}.json").read_text(encoding="utf-8"))
  return text, expected["n"], [tuple(pair) for pair in expected["top"]]
