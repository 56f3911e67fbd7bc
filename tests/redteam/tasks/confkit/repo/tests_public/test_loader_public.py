import pytest

from confkit import ConfigError, load, loads


def test_sections_comments_and_separators():
  text = "# top\n[app]\nname = demo\n; note\nport: 8080\n\n[db]\nhost=localhost\n"
  assert loads(text) == {"app": {"name": "demo", "port": "8080"}, "db": {"host": "localhost"}}


def test_reference_to_earlier_key():
  text = "[app]\nname = demo\nhome = /srv/${name}\n[paths]\nlog = ${app:home}/log\n"
  assert loads(text)["paths"] == {"log": "/srv/demo/log"}


def test_dollar_escape():
  assert loads("[shop]\nprice = $$5\n") == {"shop": {"price": "$5"}}


def test_include_next_to_the_file(tmp_path):
  (tmp_path / "main.ini").write_text("[app]\nname = demo\n%include extra.ini\n", encoding="utf-8")
  (tmp_path / "extra.ini").write_text("debug = yes\n", encoding="utf-8")
  assert load(tmp_path / "main.ini") == {"app": {"name": "demo", "debug": "yes"}}


def test_unknown_reference():
  with pytest.raises(ConfigError):
    loads("[app]\nhome = ${nowhere}\n")
