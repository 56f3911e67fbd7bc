"""Environment instrumentation: the ast backend on >= 20 varied programs, verification, markers, llm backend."""

import ast
import concurrent.futures
import pathlib
import random
import shutil
import subprocess
import sys

import pytest

from configs import default
from rl import config_fields
from rl import registry
from rl.env import instrumentation as instr

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "instrumentation_programs"
PROGRAMS = sorted(FIXTURES.glob("p*.py"))
NONCE = "0123abcd"


def expected_stages(path: pathlib.Path) -> list[str]:
  first = path.read_text().splitlines()[0]
  assert first.startswith("# expect-stages:"), f"{path.name} lacks its expect-stages header"
  return [s for s in first.split(":", 1)[1].strip().split(",") if s]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> pathlib.Path:
  d = tmp_path_factory.mktemp("instr_data")
  rng = random.Random(0)
  rows = ["id,x1,x2,y"]
  for i in range(40):
    x1, x2 = round(rng.gauss(0, 1), 4), round(rng.gauss(0, 1), 4)
    rows.append(f"{i},{x1},{x2},{int(x1 + 0.5 * x2 + rng.gauss(0, 0.5) > 0)}")
  (d / "train.csv").write_text("\n".join(rows) + "\n")
  test_rows = ["id,x1,x2"] + [f"{i},{round(rng.gauss(0, 1), 4)},{round(rng.gauss(0, 1), 4)}" for i in range(40, 60)]
  (d / "test.csv").write_text("\n".join(test_rows) + "\n")
  return d


def run_program(source: str, data_dir: pathlib.Path, workdir: pathlib.Path) -> dict:
  workdir.mkdir(parents=True)
  for name in ("train.csv", "test.csv"):
    shutil.copy(data_dir / name, workdir / name)
  (workdir / "prog.py").write_bytes(source.encode("utf-8"))
  proc = subprocess.run([sys.executable, "prog.py"], cwd=workdir, capture_output=True, text=True, timeout=120)
  submission = workdir / "submission.csv"
  return {"rc": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr,
          "submission": submission.read_bytes() if submission.exists() else None}


def test_there_are_at_least_20_varied_programs():
  assert len(PROGRAMS) >= 20
  sources = {p.name: p.read_text() for p in PROGRAMS}
  assert any('if __name__ == "__main__"' in s for s in sources.values())
  assert any("class " in s for s in sources.values())
  assert sum("print(" in s for s in sources.values()) >= 10
  assert any("\t" in s for s in sources.values())


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_ast_instrumentation_is_verified_equivalent(path):
  source = path.read_text()
  result = instr.ASTInstrumenter().instrument(source, nonce=NONCE)
  expected = expected_stages(path)
  if not expected:
    assert result.source == source and not result.inserted
    return
  assert result.verified, result.fallback_reason
  ok, why = instr.verify_equivalent(source, result.source, NONCE)
  assert ok, why
  stripped, removed = instr.strip_markers(ast.parse(result.source), NONCE)
  assert removed == len(result.inserted)
  assert ast.dump(stripped) == ast.dump(ast.parse(source))
  assert set(expected) <= set(result.stages), f"stages not inserted: {set(expected) - set(result.stages)}"
  # Text is inserted, never rewritten: the original lines survive in order.
  new_lines = result.source.splitlines()
  inserted_lines = {line - 1 for line, _ in result.inserted}
  assert [l for i, l in enumerate(new_lines) if i not in inserted_lines] == source.splitlines()


@pytest.mark.slow
def test_instrumented_programs_behave_identically_and_print_markers(data_dir, tmp_path):
  """Runs every program as written and instrumented (subprocesses, two at a time)."""
  jobs = []
  for path in PROGRAMS:
    source = path.read_text()
    jobs.append((path, source, instr.ASTInstrumenter().instrument(source, nonce=NONCE)))
  # Windows line endings must survive too.
  for path in PROGRAMS[1:3]:
    source = path.read_text().replace("\n", "\r\n")
    jobs.append((path, source, instr.ASTInstrumenter().instrument(source, nonce=NONCE)))

  def run_pair(k):
    path, source, result = jobs[k]
    return (run_program(source, data_dir, tmp_path / f"{k}_orig"),
            run_program(result.source, data_dir, tmp_path / f"{k}_instr"))

  with concurrent.futures.ThreadPoolExecutor(2) as pool:
    outcomes = list(pool.map(run_pair, range(len(jobs))))
  for (path, source, result), (orig, new) in zip(jobs, outcomes):
    name = path.name
    assert new["rc"] == orig["rc"], name
    assert instr.strip_marker_lines(new["stdout"], NONCE) == orig["stdout"], name
    assert new["submission"] == orig["submission"], name
    if orig["rc"] == 0:
      assert new["stderr"] == orig["stderr"], name
      if expected_stages(path):
        assert orig["submission"] is not None, f"{name} should write a submission"
    report = result.parse(new["stdout"])
    assert set(expected_stages(path)) <= set(report.stages), (name, report.stages)
    assert set(report.stages) <= set(result.stages), name
    assert report.forged == (1 if name.startswith("p04") else 0), name
    times = [report.first_seen[s] for s in report.stages]
    assert times == sorted(times), name


def test_crashing_program_is_credited_only_for_reached_stages(data_dir, tmp_path):
  path = FIXTURES / "p24_crashes_midway.py"
  result = instr.ASTInstrumenter().instrument(path.read_text(), nonce=NONCE)
  assert {"made_predictions", "wrote_submission"} <= set(result.stages)  # inserted ...
  out = run_program(result.source, data_dir, tmp_path / "crash")
  assert out["rc"] != 0
  report = result.parse(out["stdout"])  # ... but never reached
  assert report.stages == ["imported_packages", "loaded_data", "defined_model", "trained_model"]


def test_markers_go_after_the_operation():
  source = ("import pandas as pd\n"
            "df = pd.read_csv('train.csv')\n"
            "for _ in range(3):\n"
            "  model.fit(df)\n"
            "x = 1\n")
  result = instr.ASTInstrumenter().instrument(source, nonce=NONCE)
  lines = result.source.splitlines()
  assert lines[1].endswith("imported_packages\", __import__(\"time\").time(), flush=True)")
  assert lines[2].startswith("df = ")
  assert "loaded_data" in lines[3]
  # the training loop is marked once, after the loop, at the loop's indentation
  assert lines[6].startswith("print(") and "trained_model" in lines[6]
  assert lines[7] == "x = 1"


def test_one_line_compounds_and_semicolons_are_not_anchors():
  source = "if x: model.fit(X)\na = 1; model.fit(X)\n"
  result = instr.ASTInstrumenter().instrument(source, nonce=NONCE)
  assert result.source == source and not result.verified and result.fallback_reason == "no stage found"


def test_branches_mark_only_themselves():
  source = ("import csv\n"
            "if flag:\n"
            "  model.fit(X)\n"
            "else:\n"
            "  pass\n")
  result = instr.ASTInstrumenter().instrument(source, nonce=NONCE)
  lines = result.source.splitlines()
  assert "trained_model" in lines[4] and lines[4].startswith("  print(")
  assert lines[5] == "else:"


def test_unparseable_program_falls_back():
  result = instr.ASTInstrumenter().instrument("def broken(:\n  pass\n", nonce=NONCE)
  assert result.source == "def broken(:\n  pass\n"
  assert not result.verified and "does not parse" in result.fallback_reason


def test_no_final_newline_and_comment_after_anchor():
  source = "import os  # why\nimport sys"
  result = instr.ASTInstrumenter().instrument(source, nonce=NONCE)
  assert result.verified
  assert result.source.startswith("import os  # why\nimport sys\nprint(")


def test_verify_rejects_any_other_change():
  source = "import os\nx = 1\n"
  marker = instr.marker_statement("imported_packages", NONCE)
  assert instr.verify_equivalent(source, f"import os\n{marker}\nx = 1\n", NONCE) == (True, "")
  ok, why = instr.verify_equivalent(source, f"import os\n{marker}\nx = 2\n", NONCE)
  assert not ok and "differs" in why
  ok, _ = instr.verify_equivalent(source, f"import os\n{instr.marker_statement('imported_packages', 'ffffffff')}\nx = 1\n",
                                  NONCE)
  assert not ok  # a marker of another nonce is not ours to strip
  ok, why = instr.verify_equivalent(source, "import os\nprint(\n", NONCE)
  assert not ok and "does not parse" in why
  # a print that looks like a marker but carries a side effect is program code, not a marker
  sneaky = f"import os\nprint('[progress:{NONCE}] loaded_data', os.remove('x'), flush=True)\nx = 1\n"
  ok, why = instr.verify_equivalent(source, sneaky, NONCE)
  assert not ok and "differs" in why
  unknown_stage = f"import os\nprint('[progress:{NONCE}] slept', __import__('time').time(), flush=True)\nx = 1\n"
  assert not instr.verify_equivalent(source, unknown_stage, NONCE)[0]
  ok, _ = instr.verify_equivalent(source, f"import os\nx = print('[progress:{NONCE}] loaded_data')\nx = 1\n", NONCE)
  assert not ok


def test_parse_markers_ignores_forgeries_and_measures_stages():
  output = (f"hello\n[progress:{NONCE}] imported_packages 100.0\n"
            "[progress:ffffffff] wrote_submission 101.0\n"
            f"[progress:{NONCE}] loaded_data 102.5\n"
            f"[progress:{NONCE}] loaded_data 109.0\n"
            f"[progress:{NONCE}] not_a_stage 110.0\n"
            f"[progress:{NONCE}] trained_model 106.0\n")
  report = instr.parse_markers(output, NONCE, start_time=99.0)
  assert report.stages == ["imported_packages", "loaded_data", "trained_model"]
  assert report.count == 3 and report.forged == 1
  assert report.stage_seconds == pytest.approx({"imported_packages": 1.0, "loaded_data": 2.5, "trained_model": 3.5})
  metrics = report.metrics()
  assert metrics["instrumentation/stages"] == 3.0 and metrics["instrumentation/trained_model_s"] == pytest.approx(3.5)
  assert instr.strip_marker_lines(output, NONCE).startswith("hello\n[progress:ffffffff]")
  with pytest.raises(TypeError):
    instr.parse_markers(b"bytes", NONCE)


def test_bad_nonce_and_stage_are_rejected():
  with pytest.raises(ValueError, match="nonce"):
    instr.ASTInstrumenter().instrument("x = 1\n", nonce="not hex!")
  with pytest.raises(ValueError, match="unknown stage"):
    instr.marker_statement("slept", NONCE)


# --- llm backend with a fake frozen model -------------------------------------------------------------


def _ast_model(messages):
  """A 'model' that answers like a good instrumenter: the ast backend's output in a fence."""
  program = messages[1]["content"].split("Program:\n```python\n", 1)[1].rsplit("```", 1)[0]
  nonce = messages[1]["content"].split("[progress:", 1)[1].split("]", 1)[0]
  return "Here you go:\n```python\n" + instr.ASTInstrumenter().instrument(program, nonce=nonce).source + "```\n"


def test_llm_backend_prompt_states_the_constraints():
  messages = instr.llm_messages("import os\n", NONCE)
  text = messages[1]["content"]
  assert "AFTER" in text and "Change nothing else" in text and "whole program" in text
  assert instr.marker_statement("wrote_submission", NONCE) in text


def test_llm_backend_accepts_a_faithful_rewrite():
  source = (FIXTURES / "p02_functions_main_guard.py").read_text()
  result = instr.LLMInstrumenter(_ast_model).instrument(source, nonce=NONCE)
  assert result.verified and result.backend == "llm"
  assert set(expected_stages(FIXTURES / "p02_functions_main_guard.py")) <= set(result.stages)


@pytest.mark.parametrize("reply,reason", [
    ("```python\nimport os\nx = 2\n```", "differs"),
    ("I cannot help with that.", "parse"),
    ("```python\nimport os\nprint('[progress:ffffffff] imported_packages', 1)\nx = 1\n```", "differs"),
])
def test_llm_backend_falls_back_on_unfaithful_replies(reply, reason):
  result = instr.LLMInstrumenter(lambda messages: reply).instrument("import os\nx = 1\n", nonce=NONCE)
  assert result.source == "import os\nx = 1\n" and not result.verified
  assert reason in result.fallback_reason


def test_llm_backend_errors_fall_back():
  def broken(messages):
    raise ConnectionError("server down")

  result = instr.LLMInstrumenter(broken).instrument("import os\n", nonce=NONCE)
  assert result.source == "import os\n" and "server down" in result.fallback_reason


def instrumentation(**fields):
  """configs/default.py's `config.instrumentation` (the one source of its defaults), `fields` changed."""
  return {**default.get_config().instrumentation.to_dict(), **fields}


def test_registry_and_config():
  assert {"none", "ast", "llm"} <= set(registry.INSTRUMENTERS.names())
  assert isinstance(instr.make_instrumenter(instrumentation(backend="ast")), instr.ASTInstrumenter)
  assert isinstance(instr.make_instrumenter(None), instr.NoInstrumenter)
  none = instr.make_instrumenter(instrumentation()).instrument("import os\n")
  assert none.source == "import os\n" and not none.fallback_reason
  with pytest.raises(ValueError, match="needs config.instrumentation.llm_base_url"):
    instr.make_instrumenter(instrumentation(backend="llm"))
  llm = registry.INSTRUMENTERS.get("llm")(instrumentation(backend="llm"), complete=_ast_model)
  assert llm.instrument("import os\n", nonce=NONCE).verified
  with pytest.raises(LookupError, match="known instrumenters"):
    instr.make_instrumenter(instrumentation(backend="magic"))
  # configs/default.py is the one source of the settings: no second default in rl.env.instrumentation.
  cfg = instrumentation(backend="llm", llm_base_url="http://127.0.0.1:9/v1", llm_model="m")
  del cfg["llm_timeout_s"]
  with pytest.raises(config_fields.ConfigError, match=r"^config\.instrumentation\.llm_timeout_s is missing"):
    instr.make_instrumenter(cfg)


def test_llm_backend_over_an_openai_compatible_server():
  """The default `complete` goes through the judge's HTTP client to a chat-completions server."""
  stub = _StubModelServer()
  try:
    cfg = instrumentation(backend="llm", llm_base_url=stub.url, llm_model="frozen-instrumenter")
    result = instr.make_instrumenter(cfg).instrument((FIXTURES / "p01_pandas_sklearn_script.py").read_text(),
                                                      nonce=NONCE)
  finally:
    stub.close()
  assert result.verified and result.backend == "llm", result.fallback_reason
  assert len(result.stages) == 6
  assert stub.seen[0]["model"] == "frozen-instrumenter" and stub.seen[0]["temperature"] == 0.0


class _StubModelServer:
  """An OpenAI-compatible chat-completions server on 127.0.0.1 that answers like a frozen model
  would, well or badly: `mode` picks the next answers (see `_reply`)."""

  def __init__(self):
    import http.server
    import json
    import threading
    import time

    stub = self
    self.mode, self.failures_left = "faithful", 0
    self.seen: list[dict] = []  # request bodies

    class Handler(http.server.BaseHTTPRequestHandler):
      def do_POST(self):  # noqa: N802 (http.server naming)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        stub.seen.append(body)
        if stub.mode == "slow":
          time.sleep(1.0)  # past the client's timeout
        if stub.failures_left:
          stub.failures_left -= 1
          self._send(500, b'{"error": "overloaded"}')
          return
        if stub.mode == "not_json":
          self._send(200, b"<html>gateway error</html>")
          return
        reply = {"choices": [{"message": {"role": "assistant", "content": stub._reply(body["messages"])}}]}
        self._send(200, json.dumps(reply).encode())

      def _send(self, code, data):
        try:
          self.send_response(code)
          self.send_header("Content-Type", "application/json")
          self.send_header("Content-Length", str(len(data)))
          self.end_headers()
          self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
          pass  # the client gave up waiting ("slow"): what a real server sees too

      def log_message(self, *args):
        pass

    self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
    self.thread.start()
    self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

  def _reply(self, messages) -> str:
    good = _ast_model(messages)  # a fenced, faithfully instrumented program
    program = good.split("```python\n", 1)[1].rsplit("```", 1)[0]
    if self.mode in ("faithful", "slow"):
      return good
    if self.mode == "chatty":  # prose around the fence: the program is still the block
      return "Sure! I added the progress prints.\n\n" + good + "\nLet me know if you need anything else."
    if self.mode == "changes_program":  # instruments, and also "fixes" something
      return "```python\n" + program + "LEARNING_RATE_OVERRIDE = 0.1\n```\n"
    if self.mode == "no_code_block":
      return "I have inserted the progress prints after each stage as requested."
    if self.mode == "unchanged":  # the program back without any marker
      original = messages[1]["content"].split("Program:\n```python\n", 1)[1].rsplit("```", 1)[0]
      return "```python\n" + original + "```"
    raise AssertionError(self.mode)

  def close(self):
    self.server.shutdown()
    self.server.server_close()


@pytest.mark.slow
def test_llm_backend_against_a_stub_model_server_that_answers_well_and_badly():
  """The llm backend end to end, over HTTP, on every fixture program and every kind of answer:
  faithful and chatty answers are used; a changed program, prose without code, the program
  without markers, a non-JSON body and a server past its timeout all fall back to the original
  program (which then runs unchanged); a 500 is retried. The fallback rate on the wrong answers
  must be 100%: a model may cost markers, never correctness."""
  stub = _StubModelServer()
  try:
    cfg = instrumentation(backend="llm", llm_base_url=stub.url, llm_model="stub", llm_timeout_s=0.5)
    instrumenter = instr.make_instrumenter(cfg)
    outcomes: dict[str, list] = {}
    programs = [p for p in PROGRAMS if expected_stages(p)]  # programs with something to mark
    for mode in ("faithful", "chatty", "changes_program", "no_code_block", "unchanged"):
      stub.mode = mode
      outcomes[mode] = [instrumenter.instrument(p.read_text(), nonce=NONCE)
                        for p in (programs if mode in ("faithful", "chatty") else programs[::3])]
    source = (FIXTURES / "p01_pandas_sklearn_script.py").read_text()
    stub.mode = "not_json"
    outcomes["not_json"] = [instrumenter.instrument(source, nonce=NONCE)]
    stub.mode, stub.failures_left = "faithful", 1
    outcomes["retried_500"] = [instrumenter.instrument(source, nonce=NONCE)]
    stub.mode = "slow"
    outcomes["timeout"] = [instrumenter.instrument(source, nonce=NONCE)]
  finally:
    stub.close()
  assert len(programs) >= 20
  for mode in ("faithful", "chatty", "retried_500"):
    for program, result in zip(programs, outcomes[mode]):
      assert result.verified and result.backend == "llm", (mode, program.name, result.fallback_reason)
      assert set(expected_stages(program)) <= set(result.stages), (mode, program.name)
  # The program back without markers reads "no stage found", or "no marker was inserted but
  # the text changed" where the model's copy lost whitespace.
  reasons = {"changes_program": ("differs",), "no_code_block": ("parse",),
             "unchanged": ("no stage found", "no marker was inserted"),
             "not_json": ("non-JSON",), "timeout": ("Timeout",)}
  wrong = [(mode, r) for mode in reasons for r in outcomes[mode]]
  fell_back = [r for _, r in wrong if not r.verified]
  assert len(fell_back) / len(wrong) == 1.0
  for mode, result in wrong:
    assert result.source == result.original, mode
    assert any(reason in result.fallback_reason for reason in reasons[mode]), (mode, result.fallback_reason)
