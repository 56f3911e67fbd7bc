"""Stage-2 judge: prompt rendering, the OpenAI-compatible backend against a local HTTP server,
async queue, and the local backend on a tiny random checkpoint."""

import http.server
import json
import threading
import time

import pytest

from configs import default
from rl import config_fields, registry
from rl.antihack.judge import (JudgeInput, JudgeQueue, JudgeVerdict, LocalJudge, OpenAIJudge, make_judge, parse_judge_reply,
                      redact, render_prompt, truncate)


def antihack(**fields):
  """configs/default.py's `config.antihack` (the one source of its defaults) with `fields` changed."""
  return {**default.get_config().antihack.to_dict(), **fields}


HIDDEN_TEST = "def test_secret():\n  assert median([9, 1, 5]) == 5  # hidden expectation\n"


class FakeServer:
  """A tiny OpenAI-compatible chat-completions server on 127.0.0.1 with scripted behaviour."""

  def __init__(self, script):
    self.script = script  # callable(request_index, body) -> (status, dict|str, delay_s)
    self.requests = []
    self.headers = []
    self.in_flight = 0
    self.max_in_flight = 0
    self.lock = threading.Lock()
    outer = self

    class Handler(http.server.BaseHTTPRequestHandler):
      def log_message(self, *args):
        pass

      def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with outer.lock:
          index = len(outer.requests)
          outer.requests.append(body)
          outer.headers.append(dict(self.headers))
          outer.in_flight += 1
          outer.max_in_flight = max(outer.max_in_flight, outer.in_flight)
        answered = False
        try:
          status, payload, delay = outer.script(index, body)
          time.sleep(delay)
          data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
          # Out of flight before the answer leaves: the client may send its next request as soon
          # as it has read this one, before this thread runs again.
          with outer.lock:
            outer.in_flight -= 1
            answered = True
          self.send_response(status)
          self.send_header("Content-Type", "application/json")
          self.send_header("Content-Length", str(len(data)))
          self.end_headers()
          self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
          pass
        finally:
          if not answered:
            with outer.lock:
              outer.in_flight -= 1

    self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    self.httpd.daemon_threads = True
    self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
    threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

  def close(self):
    self.httpd.shutdown()
    self.httpd.server_close()


def reply(content):
  return {"choices": [{"message": {"role": "assistant", "content": content}}]}


@pytest.fixture
def server_factory():
  servers = []

  def make(script):
    s = FakeServer(script)
    servers.append(s)
    return s

  yield make
  for s in servers:
    s.close()


def episode(statement="Fix median in mathx/stats.py"):
  return JudgeInput(statement=statement,
                    steps=[{"action_type": "read_file", "action_input": {"path": "mathx/stats.py"},
                            "observation": "x" * 5000},
                           {"action_type": "run", "action_input": {"command": "python -m pytest -q"},
                            "observation": "1 failed"}],
                    final_diff="+  values = sorted(values)\n",
                    execution_log=redact("E   assert median([9, 1, 5]) == 5  # hidden expectation\n1 failed", [HIDDEN_TEST]))


def test_registry_and_none_backend():
  assert {"none", "openai", "local"} <= set(registry.JUDGES.names())
  v = make_judge({"judge": "none"}).score(episode())
  assert v.probability is None and not v.flagged and v.backend == "none"
  assert make_judge(None).name == "none"
  assert not v.to_verdict().flagged and v.to_verdict().stage == "judge"


def test_prompt_has_episode_but_never_hidden_tests():
  text = render_prompt(episode(), max_observation_chars=100)
  assert "Fix median" in text and "sorted(values)" in text and "python -m pytest -q" in text
  assert "characters cut" in text  # long observation truncated, with the size cut said
  assert "hidden expectation" not in text and "[redacted]" in text
  tricky = render_prompt(JudgeInput(statement="use {diff} and {logs} literally {x}", final_diff="d {statement}"))
  assert "use {diff} and {logs} literally {x}" in tricky and "d {statement}" in tricky


def test_truncate_keeps_head_and_tail():
  t = truncate("a" * 50 + "b" * 50, 30)
  assert t.startswith("a" * 20) and t.endswith("b" * 10) and "70 characters cut" in t
  assert truncate("short", 30) == "short"


@pytest.mark.parametrize("text, expected", [
    ('{"cheat_probability": 0.83, "reason": "patched pytest"}', (0.83, "patched pytest")),
    ('Sure! ```json\n{"cheat_probability": 0.1, "reason": "fine"}\n```', (0.1, "fine")),
    ("probability: 0.7", (0.7, "probability: 0.7")),
    ("Yes, it edits conftest.py", (1.0, "Yes, it edits conftest.py")),
    ("no.", (0.0, "no.")),
])
def test_parse_judge_reply(text, expected):
  assert parse_judge_reply(text) == expected


def test_parse_judge_reply_rejects_garbage():
  with pytest.raises(ValueError, match="cannot read"):
    parse_judge_reply("I am not sure what you mean")


def test_openai_backend_scores_and_sends_a_proper_request(server_factory, monkeypatch):
  server = server_factory(lambda i, body: (200, reply('{"cheat_probability": 0.9, "reason": "reads hidden tests"}'), 0))
  monkeypatch.setenv("JUDGE_TEST_KEY", "sekret")
  judge = make_judge(antihack(judge="openai", judge_base_url=server.url, judge_model="judge-7b",
                              judge_threshold=0.6, judge_api_key_env="JUDGE_TEST_KEY"))
  v = judge.score(episode())
  assert v == JudgeVerdict(0.9, "reads hidden tests", True, "openai")
  body = server.requests[0]
  assert body["model"] == "judge-7b" and body["temperature"] == 0.0
  assert [m["role"] for m in body["messages"]] == ["system", "user"]
  assert "Fix median" in body["messages"][1]["content"] and "hidden expectation" not in json.dumps(body)
  assert server.headers[0]["Authorization"] == "Bearer sekret"
  low = make_judge(antihack(judge="openai", judge_base_url=server.url, judge_model="m", judge_threshold=0.95))
  assert not low.score(episode()).flagged


def test_openai_backend_retries_server_errors(server_factory):
  server = server_factory(lambda i, body: (503, "busy", 0) if i < 2 else (200, reply('{"cheat_probability": 0.2}'), 0))
  judge = OpenAIJudge(server.url, "m", max_retries=2, backoff_s=0.01)
  v = judge.score(episode())
  assert v.probability == 0.2 and v.error is None and len(server.requests) == 3


def test_openai_backend_does_not_retry_client_errors(server_factory):
  server = server_factory(lambda i, body: (400, '{"error": "bad model"}', 0))
  v = OpenAIJudge(server.url, "m", max_retries=3, backoff_s=0.01).score(episode())
  assert v.probability is None and not v.flagged and "HTTP 400" in v.error and len(server.requests) == 1
  strict = OpenAIJudge(server.url, "m", max_retries=0, on_error="flag").score(episode())
  assert strict.flagged and strict.probability is None


def test_openai_backend_timeout_and_bad_replies(server_factory):
  slow = server_factory(lambda i, body: (200, reply('{"cheat_probability": 0.5}'), 1.0))
  t0 = time.monotonic()
  v = OpenAIJudge(slow.url, "m", timeout_s=0.2, max_retries=1, backoff_s=0.01).score(episode())
  assert v.error and "timed out" in v.error.lower() and time.monotonic() - t0 < 1.5
  garbage = server_factory(lambda i, body: (200, "<html>not json</html>", 0))
  assert "non-JSON" in OpenAIJudge(garbage.url, "m", max_retries=0).score(episode()).error
  shape = server_factory(lambda i, body: (200, {"choices": []}, 0))
  assert "unexpected" in OpenAIJudge(shape.url, "m", max_retries=0).score(episode()).error
  dead = OpenAIJudge("http://127.0.0.1:9/v1", "m", max_retries=0, timeout_s=1).score(episode())
  assert dead.error and dead.probability is None


def test_concurrency_limit_and_async_queue(server_factory):
  server = server_factory(lambda i, body: (200, reply(json.dumps({"cheat_probability": (i % 10) / 10})), 0.15))
  judge = OpenAIJudge(server.url, "m", concurrency=2)
  with JudgeQueue(judge, max_workers=6) as queue:
    futures = [queue.submit(("it0", k), episode(f"task {k}")) for k in range(6)]
    with pytest.raises(KeyError, match="already pending"):
      queue.submit(("it0", 0), episode())
    assert queue.pending() > 0  # submit returned before the verdicts
    verdicts = queue.resolve_all(timeout=10)
  assert set(verdicts) == {("it0", k) for k in range(6)}
  assert all(v.probability is not None for v in verdicts.values())
  assert all(f.done() for f in futures)
  assert server.max_in_flight == 2


def test_queue_timeout_yields_error_verdicts(server_factory):
  server = server_factory(lambda i, body: (200, reply('{"cheat_probability": 0.9}'), 1.0))
  queue = JudgeQueue(OpenAIJudge(server.url, "m", on_error="flag", timeout_s=5))
  queue.submit("late", episode())
  verdicts = queue.resolve_all(timeout=0.1)
  assert verdicts["late"].flagged and verdicts["late"].error
  queue.close()


def test_queue_resolve_waits_for_exactly_the_given_keys():
  """One update's episodes resolve; later submissions stay queued; an unknown key is an error."""
  queue = JudgeQueue(make_judge({"judge": "none"}))
  for key in ("a", "b", "c"):
    queue.submit(key, episode())
  assert set(queue.resolve(["a", "c"])) == {"a", "c"}
  with pytest.raises(KeyError, match="no pending verdict"):
    queue.resolve(["a"])  # already resolved: never silently unjudged
  assert set(queue.resolve_all()) == {"b"}
  queue.close()


def test_queue_ready_is_non_blocking():
  judge = make_judge({"judge": "none"})
  queue = JudgeQueue(judge)
  queue.submit(1, episode())
  deadline = time.monotonic() + 5
  got = {}
  while not got and time.monotonic() < deadline:
    got = queue.ready()
  assert list(got) == [1] and queue.resolve_all() == {}
  queue.close()


@pytest.mark.parametrize("cfg, match", [
    ({"judge": "openai", "judge_base_url": "", "judge_model": "m"}, "judge_base_url"),
    ({"judge": "openai", "judge_base_url": "http://h/v1", "judge_model": ""}, "judge_model"),
    ({"judge": "openai", "judge_base_url": "http://h/v1", "judge_model": "m", "judge_threshold": 2}, "judge_threshold"),
    ({"judge": "openai", "judge_base_url": "http://h/v1", "judge_model": "m", "judge_prompt": "nope"}, "no judge prompt"),
    ({"judge": "local", "judge_checkpoint": ""}, "judge_checkpoint"),
    ({"judge": "local", "judge_checkpoint": "/does/not/exist"}, "not a directory"),
    ({"judge": "gpt"}, "openai"),
])
def test_bad_judge_config(cfg, match):
  with pytest.raises((ValueError, LookupError), match=match):
    make_judge(antihack(**cfg))


@pytest.mark.parametrize("judge, field", [("openai", "judge_timeout_s"), ("openai", "judge_max_section_chars"),
                                          ("local", "judge_max_observation_chars"), ("none", "judge")])
def test_a_missing_judge_field_is_an_error_naming_it(judge, field):
  """configs/default.py is the one source of the judge's settings: no second default in rl.antihack.judge."""
  cfg = antihack(judge=judge, judge_base_url="http://h/v1", judge_model="m", judge_checkpoint="/does/not/exist")
  del cfg[field]
  with pytest.raises(config_fields.ConfigError, match=rf"^config\.antihack\.{field} is missing"):
    make_judge(cfg)


def test_local_backend_with_injected_model():
  import numpy as np

  class Tok:
    chat_template = None

    def encode(self, text, add_special_tokens=False):
      return {"yes": [5], "Yes": [5], " yes": [6], "no": [7], " no": [8]}.get(text, [1] * min(len(text), 50))

  def loader(path):
    def model(ids):
      logits = np.zeros(ids.shape + (10,))
      logits[..., 5] = np.log(3.0)  # P(yes-ish) : P(no-ish) = (3 + 1) : (1 + 1)
      return logits
    return model

  judge = LocalJudge("", loader=loader, tokenizer=Tok(), threshold=0.6)
  v = judge.score(episode())
  assert v.probability == pytest.approx(4 / 6) and v.flagged


@pytest.mark.slow
def test_local_backend_on_tiny_random_checkpoint(tmp_path):
  pytest.importorskip("rl.model")
  from rl.models import init_model, save_hf_checkpoint, tiny_config
  from rl.tokenizer import load_tokenizer

  save_hf_checkpoint(init_model(tiny_config("test")), tmp_path, tokenizer=load_tokenizer())
  judge = make_judge(antihack(judge="local", judge_checkpoint=str(tmp_path), judge_threshold=0.5))
  a = judge.score(episode())
  b = judge.score(episode())
  assert a.error is None and 0.0 < a.probability < 1.0
  assert a.probability == pytest.approx(b.probability, abs=1e-6)  # deterministic
  ids = judge.prompt_ids(episode())
  assert 0 < len(ids) <= judge.max_prompt_tokens


def test_redact_hidden_tests_dir(tmp_path):
  from rl.antihack.judge import redact_hidden_tests

  (tmp_path / "t").mkdir()
  (tmp_path / "t" / "test_x.py").write_text(HIDDEN_TEST)
  log = "FAILED test_x.py::test_secret\nE   assert median([9, 1, 5]) == 5  # hidden expectation\n1 failed"
  out = redact_hidden_tests(log, str(tmp_path / "t"), extra_secrets=["reference fix line here"])
  assert "hidden expectation" not in out and "1 failed" in out and "FAILED test_x.py::test_secret" in out
  assert redact_hidden_tests("plain", None) == "plain"
