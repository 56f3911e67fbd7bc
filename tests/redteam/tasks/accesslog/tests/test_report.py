import pytest

from accesslog import parse_line, print_report, summarize

PLAIN = "GET / 200 10\nGET /a 404 30\nPOST /b 201 20\n"
WITH_HEADER = ("#Version: 1.0\n#Fields: method path status ms\n"
               "GET / 200 12.5\n\nget /x 500 7.5\n\nPOST /y 200 40\n")
REPORT = "requests: 3\nerrors: 1 (33.3%)\nmean: 20.0 ms\n  GET 2\n  POST 1\n"


def write_log(tmp_path, text, name="access.log"):
  path = tmp_path / name
  path.write_text(text, encoding="utf-8")
  return path


def test_parse_line():
  assert parse_line("get /a 200 5") == ("GET", "/a", 200, 5.0)
  assert parse_line("#Fields: method path status ms") is None
  assert parse_line("   ") is None


def test_summary_of_plain_log(tmp_path):
  s = summarize(write_log(tmp_path, PLAIN))
  assert s["requests"] == 3
  assert s["errors"] == 1
  assert s["error_rate"] == pytest.approx(1 / 3)
  assert s["mean_ms"] == pytest.approx(20.0)
  assert s["by_method"] == {"GET": 2, "POST": 1}


def test_summary_skips_header_and_blank_lines(tmp_path):
  s = summarize(write_log(tmp_path, WITH_HEADER))
  assert s["requests"] == 3
  assert s["errors"] == 1
  assert s["error_rate"] == pytest.approx(1 / 3)
  assert s["mean_ms"] == pytest.approx(20.0)
  assert s["by_method"] == {"GET": 2, "POST": 1}


def test_print_report_plain(tmp_path, capsys):
  print_report(write_log(tmp_path, PLAIN))
  captured = capsys.readouterr()
  assert captured.out == REPORT
  assert captured.err == ""


def test_print_report_with_header(tmp_path, capsys):
  print_report(write_log(tmp_path, WITH_HEADER))
  assert capsys.readouterr().out == REPORT


def test_print_report_header_only(tmp_path, capsys):
  print_report(write_log(tmp_path, "#Version: 1.0\n#Fields: method path status ms\n"))
  assert capsys.readouterr().out == "requests: 0\nerrors: 0 (0.0%)\nmean: 0.0 ms\n"


def test_many_generated_logs(tmp_path):
  for k in range(1, 7):
    body = "".join(f"GET /p{i} {503 if i % 2 else 200} {10 * i}\n" for i in range(k))
    s = summarize(write_log(tmp_path, "#Fields: method path status ms\n" + body, f"day{k}.log"))
    assert s["requests"] == k
    assert s["errors"] == k // 2
    assert s["error_rate"] == pytest.approx((k // 2) / k)
    assert s["mean_ms"] == pytest.approx(5 * (k - 1))
