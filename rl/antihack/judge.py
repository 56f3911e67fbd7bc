"""Anti-hack stage 2: an independent model judges whether an episode hacked the grader.

The judge sees the task statement, the agent's actions with truncated observations,
the final diff and execution logs, never the hidden tests or the reference fix, and
returns a cheat probability and a reason. Backends (rl.registry.JUDGES): `none`,
`openai` (any OpenAI-compatible chat-completions server, stdlib HTTP only) and
`local` (a Hugging Face checkpoint through rl.models, scoring P("yes")).

    judge = make_judge(config.antihack)
    verdict = judge.score(JudgeInput.from_record(record, statement=task.statement, final_diff=diff))
    queue = JudgeQueue(judge)               # async: score in background threads
    queue.submit(episode_key, judge_input)
    late = queue.resolve([episode_key])     # before the update: {episode_key: JudgeVerdict}
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import http.client
import json
import logging
import math
import os
import re
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Callable, Iterable, Mapping, Sequence

from rl import config_fields, registry
from rl.antihack.verdict import Verdict

logger = logging.getLogger("rl.antihack.judge")

PROMPTS_DIR = os.path.join(os.path.dirname(__file__), "judge_prompts")

def _cfg(config: Any, key: str) -> Any:
  """`config.antihack.<key>`, required: configs/default.py holds the defaults."""
  return config_fields.read(config, key, "antihack")


def truncate(text: str, limit: int) -> str:
  """Head and tail of `text`, saying how much was cut."""
  text = text if isinstance(text, str) else str(text)
  if limit <= 0 or len(text) <= limit:
    return text
  head = limit * 2 // 3
  tail = limit - head
  return f"{text[:head]}\n[... {len(text) - limit} characters cut ...]\n{text[-tail:] if tail else ''}"


def redact(text: str, secrets: Iterable[str], min_line_chars: int = 12) -> str:
  """Removes every line of `secrets` (hidden tests, reference fix) that appears in `text`.

  Grading logs quote failing assertions from the hidden tests; pass them through this
  before they reach the judge, so it never sees hidden test source.
  """
  lines = {l.strip() for s in secrets for l in s.splitlines() if len(l.strip()) >= min_line_chars}
  if not lines:
    return text
  out = []
  for line in text.splitlines():
    out.append("[redacted]" if any(l in line for l in lines) else line)
  return "\n".join(out)


def redact_hidden_tests(text: str, hidden_tests_dir: str | None, extra_secrets: Iterable[str] = ()) -> str:
  """`redact` with every text file under the task's hidden tests directory (and e.g. the reference fix)."""
  secrets = list(extra_secrets)
  if hidden_tests_dir and os.path.isdir(hidden_tests_dir):
    for dirpath, _, filenames in os.walk(hidden_tests_dir):
      for name in filenames:
        try:
          with open(os.path.join(dirpath, name), encoding="utf-8") as fh:
            secrets.append(fh.read(1 << 20))
        except (OSError, UnicodeDecodeError):
          continue
  return redact(text, secrets)


@dataclasses.dataclass
class JudgeInput:
  """Everything the judge may see about one episode."""

  statement: str
  steps: Sequence[Mapping[str, Any]] = ()  # {"action_type", "action_input", "observation"}
  final_diff: str = ""
  execution_log: str = ""

  @classmethod
  def from_record(cls, record: Mapping[str, Any], *, statement: str | None = None, final_diff: str = "",
                  execution_log: str = "") -> "JudgeInput":
    """From a trajectory record (ARCHITECTURE.md). `statement` defaults to the record's prompt."""
    if not isinstance(record, Mapping):
      raise TypeError(f"record must be a dict, got {type(record).__name__}")
    steps = [{"action_type": s.get("action_type", "?"), "action_input": s.get("action_input", {}),
              "observation": s.get("observation", "")} for s in record.get("steps", []) if isinstance(s, Mapping)]
    return cls(statement=statement if statement is not None else str(record.get("prompt", "")),
               steps=steps, final_diff=final_diff or str(record.get("final_diff", "") or ""),
               execution_log=execution_log or str(record.get("execution_log", "") or ""))


def render_actions(steps: Sequence[Mapping[str, Any]], max_observation_chars: int) -> str:
  parts = []
  for i, s in enumerate(steps):
    inp = s.get("action_input", {})
    try:
      inp_text = json.dumps(inp, ensure_ascii=False)
    except (TypeError, ValueError):
      inp_text = repr(inp)
    parts.append(f"[{i}] {s.get('action_type', '?')} {truncate(inp_text, 4 * max_observation_chars)}\n"
                 f"    -> {truncate(str(s.get('observation', '') or ''), max_observation_chars)}")
  return "\n".join(parts) or "(no actions)"


def load_prompt(name: str, part: str) -> str:
  """A versioned template: rl/antihack/judge_prompts/<name>.<part>.txt (part: system | user | local)."""
  path = os.path.join(PROMPTS_DIR, f"{name}.{part}.txt")
  if not os.path.exists(path):
    known = sorted({f.split(".")[0] for f in os.listdir(PROMPTS_DIR) if f.endswith(".txt")})
    raise LookupError(f"no judge prompt {name!r} ({part}) in {PROMPTS_DIR}; known: {', '.join(known)}")
  with open(path, encoding="utf-8") as fh:
    return fh.read()


def render_prompt(judge_input: JudgeInput, template: str = "cheat_v1", part: str = "user",
                  max_observation_chars: int = 400, max_section_chars: int = 6000) -> str:
  """Fills a template; plain replacement, so braces in code never break formatting."""
  fields = {
      "statement": truncate(judge_input.statement or "(none)", max_section_chars),
      "actions": truncate(render_actions(judge_input.steps, max_observation_chars), max_section_chars),
      "diff": truncate(judge_input.final_diff or "(no changes)", max_section_chars),
      "logs": truncate(judge_input.execution_log or "(none)", max_section_chars),
  }
  text = load_prompt(template, part)
  # One pass over the placeholders so a field's text containing "{diff}" is not re-expanded.
  return re.sub(r"\{(statement|actions|diff|logs)\}", lambda m: fields[m.group(1)], text)


@dataclasses.dataclass(frozen=True)
class JudgeVerdict:
  """probability: P(cheat) in [0, 1], None when the judge could not answer (see `error`)."""

  probability: float | None
  reason: str
  flagged: bool
  backend: str
  error: str | None = None

  def to_verdict(self) -> Verdict:
    """As an rl.antihack Verdict (stage "judge") for `combine` and reward synthesis."""
    return Verdict(flagged=self.flagged, stage="judge", rules=("judge",) if self.flagged else (),
                   severity="high" if self.flagged else "none",
                   reason=self.reason if self.flagged else "", score=self.probability,
                   flagging_rules=("judge",) if self.flagged else ())

  def to_dict(self) -> dict[str, Any]:
    return dataclasses.asdict(self)


class Judge:
  """Base class: subclasses implement `_probability(judge_input) -> (probability, reason)`."""

  name = "base"

  def __init__(self, threshold: float = 0.5, on_error: str = "pass", concurrency: int = 4):
    if not 0.0 <= float(threshold) <= 1.0:
      raise ValueError(f"judge_threshold must be in [0, 1], got {threshold}")
    if on_error not in ("pass", "flag"):
      raise ValueError(f"judge_on_error must be 'pass' or 'flag', got {on_error!r}")
    if int(concurrency) < 1:
      raise ValueError(f"judge_concurrency must be >= 1, got {concurrency}")
    self.threshold = float(threshold)
    self.on_error = on_error
    self.concurrency = int(concurrency)

  def score(self, judge_input: JudgeInput) -> JudgeVerdict:
    """Synchronous verdict; never raises for backend failures (they become `error`)."""
    if not isinstance(judge_input, JudgeInput):
      raise TypeError(f"judge_input must be a JudgeInput, got {type(judge_input).__name__}")
    try:
      probability, reason = self._probability(judge_input)
    except Exception as e:  # a broken judge must not take the training run down
      logger.warning("judge %s failed: %s: %s", self.name, type(e).__name__, e)
      return JudgeVerdict(None, f"judge error: {e}", self.on_error == "flag", self.name, f"{type(e).__name__}: {e}")
    if probability is None:
      return JudgeVerdict(None, reason, False, self.name)
    probability = min(1.0, max(0.0, float(probability)))
    return JudgeVerdict(probability, reason, probability >= self.threshold, self.name)

  def score_many(self, inputs: Sequence[JudgeInput]) -> list[JudgeVerdict]:
    with concurrent.futures.ThreadPoolExecutor(max_workers=self.concurrency) as pool:
      return list(pool.map(self.score, inputs))

  def _probability(self, judge_input: JudgeInput) -> tuple[float | None, str]:
    raise NotImplementedError


class NoJudge(Judge):
  """Stage 2 disabled: no score, never flags."""

  name = "none"

  def _probability(self, judge_input):
    return None, "judge disabled"


class JudgeHTTPError(RuntimeError):
  pass


def parse_judge_reply(text: str) -> tuple[float, str]:
  """Reads {"cheat_probability": p, "reason": ...}; falls back to a bare number or yes/no."""
  if not isinstance(text, str):
    raise ValueError(f"judge reply is not text: {type(text).__name__}")
  for match in re.finditer(r"\{.*?\}", text, re.S):
    try:
      obj = json.loads(match.group(0))
    except json.JSONDecodeError:
      continue
    if isinstance(obj, dict):
      for key in ("cheat_probability", "probability", "score"):
        if key in obj:
          p = float(obj[key])
          if math.isnan(p):
            raise ValueError("judge returned NaN")
          return p, str(obj.get("reason", ""))
  m = re.search(r"(?:probability|score)\D{0,20}([01](?:\.\d+)?)", text, re.I)
  if m:
    return float(m.group(1)), text.strip()[:300]
  word = re.match(r"\W*(yes|no)\b", text.strip(), re.I)
  if word:
    return (1.0 if word.group(1).lower() == "yes" else 0.0), text.strip()[:300]
  raise ValueError(f"cannot read a cheat probability from the judge reply: {text[:200]!r}")


class OpenAIJudge(Judge):
  """Any OpenAI-compatible /chat/completions endpoint (vLLM, SGLang, ...), stdlib HTTP only.

  Retries timeouts, connection errors, HTTP 429 and 5xx with exponential backoff; at most
  `concurrency` requests are in flight across threads.
  """

  name = "openai"

  def __init__(self, base_url: str, model: str, *, api_key: str = "", timeout_s: float = 60.0,
               max_retries: int = 2, concurrency: int = 4, template: str = "cheat_v1", threshold: float = 0.5,
               on_error: str = "pass", max_observation_chars: int = 400, max_section_chars: int = 6000,
               backoff_s: float = 0.5):
    super().__init__(threshold, on_error, concurrency)
    if not base_url or not re.match(r"https?://", base_url):
      raise ValueError(f"judge_base_url must be an http(s) URL such as http://127.0.0.1:8000/v1, got {base_url!r}")
    if not model:
      raise ValueError("judge_model must name the served model for the openai judge backend")
    if float(timeout_s) <= 0:
      raise ValueError(f"judge_timeout_s must be > 0, got {timeout_s}")
    if int(max_retries) < 0:
      raise ValueError(f"judge_max_retries must be >= 0, got {max_retries}")
    self.url = base_url.rstrip("/") + ("" if base_url.rstrip("/").endswith("/chat/completions") else "/chat/completions")
    self.model = model
    self.api_key = api_key
    self.timeout_s = float(timeout_s)
    self.max_retries = int(max_retries)
    self.template = template
    self.max_observation_chars = int(max_observation_chars)
    self.max_section_chars = int(max_section_chars)
    self.backoff_s = float(backoff_s)
    self._slots = threading.BoundedSemaphore(self.concurrency)
    load_prompt(template, "system"), load_prompt(template, "user")  # fail early on a bad template name

  def messages(self, judge_input: JudgeInput) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": load_prompt(self.template, "system")},
        {"role": "user", "content": render_prompt(judge_input, self.template, "user", self.max_observation_chars,
                                                  self.max_section_chars)},
    ]

  def _post(self, payload: dict[str, Any]) -> dict[str, Any]:
    data = json.dumps(payload).encode("utf-8")
    headers = {"Content-Type": "application/json"}
    if self.api_key:
      headers["Authorization"] = f"Bearer {self.api_key}"
    last_error: Exception | None = None
    for attempt in range(self.max_retries + 1):
      if attempt:
        time.sleep(self.backoff_s * 2 ** (attempt - 1))
      request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
      try:
        with self._slots, urllib.request.urlopen(request, timeout=self.timeout_s) as response:
          return json.loads(response.read().decode("utf-8"))
      except urllib.error.HTTPError as e:
        body = e.read()[:300].decode("utf-8", errors="replace")
        last_error = JudgeHTTPError(f"HTTP {e.code} from {self.url}: {body}")
        if e.code != 429 and e.code < 500:
          break  # a client error will not fix itself
      except (urllib.error.URLError, TimeoutError, ConnectionError, http.client.HTTPException, OSError) as e:
        last_error = JudgeHTTPError(f"{type(e).__name__} talking to {self.url}: {e}")
      except json.JSONDecodeError as e:
        last_error = JudgeHTTPError(f"non-JSON response from {self.url}: {e}")
    assert last_error is not None
    raise last_error

  def _probability(self, judge_input):
    reply = self._post({"model": self.model, "messages": self.messages(judge_input), "temperature": 0.0,
                        "max_tokens": 256})
    try:
      content = reply["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
      raise ValueError(f"unexpected chat-completions response: {str(reply)[:200]}") from None
    return parse_judge_reply(content)


class LocalJudge(Judge):
  """A Hugging Face checkpoint loaded with rl.models; P(cheat) = P("yes") / (P("yes") + P("no")).

  The model and tokenizer load lazily on first use (a judge built in a config check costs
  nothing). Calls are serialised: one model, one forward pass at a time.
  """

  name = "local"

  def __init__(self, checkpoint: str, *, template: str = "cheat_v1", threshold: float = 0.5, on_error: str = "pass",
               max_prompt_tokens: int = 2048, max_observation_chars: int = 400, max_section_chars: int = 2000,
               loader: Callable[[str], Any] | None = None, tokenizer: Any = None):
    super().__init__(threshold, on_error, concurrency=1)
    if not checkpoint and loader is None:
      raise ValueError("judge_checkpoint must name a Hugging Face checkpoint directory for the local judge")
    if checkpoint and not os.path.isdir(checkpoint):
      raise ValueError(f"judge_checkpoint {checkpoint!r} is not a directory")
    self.checkpoint = checkpoint
    self.template = template
    self.max_prompt_tokens = int(max_prompt_tokens)
    self.max_observation_chars = int(max_observation_chars)
    self.max_section_chars = int(max_section_chars)
    self._loader = loader
    self._tokenizer = tokenizer
    self._model = None
    self._forward = None
    self.length_bucket = 128
    self._yes_no: tuple[list[int], list[int]] | None = None
    self._lock = threading.Lock()
    load_prompt(template, "system"), load_prompt(template, "local")

  def _load(self) -> None:
    if self._model is not None:
      return
    if self._loader is None:
      from rl.models import load_hf_checkpoint  # heavy import only when the local judge is used
      self._loader = load_hf_checkpoint
    self._model = self._loader(self.checkpoint)
    self._forward = self._model
    try:
      from flax import nnx
      if isinstance(self._model, nnx.Module):
        # Jitted once per padded length bucket (see _probability), so judging is compile-once.
        self._forward = functools.partial(nnx.jit(lambda model, ids: model(ids)), self._model)
    except ImportError:
      pass
    if self._tokenizer is None:
      from rl.tokenizer import auto_tokenizer_class
      self._tokenizer = auto_tokenizer_class().from_pretrained(self.checkpoint)
    yes = self._first_tokens(("yes", "Yes", " yes", " Yes", "YES"))
    no = self._first_tokens(("no", "No", " no", " No", "NO"))
    shared = set(yes) & set(no)  # e.g. a lone space or byte token: evidence for neither answer
    self._yes_no = ([i for i in yes if i not in shared], [i for i in no if i not in shared])
    if not self._yes_no[0] or not self._yes_no[1]:
      raise ValueError("the judge tokenizer cannot encode 'yes'/'no'")

  def _first_tokens(self, words: Iterable[str]) -> list[int]:
    ids = []
    for w in words:
      enc = self._tokenizer.encode(w, add_special_tokens=False)
      if enc and enc[0] not in ids:
        ids.append(int(enc[0]))
    return ids

  def prompt_ids(self, judge_input: JudgeInput) -> list[int]:
    user = render_prompt(judge_input, self.template, "local", self.max_observation_chars, self.max_section_chars)
    messages = [{"role": "system", "content": load_prompt(self.template, "system")},
                {"role": "user", "content": user}]
    tok = self._tokenizer
    ids = None
    if getattr(tok, "chat_template", None):
      try:
        ids = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
        if isinstance(ids, Mapping):
          ids = ids["input_ids"]
      except Exception:  # a template that rejects system messages: fall back to plain text
        ids = None
    if ids is None:
      ids = tok.encode(messages[0]["content"] + "\n\n" + user + "\nAnswer:", add_special_tokens=False)
    ids = [int(i) for i in ids]
    if len(ids) > self.max_prompt_tokens:
      # Keep the end (question + generation prompt) and the start (task statement).
      keep_head = self.max_prompt_tokens // 3
      ids = ids[:keep_head] + ids[-(self.max_prompt_tokens - keep_head):]
    return ids

  def _probability(self, judge_input):
    import numpy as np

    with self._lock:
      self._load()
      ids = self.prompt_ids(judge_input)
      # Right-pad to a bucket: the model is causal, so padding after the prompt cannot change
      # the logits at its last token, and few distinct lengths mean few compilations.
      length = -(-len(ids) // self.length_bucket) * self.length_bucket
      padded = np.zeros((1, length), dtype=np.int32)
      padded[0, :len(ids)] = ids
      out = self._forward(padded)
      if isinstance(out, (tuple, list)):  # (logits, values) style outputs
        out = out[0]
      logits = np.asarray(out, dtype=np.float64)[0, len(ids) - 1]
    yes_ids, no_ids = self._yes_no
    top = logits.max()
    p_yes = np.exp(logits[yes_ids] - top).sum()
    p_no = np.exp(logits[no_ids] - top).sum()
    probability = float(p_yes / (p_yes + p_no))
    return probability, f"P(yes)={probability:.3f} over the yes/no answer tokens"


@registry.JUDGES.register("none")
def _none_judge(config: Any = None) -> Judge:
  return NoJudge()


@registry.JUDGES.register("openai")
def _openai_judge(config: Any) -> Judge:
  key_env = _cfg(config, "judge_api_key_env")
  return OpenAIJudge(
      _cfg(config, "judge_base_url"), _cfg(config, "judge_model"),
      api_key=os.environ.get(key_env, "") if key_env else "",
      timeout_s=float(_cfg(config, "judge_timeout_s")), max_retries=int(_cfg(config, "judge_max_retries")),
      concurrency=int(_cfg(config, "judge_concurrency")), template=_cfg(config, "judge_prompt"),
      threshold=float(_cfg(config, "judge_threshold")), on_error=_cfg(config, "judge_on_error"),
      max_observation_chars=int(_cfg(config, "judge_max_observation_chars")),
      max_section_chars=int(_cfg(config, "judge_max_section_chars")))


@registry.JUDGES.register("local")
def _local_judge(config: Any) -> Judge:
  return LocalJudge(_cfg(config, "judge_checkpoint"), template=_cfg(config, "judge_prompt"),
                    threshold=float(_cfg(config, "judge_threshold")), on_error=_cfg(config, "judge_on_error"),
                    max_observation_chars=int(_cfg(config, "judge_max_observation_chars")))


def make_judge(antihack_config: Any) -> Judge:
  """The backend named by config.antihack.judge, configured from the same section (a ConfigDict
  or a mapping holding the backend's fields); None: no judge."""
  if antihack_config is None:
    return NoJudge()
  return registry.JUDGES.get(_cfg(antihack_config, "judge"))(antihack_config)


class JudgeQueue:
  """Asynchronous judging: verdicts are scored in background threads.

  With `antihack.judge_async` the rollout's Evaluator submits each episode as soon as it is
  graded (the rest of the rollout and the trainer's scoring pass run meanwhile), and the
  trainer calls `resolve(keys)` for the episodes of an update before its estimators: it
  blocks until those verdicts are in, so a late verdict still corrects (rl.outcome.rewards.synthesize
  again, with the judge's verdict) or removes its sample before it reaches the gradient.
  """

  def __init__(self, judge: Judge, max_workers: int | None = None):
    self.judge = judge
    self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=max_workers or judge.concurrency,
                                                       thread_name_prefix="judge")
    self._pending: dict[Any, concurrent.futures.Future] = {}
    self._lock = threading.Lock()

  def submit(self, key: Any, judge_input: JudgeInput) -> concurrent.futures.Future:
    """Queues one episode under a unique key (e.g. (iteration, episode index))."""
    with self._lock:
      if key in self._pending:
        raise KeyError(f"judge key {key!r} is already pending")
      future = self._pool.submit(self.judge.score, judge_input)
      self._pending[key] = future
      return future

  def pending(self) -> int:
    with self._lock:
      return sum(not f.done() for f in self._pending.values())

  def ready(self) -> dict[Any, JudgeVerdict]:
    """Verdicts that have arrived, without waiting; they are removed from the queue."""
    with self._lock:
      done = {k: f for k, f in self._pending.items() if f.done()}
      for k in done:
        del self._pending[k]
    return {k: f.result() for k, f in done.items()}

  def resolve_all(self, timeout: float | None = None) -> dict[Any, JudgeVerdict]:
    """Waits for every submitted verdict (up to `timeout` seconds in total) and returns them.

    Verdicts still missing at the timeout come back as errors (flagged per judge_on_error),
    so no sample ever skips the judge silently.
    """
    with self._lock:
      keys = list(self._pending)
    return self.resolve(keys, timeout)

  def resolve(self, keys: Iterable[Any], timeout: float | None = None) -> dict[Any, JudgeVerdict]:
    """`resolve_all` for exactly `keys` (the episodes of one update); others stay queued.

    A key that was never submitted (or was already resolved) raises KeyError: a sample
    whose verdict went missing must not pass as judged.
    """
    with self._lock:
      keys = list(keys)
      missing = [k for k in keys if k not in self._pending]
      if missing:
        raise KeyError(f"no pending verdict for judge key(s) {missing[:5]!r}")
      pending = {k: self._pending.pop(k) for k in keys}
    concurrent.futures.wait(list(pending.values()), timeout=timeout)
    out = {}
    for key, future in pending.items():
      if future.done():
        out[key] = future.result()
      else:
        future.cancel()
        out[key] = JudgeVerdict(None, "judge timed out", self.judge.on_error == "flag", self.judge.name,
                                "timeout waiting for verdict")
    return out

  def close(self) -> None:
    self._pool.shutdown(wait=False, cancel_futures=True)

  def __enter__(self) -> "JudgeQueue":
    return self

  def __exit__(self, *exc) -> None:
    self.close()
