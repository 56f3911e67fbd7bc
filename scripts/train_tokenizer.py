"""Trains the tiny byte-level BPE tokenizer committed under rl/assets/tokenizer/.

The corpus is local code only (the Python standard library of the running interpreter and
the benchmark data under --data-dir when present: $RLCODER_DATA_DIR, else the checkout's
shared/data), so the tokenizer is reproducible offline:

  .venv/bin/python scripts/train_tokenizer.py --vocab-size 4096 --out rl/assets/tokenizer
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import sysconfig
from pathlib import Path
from typing import Iterator

DATA_DIR = os.environ.get("RLCODER_DATA_DIR") or str(Path(__file__).resolve().parents[1] / "shared" / "data")

# Order fixes the ids: <|endoftext|> = 0 ... so pad/eos ids are stable across retrains.
SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
# Tool-call markers are atomic added tokens but not "special" (as in Qwen2.5), so decoding with
# skip_special_tokens=True keeps them and tool calls stay parseable.
TOOL_TOKENS = ("<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>")

# Hermes/Qwen2.5-shaped template: tools listed in the system turn, calls rendered as
# <tool_call>{"name": ..., "arguments": {...}}</tool_call>, consecutive tool results grouped in
# one user turn, each wrapped in <tool_response>...</tool_response>.
CHAT_TEMPLATE = (
    "{%- if tools %}"
    "{{- '<|im_start|>system\\n' }}"
    "{%- if messages[0]['role'] == 'system' %}{{- messages[0]['content'] }}"
    "{%- else %}{{- 'You are a helpful assistant.' }}{%- endif %}"
    "{{- '\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\n"
    "You are provided with function signatures within <tools></tools> XML tags:\\n<tools>' }}"
    "{%- for tool in tools %}{{- '\\n' }}{{- tool | tojson }}{%- endfor %}"
    "{{- '\\n</tools>\\n\\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\\n<tool_call>{\"name\": <function-name>, "
    "\"arguments\": <args-json-object>}</tool_call><|im_end|>\\n' }}"
    "{%- elif messages[0]['role'] == 'system' %}"
    "{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- for message in messages %}"
    "{%- if message['role'] == 'user' or (message['role'] == 'system' and not loop.first) %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- elif message['role'] == 'assistant' %}"
    "{{- '<|im_start|>assistant\\n' }}"
    "{%- if message['content'] %}{{- message['content'] }}{%- endif %}"
    "{%- if message.tool_calls %}"
    "{%- for tool_call in message.tool_calls %}"
    "{%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}"
    "{{- '<tool_call>{\"name\": \"' + tool_call.name + '\", \"arguments\": ' }}"
    "{%- if tool_call.arguments is string %}{{- tool_call.arguments }}"
    "{%- else %}{{- tool_call.arguments | tojson }}{%- endif %}"
    "{{- '}</tool_call>' }}"
    "{%- endfor %}"
    "{%- endif %}"
    "{{- '<|im_end|>\\n' }}"
    "{%- elif message['role'] == 'tool' %}"
    "{%- if loop.first or messages[loop.index0 - 1]['role'] != 'tool' %}"
    "{{- '<|im_start|>user' }}{%- endif %}"
    "{{- '\\n<tool_response>\\n' + message['content'] + '\\n</tool_response>' }}"
    "{%- if loop.last or messages[loop.index0 + 1]['role'] != 'tool' %}"
    "{{- '<|im_end|>\\n' }}{%- endif %}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)


def _corpus(max_bytes: int, seed: int, data_dir: str = DATA_DIR) -> Iterator[str]:
  """Yields code documents: stdlib sources, benchmark data, synthetic agent transcripts."""
  files = sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py"))
  files = [f for f in files if "site-packages" not in f.parts and "test" not in f.parts]
  random.Random(seed).shuffle(files)
  total = 0
  for f in files:
    try:
      text = f.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
      continue
    total += len(text)
    yield text
    if total >= max_bytes:
      break
  data_root = Path(data_dir)
  for path in sorted(data_root.rglob("*.jsonl*")) if data_root.is_dir() else []:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
      for line in fh:
        try:
          record = json.loads(line)
        except json.JSONDecodeError:
          continue
        yield "\n".join(v for v in record.values() if isinstance(v, str))
  # Agent-shaped text so tool-call JSON and shell output get sensible merges.
  actions = ("list_files", "read_file", "write_file", "edit_file", "run", "submit")
  for i in range(2000):
    name = actions[i % len(actions)]
    args = {"path": f"pkg/mod_{i % 17}.py", "command": "python -m pytest -q tests"}
    yield (f'<tool_call>{{"name": "{name}", "arguments": {json.dumps(args)}}}</tool_call>\n'
           f"<tool_response>\n{i % 7} passed, {i % 3} failed in 0.{i % 10}s\n</tool_response>")


def train(vocab_size: int, out_dir: str, max_bytes: int = 12_000_000, seed: int = 0,
          data_dir: str = DATA_DIR) -> None:
  from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers, AddedToken
  from transformers import PreTrainedTokenizerFast

  tok = Tokenizer(models.BPE())
  tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
  tok.decoder = decoders.ByteLevel()
  trainer = trainers.BpeTrainer(
      vocab_size=vocab_size - len(TOOL_TOKENS),
      special_tokens=list(SPECIAL_TOKENS),
      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
      min_frequency=2,
      show_progress=False,
  )
  tok.train_from_iterator(_corpus(max_bytes, seed, data_dir), trainer=trainer)
  tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in TOOL_TOKENS])
  fast = PreTrainedTokenizerFast(
      tokenizer_object=tok,
      eos_token="<|im_end|>",
      pad_token="<|endoftext|>",
      unk_token=None,
      bos_token=None,
      clean_up_tokenization_spaces=False,
      model_max_length=32768,
  )
  fast.chat_template = CHAT_TEMPLATE
  os.makedirs(out_dir, exist_ok=True)
  fast.save_pretrained(out_dir)
  # Older transformers releases and serving stacks read the template and class from
  # tokenizer_config.json, so the file carries both besides chat_template.jinja.
  config_path = os.path.join(out_dir, "tokenizer_config.json")
  with open(config_path) as fh:
    config = json.load(fh)
  config["tokenizer_class"] = "PreTrainedTokenizerFast"
  config["chat_template"] = CHAT_TEMPLATE
  with open(config_path, "w") as fh:
    json.dump(config, fh, indent=2)
    fh.write("\n")
  print(f"saved {len(fast)} tokens to {out_dir}")


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--vocab-size", type=int, default=4096)
  parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "rl/assets/tokenizer"))
  parser.add_argument("--max-bytes", type=int, default=12_000_000)
  parser.add_argument("--data-dir", default=DATA_DIR,
                      help="benchmark JSONL data to add to the corpus when present (default: $RLCODER_DATA_DIR, "
                           "else the checkout's shared/data)")
  args = parser.parse_args()
  train(args.vocab_size, args.out, args.max_bytes, data_dir=args.data_dir)


if __name__ == "__main__":
  main()
