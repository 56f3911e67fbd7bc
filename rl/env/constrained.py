"""Constrained decoding of tool calls: a token-level automaton over the Hermes call envelope.

With `agent.constrained_tool_calls`, every assistant message is free text followed by exactly
one well-formed call

    <thought text><tool_call>{"name": "<tool>", "arguments": {"<arg>": "<JSON string>", ...}}</tool_call>

(the thought optionally bounded in bytes, `agent.max_thought_bytes`)

where <tool> is one of the agent's tools, the argument names are that tool's (each at most once,
every required one present) and the values are JSON strings (escapes included). Separators are
json.dumps's (`": "`, `", "`), the form the expert's demonstrations and Qwen's chat template use;
one space or newline is allowed between `<tool_call>` and `{` and between the final `}` and
`</tool_call>` (Qwen's template writes newlines there).
What the policy writes inside the strings (paths, code, commands) is not constrained.

The grammar is compiled once into a table `next_state[state, token]` (-1: the token is not
allowed there) from the tokenizer's byte-level vocabulary. The sampler carries one state per row
(`rl.env.sampling`), masks the logits with `next_state[state] >= 0`, and steps the state with the
sampled token; the update recomputes each action token's state from the tokens
(`action_states`) and scores the same masked distribution (`rl.models.transformer`), so the PPO
ratio compares the distribution the tokens were drawn from (docs/rollouts.md).

Tokens are mapped to bytes through the GPT-2 byte-level alphabet (the tiny tokenizer, Qwen2,
Llama 3); a tokenizer whose pieces are not byte-level is refused with a clear error.
"""

from __future__ import annotations

import functools
from typing import Any, Mapping, Sequence

import numpy as np

DEAD = -1
_STRING_BYTES = bytes(b for b in range(0x20, 0x100) if b not in (0x22, 0x5C))  # not `"` or `\`
_WHITESPACE = b" \n"
_HEX = b"0123456789abcdefABCDEF"
# Symbols past the 256 byte values: the call delimiters and the end-of-turn tokens.
_START, _END, _STOP = 256, 257, 258


@functools.lru_cache(maxsize=1)
def _byte_decoder() -> dict[str, int]:
  """The inverse of GPT-2's bytes_to_unicode: printable stand-in character -> byte value."""
  keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
      list(range(ord("®"), ord("ÿ") + 1))
  chars = keep[:]
  n = 0
  for b in range(256):
    if b not in keep:
      keep.append(b)
      chars.append(256 + n)
      n += 1
  return {chr(c): b for b, c in zip(keep, chars)}


class _Automaton:
  """A byte-level DFA under construction: states are rows of a growing transition list."""

  def __init__(self):
    self.edges: list[dict[int, int]] = []

  def new(self) -> int:
    self.edges.append({})
    return len(self.edges) - 1

  def literal(self, src: int, text: bytes, end: int | None = None) -> int:
    """Follows or creates the path spelling `text` from `src` (a trie); returns its end state.

    `end` ties the last byte to an existing state.
    """
    state = src
    for i, byte in enumerate(text):
      last = i == len(text) - 1
      nxt = self.edges[state].get(byte)
      if nxt is None:
        nxt = end if (last and end is not None) else self.new()
        self.edges[state][byte] = nxt
      elif last and end is not None and nxt != end:
        raise ValueError(f"grammar conflict on {text!r}")
      state = nxt
    return state


def _compile(tools: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]], max_thought_bytes: int = 0):
  """Builds the byte-level automaton; returns (edges, start, accept)."""
  a = _Automaton()
  if max_thought_bytes > 0:  # a chain of states counting the thought's bytes
    thoughts = [a.new() for _ in range(max_thought_bytes + 1)]
    for here, there in zip(thoughts, thoughts[1:]):
      for byte in range(256):
        a.edges[here][byte] = there
  else:
    thoughts = [a.new()]
    for byte in range(256):
      a.edges[thoughts[0]][byte] = thoughts[0]
  thought = thoughts[0]
  opened = a.new()  # after <tool_call>: one optional space or newline, then the object
  for state in thoughts:
    a.edges[state][_START] = opened
  spaced = a.new()
  for byte in _WHITESPACE:
    a.edges[opened][byte] = spaced
  closing = a.new()  # after the object's closing brace: the same
  accept = a.new()  # after </tool_call>: only the end of the turn
  a.edges[closing][_END] = accept
  for byte in _WHITESPACE:
    a.edges[closing][byte] = a.new()
    a.edges[a.edges[closing][byte]][_END] = accept
  done = a.new()
  a.edges[accept][_STOP] = done
  name_start = a.literal(opened, b'{"name": "')
  a.literal(spaced, b'{', end=a.edges[opened][ord("{")])
  args_cache: dict[tuple, int] = {}
  string_cache: dict[tuple, int] = {}

  def string(tool: str, used: frozenset) -> int:
    """Inside an argument's JSON string; the closing quote returns to the argument list."""
    key = (tool, used)
    if key not in string_cache:
      s, esc = a.new(), a.new()
      string_cache[key] = s
      for byte in _STRING_BYTES:
        a.edges[s][byte] = s
      a.edges[s][ord("\\")] = esc
      for byte in b'"\\/bfnrt':
        a.edges[esc][byte] = s
      u = a.new()
      a.edges[esc][ord("u")] = u
      for i in range(4):
        nxt = s if i == 3 else a.new()
        for byte in _HEX:
          a.edges[u][byte] = nxt
        u = nxt
      a.edges[s][ord('"')] = args(tool, used, False)
    return string_cache[key]

  def args(tool: str, used: frozenset, first: bool) -> int:
    """Between arguments: another unused argument, or the end once the required ones are in."""
    key = (tool, used, first)
    if key not in args_cache:
      state = a.new()
      args_cache[key] = state
      names, required = tools[tool]
      if set(required) <= used:
        a.literal(state, b"}}", end=closing)
      for name in names:
        if name not in used:
          prefix = b'"' if first else b', "'
          a.literal(state, prefix + name.encode() + b'": "', end=string(tool, used | {name}))
    return args_cache[key]

  for tool in tools:
    a.literal(name_start, tool.encode() + b'", "arguments": {', end=args(tool, frozenset(), True))
  return a.edges, thought, accept


class ToolCallGrammar:
  """The tool-call envelope compiled against a tokenizer's vocabulary.

  `max_thought_bytes` > 0 bounds the free text before `<tool_call>`: once a message's text
  reaches it, the call must start (0: unbounded).

  Attributes:
    table: int32 [num_states + 1, vocab] next state after each token; -1 where the token is not
      allowed. The last row (`free`) allows every token and stays there: it marks tokens
      that are not constrained (prompts, observations, a message that left the grammar).
    start: the state at the start of every assistant message.
  """

  def __init__(self, tokenizer: Any, tools: Sequence[Mapping[str, Any]] | None = None,
               stop_token_ids: Sequence[int] | None = None, max_thought_bytes: int = 0):
    from rl.env import tools as tools_lib  # pylint: disable=import-outside-toplevel
    from rl import tokenizer as tokenizer_lib  # pylint: disable=import-outside-toplevel

    specs = tools_lib.TOOL_SPECS if tools is None else tools
    spec = {s["function"]["name"]: (tuple(s["function"]["parameters"].get("properties", {})),
                                    tuple(s["function"]["parameters"].get("required", ())))
            for s in specs}
    if max_thought_bytes < 0:
      raise ValueError(f"max_thought_bytes must be >= 0, got {max_thought_bytes}")
    edges, self.start, self.accept = _compile(spec, max_thought_bytes)
    vocab_size = len(tokenizer)
    stop_ids = set(tokenizer_lib.stop_token_ids(tokenizer) if stop_token_ids is None
                   else stop_token_ids)
    vocab = tokenizer.get_vocab()
    for marker in (tools_lib.TOOL_CALL_START, tools_lib.TOOL_CALL_END):
      if marker not in vocab:
        raise ValueError(f"constrained tool calls need {marker!r} as one token of the vocabulary; "
                         "this tokenizer splits it")
    symbol = {vocab[tools_lib.TOOL_CALL_START]: _START, vocab[tools_lib.TOOL_CALL_END]: _END}
    symbol.update({i: _STOP for i in stop_ids})
    special = {int(i) for i in getattr(tokenizer, "added_tokens_decoder", {})} | set(symbol)
    special |= set(getattr(tokenizer, "all_special_ids", ()))

    num = len(edges)
    byte_table = np.full((num + 1, 259), DEAD, np.int32)
    for s, out in enumerate(edges):
      for sym, t in out.items():
        byte_table[s, sym] = t
    # Row `num` stays all DEAD: a DEAD (-1) state index reads it, so dead paths stay dead.
    pieces = self._token_bytes(tokenizer, vocab_size, special)
    table = np.full((num + 1, vocab_size), DEAD, np.int32)
    by_length: dict[int, list[int]] = {}
    for token, piece in pieces.items():
      by_length.setdefault(len(piece), []).append(token)
    states = np.arange(num)[:, None]
    for length, ids in by_length.items():
      seq = np.array([list(pieces[i]) for i in ids], np.int32)  # [n, length]
      cur = np.broadcast_to(states, (num, len(ids))).copy()
      for j in range(length):
        cur = byte_table[cur, seq[None, :, j]]  # -1 reads the all-dead last row
      table[:num, ids] = cur
    for token, sym in symbol.items():
      if token < vocab_size:
        table[:num, token] = byte_table[:num, sym]
    table[num] = num
    self.free = num
    self.table = table

  @staticmethod
  def _token_bytes(tokenizer: Any, vocab_size: int, special: set[int]) -> dict[int, bytes]:
    decoder = _byte_decoder()
    pieces = {}
    for token, piece in enumerate(tokenizer.convert_ids_to_tokens(list(range(vocab_size)))):
      if token in special or piece is None:
        continue
      try:
        pieces[token] = bytes(decoder[ch] for ch in piece)
      except KeyError as e:
        raise ValueError(
            f"constrained tool calls need a byte-level BPE tokenizer (GPT-2 alphabet); token "
            f"{token} {piece!r} has the character {e.args[0]!r} outside it") from None
    return pieces

  @property
  def num_states(self) -> int:
    return self.table.shape[0]

  def allowed(self, state: int) -> np.ndarray:
    """[vocab] bool: the tokens allowed in `state`."""
    return self.table[state] >= 0

  def walk(self, tokens: Sequence[int], state: int | None = None) -> list[int]:
    """The state before each token of one message; DEAD from the first disallowed token on."""
    state = self.start if state is None else state
    out = []
    for token in tokens:
      out.append(state)
      state = int(self.table[state, int(token)]) if state != DEAD else DEAD
    return out

  def action_states(self, tokens: np.ndarray, action_mask: np.ndarray) -> tuple[np.ndarray, int]:
    """[B, T] grammar state of each token (`free` off the action tokens) and the number of action
    tokens the grammar does not allow (those and the rest of their message are marked `free`).

    Each run of consecutive action tokens is one message and starts in `start`.
    """
    tokens = np.asarray(tokens)
    mask = np.asarray(action_mask) > 0
    B, T = tokens.shape
    states = np.full((B, T), self.free, np.int32)
    state = np.full(B, DEAD, np.int64)
    off = 0
    previous = np.zeros(B, bool)
    for t in range(T):  # one column at a time, every row at once
      m = mask[:, t]
      state = np.where(m & ~previous, self.start, state)  # a message starts
      previous = m
      live = m & (state != DEAD)
      nxt = np.where(live, self.table[np.maximum(state, 0), tokens[:, t]], DEAD)
      allowed = live & (nxt != DEAD)
      states[allowed, t] = state[allowed]
      off += int((m & ~allowed).sum())
      state = np.where(m, nxt, DEAD)  # DEAD until the message ends once it leaves the grammar
    return states, off
