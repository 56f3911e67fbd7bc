"""The tokenizer: the committed tiny byte-level BPE, or a checkpoint's own tokenizer.

Both come back as transformers tokenizer objects, so chat templates, special tokens and
`apply_chat_template` behave the same for the tiny default model and real Qwen/Llama checkpoints.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

TINY_TOKENIZER_DIR = str(Path(__file__).resolve().parent / "assets" / "tokenizer")
TOOL_CALL_START = "<tool_call>"
TOOL_CALL_END = "</tool_call>"


def auto_tokenizer_class() -> Any:
  """`transformers.AutoTokenizer`, imported without its notice that PyTorch is absent.

  The project uses transformers for tokenizers and configs only (the models are JAX), so the
  notice says nothing a user can act on. Imported late: transformers is a slow import.
  """
  os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
  from transformers import AutoTokenizer  # pylint: disable=import-outside-toplevel
  return AutoTokenizer


def load_tokenizer(path: str | os.PathLike | None = None) -> Any:
  """Loads a tokenizer directory with `transformers.AutoTokenizer`.

  Args:
    path: a directory with tokenizer.json/tokenizer_config.json (e.g. a Hugging Face checkpoint);
      None loads the tiny tokenizer committed in rl/assets/tokenizer.

  Returns:
    A transformers fast tokenizer with a chat template; `eos_token` ends an assistant turn.
  """
  directory = TINY_TOKENIZER_DIR if path is None else os.fspath(path)
  if not os.path.isdir(directory):
    raise FileNotFoundError(f"tokenizer directory {directory!r} does not exist")
  if not any(os.path.exists(os.path.join(directory, f))
             for f in ("tokenizer.json", "tokenizer_config.json", "vocab.json", "tokenizer.model")):
    raise FileNotFoundError(
        f"no tokenizer files (tokenizer.json or tokenizer_config.json) in {directory!r}")
  tokenizer = auto_tokenizer_class().from_pretrained(directory, local_files_only=True)
  if tokenizer.pad_token_id is None:
    # Batched generation needs a pad id; the end-of-text id is inert under the attention mask.
    tokenizer.pad_token = tokenizer.eos_token
  return tokenizer


def stop_token_ids(tokenizer: Any) -> list[int]:
  """Ids that end an assistant turn: eos plus <|im_end|>/<|endoftext|> when in the vocabulary."""
  ids = set()
  if tokenizer.eos_token_id is not None:
    ids.add(int(tokenizer.eos_token_id))
  vocab = tokenizer.get_vocab()
  for token in ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end_of_text|>"):
    if token in vocab:
      ids.add(int(vocab[token]))
  return sorted(ids)
