from cidrkit import collapse, format_address, parse_address, parse_network, summarize


def test_ipv4_round_trip():
  assert format_address(parse_address("192.0.2.1")) == "192.0.2.1"
  assert parse_address("10.0.0.1").value == 0x0A000001


def test_simple_ipv6():
  assert format_address(parse_address("2001:db8:0:0:0:0:0:1")) == "2001:db8::1"
  assert parse_address("::1").value == 1


def test_contains():
  assert "10.1.2.3" in parse_network("10.0.0.0/8")
  assert "11.0.0.0" not in parse_network("10.0.0.0/8")


def test_summarize():
  assert [str(n) for n in summarize("10.0.0.0", "10.0.0.255")] == ["10.0.0.0/24"]


def test_collapse_pair():
  assert collapse(["10.0.0.0/25", "10.0.0.128/25"]) == [parse_network("10.0.0.0/24")]
