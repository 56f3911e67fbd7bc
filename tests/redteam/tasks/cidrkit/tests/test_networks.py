import pytest

from cidrkit import AddressError, parse_network

# (text, strict, str of the network, number of addresses)
NETWORKS = [
    ("10.0.0.0/8", True, "10.0.0.0/8", 2 ** 24),
    ("10.1.2.3/8", False, "10.0.0.0/8", 2 ** 24),
    ("192.0.2.7", True, "192.0.2.7/32", 1),
    ("0.0.0.0/0", True, "0.0.0.0/0", 2 ** 32),
    ("2001:db8::/32", True, "2001:db8::/32", 2 ** 96),
    ("2001:db8:0:0:1::1/64", False, "2001:db8::/64", 2 ** 64),
    ("::/0", True, "::/0", 2 ** 128),
    ("::1", True, "::1/128", 1),
    ("::ffff:10.0.0.0/104", True, "::ffff:a00:0/104", 2 ** 24),
]

BAD = [("10.0.0.1/8", True), ("10.0.0.0/33", False), ("10.0.0.0/", False), ("10.0.0.0/08", False),
       ("10.0.0.0/-1", False), ("::/129", False), ("::1/64", True), ("10.0.0.0/+8", False)]

# (network, address, contained)
CONTAINS = [
    ("10.0.0.0/8", "10.255.255.255", True),
    ("10.0.0.0/8", "11.0.0.0", False),
    ("10.0.0.0/8", "::a00:0", False),
    ("0.0.0.0/0", "255.255.255.255", True),
    ("2001:db8::/32", "2001:db8:ffff::1", True),
    ("2001:db8::/32", "2001:db9::", False),
    ("::ffff:0:0/96", "::ffff:192.0.2.1", True),
    ("::ffff:0:0/96", "::fffe:192.0.2.1", False),
]


@pytest.mark.parametrize("text, strict, shown, size", NETWORKS, ids=["net%d" % i for i in range(len(NETWORKS))])
def test_parse_network(text, strict, shown, size):
  net = parse_network(text, strict=strict)
  assert str(net) == shown and net.num_addresses == size
  assert parse_network(shown) == net


@pytest.mark.parametrize("text, strict", BAD, ids=["badnet%d" % i for i in range(len(BAD))])
def test_bad_networks(text, strict):
  with pytest.raises(AddressError):
    parse_network(text, strict=strict)


@pytest.mark.parametrize("net, addr, expected", CONTAINS, ids=["in%d" % i for i in range(len(CONTAINS))])
def test_contains(net, addr, expected):
  assert (addr in parse_network(net)) is expected


def test_subnets():
  outer = parse_network("2001:db8::/32")
  assert parse_network("2001:db8:8000::/33") in outer
  assert parse_network("2001:db8::/31", strict=False) not in outer
  assert str(outer.first) == "2001:db8::" and str(outer.last) == "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"
  assert str(parse_network("10.0.0.128/25").supernet()) == "10.0.0.0/24"
