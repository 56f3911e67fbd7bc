from semrange import compare, parse, satisfies


def test_parse():
  v = parse("1.2.3-rc.1+build.5")
  assert (v.major, v.minor, v.patch, v.pre) == (1, 2, 3, ("rc", "1"))


def test_release_order():
  assert compare("1.2.3", "1.10.0") == -1
  assert compare("2.0.0", "2.0.0+meta") == 0


def test_prerelease_below_release():
  assert compare("1.0.0-alpha", "1.0.0") == -1


def test_caret_and_tilde():
  assert satisfies("1.4.0", "^1.2.3")
  assert not satisfies("2.0.0", "^1.2.3")
  assert satisfies("1.2.9", "~1.2.3") and not satisfies("1.3.0", "~1.2.3")
