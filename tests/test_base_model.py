"""The committed tiny base model (rl/assets/tiny_base, built by scripts/make_base.py): it fits
the default experiment's model, and its corpus kept away from what the default evaluates on."""

import json
from pathlib import Path

import pytest

from configs import default
from rl.model import load_hf_checkpoint
from rl.tasks.synthetic import LIBRARY, function_split
from rl.tokenizer import load_tokenizer

BASE = Path(__file__).resolve().parents[1] / "rl" / "assets" / "tiny_base"


@pytest.fixture(scope="module")
def info():
  return json.loads((BASE / "base.json").read_text())


def test_base_fits_the_default_model(info):
  c = default.get_config()
  model = load_hf_checkpoint(BASE)
  assert (model.config.hidden_size, model.config.num_layers, model.config.intermediate_size) == (
      c.model.hidden_size, c.model.num_layers, c.model.intermediate_size)
  assert model.config.vocab_size == len(load_tokenizer())
  assert load_tokenizer(BASE).get_vocab() == load_tokenizer().get_vocab()  # a complete HF directory
  assert info["model"]["hidden_size"] == c.model.hidden_size


def test_base_corpus_left_out_the_heldout_functions_and_the_default_training_bugs(info):
  heldout = sorted(fn.name for fn in LIBRARY if function_split(fn, 0.2) == "heldout")
  corpus = info["corpus"]
  assert corpus["heldout_functions"] == heldout
  # The default trains on 24 easy bugs, each in 1 + renames spellings in the generated set (a few
  # more share one's function, operator and line, and are dropped with it).
  spellings = 1 + corpus["renames"]
  assert corpus["excluded_default_bugs"] % spellings == 0 and corpus["excluded_default_bugs"] >= 24 * spellings
  assert corpus["train"] + corpus["heldout"] + corpus["excluded_default_bugs"] == corpus["generated"]
