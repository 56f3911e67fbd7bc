import random
import re

import pytest

from confkit import ConfigError, load, loads

SECTIONS = ["app", "db", "cache", "paths", "web", "mail", "auth"]
WORDS = ["alpha", "bravo", "delta", "echo", "kilo", "lima", "oscar", "tango", "zulu"]
DIRS = ["conf.d", "local", "extra", "site"]


def write(path, text):
  path.parent.mkdir(parents=True, exist_ok=True)
  path.write_text(text, encoding="utf-8")


@pytest.fixture
def tree(tmp_path):
  """A small configuration tree: app.ini includes conf.d/db.ini, which includes
  secrets/db.ini (that is conf.d/secrets/db.ini), then local.ini overrides the app name."""
  write(tmp_path / "app.ini",
        "[app]\nname = demo\nhome = /srv/${name}\n%include conf.d/db.ini\n"
        "[paths]\nlog = ${app:home}/log\ncache = ${data}/cache\ndata = ${app:home}/data\n"
        "%include local.ini\n")
  write(tmp_path / "conf.d" / "db.ini",
        "[db]\nhost = localhost\nurl = postgres://${user}:${password}@${host}/${app:name}\n"
        "%include secrets/db.ini\n")
  write(tmp_path / "conf.d" / "secrets" / "db.ini", "user = svc\npassword = hunter2\n")
  write(tmp_path / "local.ini", "[app]\nname = prod\n")
  return tmp_path


def test_nested_include_and_late_override(tree):
  assert load(tree / "app.ini") == {
      "app": {"name": "prod", "home": "/srv/prod"},
      "db": {"host": "localhost", "url": "postgres://svc:hunter2@localhost/prod", "user": "svc",
             "password": "hunter2"},
      "paths": {"log": "/srv/prod/log", "cache": "/srv/prod/data/cache", "data": "/srv/prod/data"},
  }


def test_include_resolved_from_its_own_directory(tree):
  # A secrets/db.ini next to app.ini must not be the one conf.d/db.ini reads.
  write(tree / "secrets" / "db.ini", "user = wrong\npassword = wrong\n")
  config = load(tree / "app.ini")
  assert config["db"]["user"] == "svc" and config["db"]["password"] == "hunter2"


def test_include_from_a_subdirectory_file(tmp_path):
  write(tmp_path / "top.ini", "[web]\n%include site/web.ini\nport = ${base}0\n")
  write(tmp_path / "site" / "web.ini", "%include ../shared/base.ini\nhost = ${name}.example\n")
  write(tmp_path / "shared" / "base.ini", "[web]\nbase = 808\nname = www\n")
  assert load(tmp_path / "top.ini") == {"web": {"base": "808", "name": "www", "host": "www.example",
                                                "port": "8080"}}


def test_forward_reference():
  assert loads("[paths]\nlog = ${root}/log\nroot = /srv\n") == {"paths": {"log": "/srv/log", "root": "/srv"}}


def test_reference_into_later_section():
  config = loads("[web]\nurl = http://${app:host}:${app:port}/\n[app]\nhost = example.org\nport = 80\n")
  assert config["web"]["url"] == "http://example.org:80/"


def test_redefinition_seen_by_earlier_reference():
  config = loads("[app]\nmode = dev\nbanner = running in ${mode} mode\nmode = prod\n")
  assert config["app"] == {"mode": "prod", "banner": "running in prod mode"}


def test_dollar_escape_and_reference():
  config = loads("[shop]\nprice = $$${amount}\namount = 5\nnote = costs ${price}\n")
  assert config["shop"] == {"price": "$5", "amount": "5", "note": "costs $5"}


def test_include_keeps_the_open_section(tmp_path):
  write(tmp_path / "main.ini", "[cache]\n%include parts/cache.ini\nttl = ${size}s\n")
  write(tmp_path / "parts" / "cache.ini", "size = 64\n")
  assert load(tmp_path / "main.ini") == {"cache": {"size": "64", "ttl": "64s"}}


def test_unknown_reference_raises():
  with pytest.raises(ConfigError):
    loads("[app]\nhome = ${nowhere}\n[b]\nx = ${app:missing}\n")


def test_circular_reference_raises():
  with pytest.raises(ConfigError):
    loads("[app]\na = ${b}\nb = ${c}\nc = ${a}\n")
  with pytest.raises(ConfigError):
    loads("[app]\nself = x${self}\n")


def test_circular_include_raises(tmp_path):
  write(tmp_path / "a.ini", "[x]\n%include sub/b.ini\n")
  write(tmp_path / "sub" / "b.ini", "%include ../a.ini\n")
  with pytest.raises(ConfigError):
    load(tmp_path / "a.ini")


def test_missing_include_raises(tmp_path):
  write(tmp_path / "a.ini", "[x]\n%include nowhere.ini\n")
  with pytest.raises(ConfigError):
    load(tmp_path / "a.ini")


def test_key_outside_section_raises():
  with pytest.raises(ConfigError):
    loads("key = value\n")


def reference_resolve(raw):
  """{section: {key: raw value}} with every ${key} / ${section:key} replaced, the slow way."""

  def value(section, key, seen):
    assert (section, key) not in seen, "circular"
    out = ""
    for part in re.split(r"(\$\$|\$\{[^{}]*\})", raw[section][key]):
      if part == "$$":
        out += "$"
      elif part.startswith("${"):
        other, _, name = part[2:-1].rpartition(":")
        out += value(other or section, name, seen | {(section, key)})
      else:
        out += part
    return out

  return {section: {key: value(section, key, frozenset()) for key in keys} for section, keys in raw.items()}


def random_tree(rng, root):
  """Writes a random tree of files under `root` (main.ini including files in subfolders, which
  include files in their own subfolders; keys in any order, some defined twice) and returns the
  raw values load must resolve: {section: {key: last definition}}."""
  names = rng.sample(WORDS, rng.randint(3, len(WORDS)))
  keys = []  # (section, name, raw), each referring only to keys made before it
  for i, name in enumerate(names):
    section = rng.choice(SECTIONS[:4])
    raw = rng.choice(WORDS)
    for other_section, other, _ in rng.sample(keys, rng.randint(0, min(i, 2))):
      ref = other if other_section == section else f"{other_section}:{other}"
      raw += rng.choice(["/", "-", " "]) + "${" + ref + "}"
    keys.append((section, name, raw))
  files = {"main.ini": []}
  for k in range(rng.randint(1, 4)):
    parent = rng.choice(sorted(files))
    folder = rng.choice(DIRS)
    files[parent.rpartition("/")[0] + "/" * ("/" in parent) + f"{folder}/part{k}.ini"] = []
    files[parent].append(["%include", f"{folder}/part{k}.ini"])
  entries = [[section, name, raw] for section, name, raw in keys]
  entries += [[section, name, raw] for section, name, raw in rng.sample(keys, rng.randint(0, 2))]
  for entry in entries:
    files[rng.choice(sorted(files))].append(entry)
  for lines in files.values():
    rng.shuffle(lines)

  order = []  # the definitions in the order load reads them

  def read(path):
    for item in files[path]:
      if item[0] == "%include":
        read(path.rpartition("/")[0] + "/" * ("/" in path) + item[1])
      else:
        order.append(item)

  read("main.ini")
  last = {(entry[0], entry[1]): entry for entry in order}
  for entry in order:
    if last[entry[0], entry[1]] is not entry:
      entry[2] = "stale"
  for path, lines in files.items():
    text = "".join(f"%include {item[1]}\n" if item[0] == "%include" else f"[{item[0]}]\n{item[1]} = {item[2]}\n"
                   for item in lines)
    write(root / path, text)
  raw = {}
  for section, name, text in order:
    if text != "stale":
      raw.setdefault(section, {})[name] = text
  return raw


@pytest.mark.parametrize("seed", range(40))
def test_seeded_tree(seed, tmp_path):
  rng = random.Random(seed)
  raw = random_tree(rng, tmp_path)
  expected = reference_resolve(raw)
  assert load(tmp_path / "main.ini") == expected
