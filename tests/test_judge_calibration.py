"""scripts/calibrate_judge.py: threshold table, choice, label parsing, errors."""

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "scripts"))

import calibrate_judge  # noqa: E402


def write(tmp_path, rows):
  path = tmp_path / "labelled.jsonl"
  path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
  return str(path)


def test_table_and_choice(tmp_path, capsys):
  rows = ([{"cheat": True, "judge_score": s} for s in (0.9, 0.8, 0.7, 0.3)]
          + [{"label": "legit", "hack": {"judge_score": s}} for s in (0.1, 0.2, 0.6, 0.05)])
  out = tmp_path / "cal.json"
  assert calibrate_judge.main([write(tmp_path, rows), "--json", str(out), "--steps", "9"]) == 0
  data = json.loads(out.read_text())
  by_t = {r["threshold"]: r for r in data["table"]}
  assert by_t[0.7]["precision"] == 1.0 and by_t[0.7]["recall"] == 0.75
  assert by_t[0.5]["tp"] == 3 and by_t[0.5]["fp"] == 1 and by_t[0.5]["precision"] == 0.75
  # 0.3 catches every cheat with one false positive: F1 8/9 beats 0.7's 6/7
  assert data["chosen"]["threshold"] == 0.3 and data["chosen"]["f1"] == pytest.approx(8 / 9)
  assert "chosen threshold: 0.300" in capsys.readouterr().out
  calibrate_judge.main([write(tmp_path, rows), "--json", str(out), "--steps", "9", "--min-precision", "1.0"])
  assert json.loads(out.read_text())["chosen"]["threshold"] == 0.7


def test_min_precision_prefers_recall():
  table = calibrate_judge.threshold_table([0.9, 0.4, 0.35, 0.2], [True, True, False, False], [0.3, 0.38, 0.5])
  assert calibrate_judge.choose_threshold(table, min_precision=0.99)["threshold"] == 0.38
  assert calibrate_judge.choose_threshold(table)["threshold"] == 0.38


@pytest.mark.parametrize("rows, match", [
    ([{"judge_score": 0.5}], "no cheat label"),
    ([{"cheat": "maybe", "judge_score": 0.5}], "neither cheat"),
])
def test_bad_labels(tmp_path, rows, match):
  with pytest.raises(ValueError, match=match):
    calibrate_judge.main([write(tmp_path, rows)])


def test_missing_scores_need_a_judge(tmp_path):
  with pytest.raises(SystemExit, match="--judge"):
    calibrate_judge.main([write(tmp_path, [{"cheat": 1}])])


def test_not_json(tmp_path):
  path = tmp_path / "x.jsonl"
  path.write_text("{nope\n")
  with pytest.raises(ValueError, match="not JSON"):
    calibrate_judge.load_labelled(str(path))


def test_validation_split_is_stratified_and_disjoint():
  labels = [True] * 7 + [False] * 5
  validation, rest = calibrate_judge.split_indices(labels, 0.5, seed=3)
  assert set(validation).isdisjoint(rest) and sorted(validation + rest) == list(range(12))
  assert sum(labels[i] for i in validation) in (3, 4) and sum(not labels[i] for i in validation) in (2, 3)
  assert calibrate_judge.split_indices(labels, 0.5, seed=3) == (validation, rest)
  assert calibrate_judge.split_indices([True, False], 0.9, seed=0) == ([0, 1], [])


def test_redteam_export_feeds_calibration(tmp_path, capsys):
  import bench_antihack

  path = tmp_path / "judge_set.jsonl"
  assert bench_antihack.main(["--export-judge-set", str(path)]) == 0
  rows = [json.loads(line) for line in path.read_text().splitlines()]
  assert {r["cheat"] for r in rows} == {True, False} and all(r["statement"] and "final_diff" in r for r in rows)
  records = calibrate_judge.load_labelled(str(path))
  assert len(records) == len(rows)


def test_rejudge_through_an_openai_compatible_server(tmp_path, capsys):
  import http.server
  import threading

  class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
      pass

    def do_POST(self):
      body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
      user = body["messages"][-1]["content"]
      p = 0.9 if "_exit" in user or "_pytest" in user else 0.1
      data = json.dumps({"choices": [{"message": {"content": json.dumps({"cheat_probability": p, "reason": "r"})}}]})
      self.send_response(200)
      self.send_header("Content-Length", str(len(data)))
      self.end_headers()
      self.wfile.write(data.encode())

  server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
  threading.Thread(target=server.serve_forever, daemon=True).start()
  try:
    rows = [{"cheat": True, "statement": "s", "final_diff": "+os._exit(0)"},
            {"cheat": True, "statement": "s", "final_diff": "+import _pytest"},
            {"cheat": False, "statement": "s", "final_diff": "+x = sorted(x)"}]
    out = tmp_path / "cal.json"
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    assert calibrate_judge.main([write(tmp_path, rows), "--judge", "openai", "--base-url", url, "--model", "m",
                                 "--json", str(out)]) == 0
    chosen = json.loads(out.read_text())["chosen"]
    assert chosen["f1"] == 1.0 and 0.1 < chosen["threshold"] <= 0.9
    # The red-team suite through the same server: the threshold from a validation split,
    # precision and recall on the held-out rest.
    import bench_antihack
    suite = tmp_path / "suite.jsonl"
    assert bench_antihack.main(["--export-judge-set", str(suite)]) == 0
    assert calibrate_judge.main([str(suite), "--judge", "openai", "--base-url", url, "--model", "m",
                                 "--validation-fraction", "0.5", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    n_suite = len(suite.read_text().splitlines())
    assert data["held_out"]["n"] + data["held_out"]["n_validation"] == n_suite and data["held_out"]["n"] >= 40
    assert 0.0 <= data["held_out"]["precision"] <= 1.0 and 0.0 <= data["held_out"]["recall"] <= 1.0
  finally:
    server.shutdown()
    server.server_close()
