"""Constrained tool calls: the grammar, the masked sampler and the update's matching log-probs."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from rl.env import tools as tools_lib
from rl.env.actors import tool_call_text
from rl.env.constrained import DEAD, ToolCallGrammar
from rl.env.sampling import Sampler
from rl.models import init_model, tiny_config, token_logprobs
from rl.tokenizer import load_tokenizer, stop_token_ids


@pytest.fixture(scope="module")
def tokenizer():
  return load_tokenizer()


@pytest.fixture(scope="module")
def grammar(tokenizer):
  return ToolCallGrammar(tokenizer)


def _accepts(grammar, tokenizer, text: str) -> bool:
  ids = tokenizer.encode(text, add_special_tokens=False)
  states = grammar.walk(ids)
  return DEAD not in states and grammar.table[states[-1], ids[-1]] == grammar.accept


GOOD = [
    tool_call_text("read_file", {"path": "a.py"}),
    "Let me look first. " + tool_call_text("list_files", {"path": "."}),
    tool_call_text("list_files", {}),
    tool_call_text("submit", {}),
    tool_call_text("run", {"command": "python -m pytest -q tests/ && echo 'ok'"}),
    tool_call_text("edit_file", {"path": "nums.py", "old": "return a - b\n", "new": 'return a + b  # "fixed"\t\\'}),
    tool_call_text("edit_file", {"new": "x", "path": "p.py", "old": "y"}),  # any argument order
    tool_call_text("write_file", {"path": "é.py", "content": "print('π ≈ 3.14159 ✓')\n"}),
    '<tool_call>\n{"name": "submit", "arguments": {}}\n</tool_call>',  # Qwen's template spacing
    '<tool_call>{"name": "run", "arguments": {"command": "echo \\u00e9"}}</tool_call>',
]
BAD = [
    "I am done.",  # no call
    '<tool_call>{"name": "reed_file", "arguments": {"path": "a.py"}}</tool_call>',  # unknown tool
    '<tool_call>{"name": "read_file", "arguments": {}}</tool_call>',  # required argument missing
    '<tool_call>{"name": "read_file", "arguments": {"file": "a.py"}}</tool_call>',  # unknown argument
    '<tool_call>{"name": "run", "arguments": {"command": "a\nb"}}</tool_call>',  # raw newline
    '<tool_call>{"name": "run", "arguments": {"command": "\\q"}}</tool_call>',  # bad escape
    '<tool_call>{"name": "run", "arguments": {"command": 3}}</tool_call>',  # not a string
    '<tool_call>{"name": "submit", "arguments": {}}',  # not closed
]


# The parser takes these (JSON keeps the last of repeated keys; json.loads reads any spacing);
# the grammar keeps the canonical form.
STRICTER = [
    '<tool_call>{"name": "run", "arguments": {"command": "a", "command": "b"}}</tool_call>',
    '<tool_call>{"name":"submit","arguments":{}}</tool_call>',
]


@pytest.mark.parametrize("text", GOOD)
def test_grammar_accepts_well_formed_calls(grammar, tokenizer, text):
  assert _accepts(grammar, tokenizer, text)
  assert tools_lib.parse_action(text).error is None


@pytest.mark.parametrize("text", BAD)
def test_grammar_rejects_what_the_parser_rejects(grammar, tokenizer, text):
  assert not _accepts(grammar, tokenizer, text)
  assert tools_lib.parse_action(text).error is not None


@pytest.mark.parametrize("text", STRICTER)
def test_grammar_keeps_the_canonical_form(grammar, tokenizer, text):
  assert not _accepts(grammar, tokenizer, text)
  assert tools_lib.parse_action(text).error is None


def test_every_reachable_state_has_a_way_on(grammar, tokenizer):
  allowed = grammar.table >= 0
  finished = grammar.table[grammar.accept][allowed[grammar.accept]][0]  # after the end of turn
  for state in range(grammar.num_states):
    if state != finished:
      assert allowed[state].any(), f"state {state} is a dead end"
  assert allowed[grammar.free].all() and (grammar.table[grammar.free] == grammar.free).all()
  assert not allowed[grammar.start, tokenizer.convert_tokens_to_ids("</tool_call>")]


def test_action_states_restart_each_message_and_free_the_rest(grammar, tokenizer):
  call = tokenizer.encode(tool_call_text("submit", {}), add_special_tokens=False)
  obs = [5, 6, 7]
  tokens = np.array([[9] + call + obs + call + [0, 0]])
  mask = np.array([[0] + [1] * len(call) + [0] * 3 + [1] * len(call) + [0, 0]])
  states, off = grammar.action_states(tokens, mask)
  assert off == 0
  n = len(call)
  assert states[0, 1] == grammar.start and states[0, 1 + n + 3] == grammar.start
  assert (states[0, mask[0] == 0] == grammar.free).all()
  assert list(states[0, 1:1 + n]) == grammar.walk(call)
  bad = tokens.copy()
  bad[0, 2] = tokenizer.convert_tokens_to_ids("</tool_call>")  # thought, then a stray end marker
  states, off = grammar.action_states(bad, mask)
  assert off == n - 1 and (states[0, 2:1 + n] == grammar.free).all()


def test_non_byte_level_tokenizer_is_refused():
  class Pieces:  # a SentencePiece-style vocabulary

    def __len__(self):
      return 3

    def get_vocab(self):
      return {"<tool_call>": 0, "</tool_call>": 1, "▁hello": 2}

    def convert_ids_to_tokens(self, ids):
      return ["<tool_call>", "</tool_call>", "▁hello"][:len(ids)]

    added_tokens_decoder = {0: None, 1: None}
    all_special_ids = []
    eos_token_id = None

  with pytest.raises(ValueError, match="byte-level BPE"):
    ToolCallGrammar(Pieces(), stop_token_ids=[])


def _uniform_model(vocab_size):
  """A model whose logits are all 0: the sampler draws uniformly over what the grammar allows."""
  model = init_model(tiny_config("test", vocab_size=vocab_size), seed=0)
  graphdef, state = nnx.split(model)
  state = jax.tree.map(jnp.zeros_like, state)
  return nnx.merge(graphdef, state)


def test_sampler_and_update_score_the_same_masked_distribution(tokenizer):
  grammar = ToolCallGrammar(tokenizer, tools=[t for t in tools_lib.TOOL_SPECS
                                              if t["function"]["name"] == "submit"])
  # Force the call right away (no thought), so that a uniform policy finishes its message.
  start_token = tokenizer.convert_tokens_to_ids("<tool_call>")
  row = grammar.table[grammar.start].copy()
  grammar.table[grammar.start] = DEAD
  grammar.table[grammar.start, start_token] = row[start_token]
  model = _uniform_model(len(tokenizer))
  sampler = Sampler(model, max_cache_len=256, stop_token_ids=stop_token_ids(tokenizer),
                    stop_sequences=[[tokenizer.convert_tokens_to_ids("</tool_call>")]],
                    grammar=grammar)
  prompts = [[3, 4, 5]] * 6
  out = sampler.sample(prompts, max_new_tokens=120, rng=jax.random.key(0), temperature=1.0)
  tokens, mask, expected = [], [], []
  for toks, lps, reason in zip(out.tokens, out.logprobs, out.finish_reasons):
    text = tokenizer.decode(toks)
    assert reason == "stop", text
    action = tools_lib.parse_action(text)
    assert action.type == "submit", text
    states = grammar.walk(toks)
    counts = (grammar.table[states] >= 0).sum(-1)
    np.testing.assert_allclose(lps, -np.log(counts), rtol=1e-5)  # uniform over the allowed set
    tokens.append(prompts[0] + toks)
    mask.append([0] * 3 + [1] * len(toks))
    expected.append([0.0] * 3 + list(lps))
  width = max(map(len, tokens))
  pad = lambda rows, v: np.array([r + [v] * (width - len(r)) for r in rows])  # noqa: E731
  tokens, mask, expected = pad(tokens, 0), pad(mask, 0), pad(expected, 0.0)
  states, off = grammar.action_states(tokens, mask)
  assert off == 0
  out = token_logprobs(model, jnp.asarray(tokens), jnp.asarray(mask > -1, jnp.float32),
                       grammar_states=jnp.asarray(states), grammar_table=jnp.asarray(grammar.table))
  np.testing.assert_allclose(np.asarray(out["logprobs"]) * mask, expected, atol=1e-5)
  # The entropy is the masked distribution's: log(number of allowed tokens) under a uniform policy.
  counts = (grammar.table[states] >= 0).sum(-1)
  np.testing.assert_allclose(np.asarray(out["entropy"])[mask > 0], np.log(counts[mask > 0]), rtol=1e-5)
  free = token_logprobs(model, jnp.asarray(tokens), jnp.asarray(mask > -1, jnp.float32))
  assert (np.asarray(free["logprobs"])[mask > 0] < np.asarray(out["logprobs"])[mask > 0] - 1).all()


def test_bounded_thought_forces_the_call(tokenizer):
  grammar = ToolCallGrammar(tokenizer, max_thought_bytes=12)
  call = tool_call_text("submit", {})
  assert _accepts(grammar, tokenizer, "Done here. " + call)  # 11 bytes
  assert _accepts(grammar, tokenizer, "Done, done.x" + call)  # exactly 12
  assert not _accepts(grammar, tokenizer, "I am done now. " + call)
  # Twelve bytes in, the call is the only way on.
  states = grammar.walk(tokenizer.encode("abcdefghijkl" + call, add_special_tokens=False))
  at_bound = states[len(tokenizer.encode("abcdefghijkl", add_special_tokens=False))]
  assert np.flatnonzero(grammar.allowed(at_bound)).tolist() == [tokenizer.convert_tokens_to_ids("<tool_call>")]
  with pytest.raises(ValueError, match="max_thought_bytes"):
    ToolCallGrammar(tokenizer, max_thought_bytes=-1)
