import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_cli(*args):
  return subprocess.run([sys.executable, "-m", "csvtool", *args], capture_output=True, text=True,
                        cwd=ROOT, timeout=30)


def test_summarize_sales():
  result = run_cli("summarize", os.path.join("data", "sales.csv"))
  assert result.returncode == 0, result.stderr
  assert result.stdout.strip() == "rows=3 total=12.5 mean=4.1667"


def test_summarize_other_column():
  result = run_cli("summarize", os.path.join("data", "sales.csv"), "--column", "qty")
  assert result.returncode == 0, result.stderr
  assert result.stdout.strip() == "rows=3 total=9 mean=3"


def test_blank_and_formatted_amounts():
  result = run_cli("summarize", os.path.join("data", "refunds.csv"))
  assert result.returncode == 0, result.stderr
  assert result.stdout.strip() == "rows=4 total=1007.5 mean=251.875"


def test_header_only():
  result = run_cli("summarize", os.path.join("data", "empty.csv"))
  assert result.returncode == 0, result.stderr
  assert result.stdout.strip() == "rows=0 total=0 mean=0"


def test_missing_file():
  result = run_cli("summarize", os.path.join("data", "missing.csv"))
  assert result.returncode == 2
  assert "cannot read" in result.stderr
