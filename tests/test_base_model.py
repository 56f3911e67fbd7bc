"""The committed tiny base model (rl/assets/tiny_base, built by scripts/make_base.py): it fits
the default experiment's model, and its corpus kept away from what the default evaluates on."""

import json
from pathlib import Path

import pytest

from configs import default
from rl.models import load_hf_checkpoint
from rl.tasks.synthetic import function_split
from rl.tasks.synthetic.generator import library_functions
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
  corpus = info["corpus"]
  assert corpus["library"] == default.get_config().tasks.synthetic_library
  heldout = sorted(fn.name for fn in library_functions(corpus["library"]) if function_split(fn, 0.2) == "heldout")
  assert corpus["heldout_functions"] == heldout
  # The default trains on 25 easy bugs, each in 1 + renames spellings in the generated set (a few
  # more share one's function, operator and line, and are dropped with it).
  spellings = 1 + corpus["renames"]
  assert corpus["excluded_default_bugs"] % spellings == 0 and corpus["excluded_default_bugs"] >= 25 * spellings
  assert corpus["train"] + corpus["heldout"] + corpus["excluded_default_bugs"] == corpus["generated"]


@pytest.mark.slow
def test_make_base_builds_a_loadable_base_from_a_clean_corpus(tmp_path):
  """scripts/make_base.py end to end at toy size: its corpus holds no held-out function in the
  train split and none of the default's training bugs; the output is a complete HF directory."""
  import importlib.util

  from rl.tasks import load_task_root
  from rl.tasks.synthetic import bug_identity

  script = Path(__file__).resolve().parents[1] / "scripts" / "make_base.py"
  spec = importlib.util.spec_from_file_location("make_base", script)
  make_base = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(make_base)
  out, work = tmp_path / "base", tmp_path / "work"
  assert make_base.main(["--out", str(out), "--workdir", str(work), "--steps", "2", "--renames", "0",
                         "--num", "60", "--seed", "1"]) == 0

  info = json.loads((out / "base.json").read_text())
  assert info["sft_steps"] == 2 and info["corpus"]["excluded_default_bugs"] > 0
  assert info["sft_lr"] == 2e-3  # the bases' own rate, not the default experiment's warm start
  corpus = load_task_root(work / "corpus")
  excluded = make_base.default_training_bugs(work)
  heldout = set(info["corpus"]["heldout_functions"])
  train = [t for t in corpus if t.split == "train"]
  assert len(train) == info["corpus"]["train"] and info["demonstrations"] == len(train)
  assert not {bug_identity(t) for t in train} & excluded
  assert not {t.metadata["functions"][0] for t in train} & heldout
  assert {t.metadata["functions"][0] for t in corpus if t.split == "heldout"} <= heldout
  model = load_hf_checkpoint(out)
  assert model.config.hidden_size == default.get_config().model.hidden_size
  assert load_tokenizer(out).get_vocab() == load_tokenizer().get_vocab()
