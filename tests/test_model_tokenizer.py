"""Tests of the committed tiny tokenizer: round trips, special tokens, chat template."""

import pytest

from rl.tokenizer import TINY_TOKENIZER_DIR, load_tokenizer, stop_token_ids


@pytest.fixture(scope="module")
def tokenizer():
  return load_tokenizer()


def test_vocab_and_special_ids(tokenizer):
  assert len(tokenizer) == 4096
  assert tokenizer.eos_token == "<|im_end|>"
  assert tokenizer.pad_token == "<|endoftext|>"
  for token in ("<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<tool_response>",
                "</tool_response>"):
    ids = tokenizer.encode(token, add_special_tokens=False)
    assert len(ids) == 1, (token, ids)
  assert tokenizer.eos_token_id in stop_token_ids(tokenizer)


@pytest.mark.parametrize("text", [
    "def f(x):\n    return x + 1\n",
    "héllo wörld 🤖\t\r\n  trailing  ",
    "\x00\x01 binary-ish \uffff",
    "",
])
def test_byte_level_round_trip(tokenizer, text):
  assert tokenizer.decode(tokenizer.encode(text, add_special_tokens=False)) == text


def test_tool_markers_survive_skip_special_tokens(tokenizer):
  text = '<tool_call>{"name": "run", "arguments": {"command": "ls"}}</tool_call>'
  ids = tokenizer.encode(text + "<|im_end|>", add_special_tokens=False)
  assert tokenizer.decode(ids, skip_special_tokens=True) == text


def test_chat_template_hermes_shape(tokenizer):
  messages = [
      {"role": "system", "content": "sys"},
      {"role": "user", "content": "fix it"},
      {"role": "assistant", "content": "ok", "tool_calls": [
          {"type": "function", "function": {"name": "read_file", "arguments": {"path": "a.py"}}}]},
      {"role": "tool", "content": "x = 1"},
  ]
  text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
  assert text == (
      "<|im_start|>system\nsys<|im_end|>\n<|im_start|>user\nfix it<|im_end|>\n"
      '<|im_start|>assistant\nok<tool_call>{"name": "read_file", "arguments": {"path": "a.py"}}'
      "</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\nx = 1\n</tool_response>"
      "<|im_end|>\n<|im_start|>assistant\n")
  tools = [{"type": "function", "function": {"name": "run", "description": "run a command",
                                             "parameters": {"type": "object", "properties": {}}}}]
  with_tools = tokenizer.apply_chat_template(messages[:2], tools=tools, tokenize=False)
  assert '"name": "run"' in with_tools and with_tools.startswith("<|im_start|>system\nsys")


def test_missing_directory_fails_clearly(tmp_path):
  with pytest.raises(FileNotFoundError, match="no tokenizer files"):
    load_tokenizer(tmp_path)
  assert TINY_TOKENIZER_DIR.endswith("assets/tokenizer")
