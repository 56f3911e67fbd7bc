"""Hugging Face interop: parity with transformers (committed fixtures), export round trip, errors."""

import json
import os
import shutil

import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx
from safetensors import safe_open

from rl.models import (CheckpointError, init_model, load_hf_checkpoint, save_hf_checkpoint,
                      tiny_config)
from rl.tokenizer import load_tokenizer

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
CHECKPOINTS = ("hf_qwen2", "hf_llama")


@nnx.jit
def _logits(model, ids, mask=None):
  return model(ids, attention_mask=mask)


def _fixture(name, file):
  return np.load(os.path.join(FIXTURES, name, file))


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_logits_match_transformers(name):
  model = load_hf_checkpoint(os.path.join(FIXTURES, name))
  ids = _fixture(name, "reference_input_ids.npy")
  np.testing.assert_allclose(np.asarray(_logits(model, ids)), _fixture(name, "reference_logits.npy"),
                             atol=1e-4, rtol=0)


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_padded_logits_match_transformers(name):
  model = load_hf_checkpoint(os.path.join(FIXTURES, name))
  ids = _fixture(name, "reference_input_ids.npy")
  mask = _fixture(name, "reference_attention_mask.npy")
  ours = np.asarray(_logits(model, ids, mask)) * mask[..., None]
  ref = _fixture(name, "reference_masked_logits.npy") * mask[..., None]
  np.testing.assert_allclose(ours, ref, atol=1e-4, rtol=0)


def test_config_fields_are_read():
  qwen = load_hf_checkpoint(os.path.join(FIXTURES, "hf_qwen2")).config
  llama = load_hf_checkpoint(os.path.join(FIXTURES, "hf_llama")).config
  assert (qwen.architecture, qwen.qkv_bias, qwen.tie_word_embeddings) == ("qwen2", True, True)
  assert (llama.architecture, llama.qkv_bias, llama.tie_word_embeddings) == ("llama", False, False)
  assert llama.dim_per_head == 16 and dict(llama.rope_scaling)["rope_type"] == "llama3"


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_export_round_trip(name, tmp_path):
  model = load_hf_checkpoint(os.path.join(FIXTURES, name))
  save_hf_checkpoint(model, tmp_path / "out", max_shard_bytes=30_000)
  assert os.path.exists(tmp_path / "out" / "model.safetensors.index.json")  # sharded on purpose
  again = load_hf_checkpoint(tmp_path / "out")
  ids = _fixture(name, "reference_input_ids.npy")
  np.testing.assert_array_equal(np.asarray(_logits(again, ids)), np.asarray(_logits(model, ids)))
  # Same tensor names and shapes as transformers wrote, so transformers can load the export.
  def names_and_shapes(directory):
    out = {}
    for f in os.listdir(directory):
      if f.endswith(".safetensors"):
        with safe_open(os.path.join(directory, f), framework="numpy") as fh:
          out.update({k: fh.get_slice(k).get_shape() for k in fh.keys()})
    return out
  assert names_and_shapes(tmp_path / "out") == names_and_shapes(os.path.join(FIXTURES, name))
  hf_config = json.loads((tmp_path / "out" / "config.json").read_text())
  assert hf_config["model_type"] == model.config.architecture


def test_tiny_export_with_tokenizer_and_bfloat16(tmp_path):
  model = init_model(tiny_config("test"))
  save_hf_checkpoint(model, tmp_path, tokenizer=load_tokenizer())
  assert (tmp_path / "tokenizer.json").exists()
  assert load_tokenizer(tmp_path).eos_token == "<|im_end|>"
  bf16 = load_hf_checkpoint(tmp_path, dtype=jnp.bfloat16)
  assert bf16.embed_tokens.get_value().dtype == jnp.bfloat16
  ids = np.arange(10, dtype=np.int32)[None]
  np.testing.assert_allclose(np.asarray(bf16(ids)), np.asarray(_logits(model, ids)), atol=0.05)


def _copy(name, tmp_path):
  dest = tmp_path / name
  shutil.copytree(os.path.join(FIXTURES, name), dest)
  return dest


def test_missing_files_fail_clearly(tmp_path):
  with pytest.raises(CheckpointError, match="does not exist"):
    load_hf_checkpoint(tmp_path / "nope")
  d = _copy("hf_qwen2", tmp_path)
  os.remove(d / "config.json")
  with pytest.raises(CheckpointError, match="config.json is missing"):
    load_hf_checkpoint(d)
  d = _copy("hf_llama", tmp_path)
  os.remove(d / "model-00003-of-00008.safetensors")
  with pytest.raises(CheckpointError, match="model-00003-of-00008.safetensors"):
    load_hf_checkpoint(d)


def test_unsupported_architecture_and_dtype(tmp_path):
  d = _copy("hf_qwen2", tmp_path)
  config = json.loads((d / "config.json").read_text())
  (d / "config.json").write_text(json.dumps({**config, "model_type": "gpt2"}))
  with pytest.raises(CheckpointError, match="unsupported model_type 'gpt2'"):
    load_hf_checkpoint(d)
  with pytest.raises(ValueError, match="unsupported dtype 'int8'"):
    load_hf_checkpoint(os.path.join(FIXTURES, "hf_qwen2"), dtype=jnp.int8)


def test_shape_mismatch_and_missing_key_name_file_and_key(tmp_path):
  d = _copy("hf_qwen2", tmp_path)
  config = json.loads((d / "config.json").read_text())
  (d / "config.json").write_text(json.dumps({**config, "intermediate_size": 80}))
  with pytest.raises(CheckpointError, match=r"model\.safetensors.*mlp\.(gate|up|down)_proj"):
    load_hf_checkpoint(d)
  (d / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 3}))
  with pytest.raises(CheckpointError, match=r"missing.*model\.layers\.2\."):
    load_hf_checkpoint(d)
  (d / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 1}))
  with pytest.raises(CheckpointError, match=r"model\.layers\.1\..*does not have"):
    load_hf_checkpoint(d)
