import ipaddress
import random

import pytest

from cidrkit import Address, AddressError, Network, collapse, parse_network, summarize

# (networks, the collapsed list)
COLLAPSED = [
    ([], []),
    (["10.0.0.0/24"], ["10.0.0.0/24"]),
    (["10.0.0.0/25", "10.0.0.128/25"], ["10.0.0.0/24"]),
    (["10.0.0.128/25", "10.0.0.0/25"], ["10.0.0.0/24"]),
    (["10.0.0.0/26", "10.0.0.64/26", "10.0.0.128/25"], ["10.0.0.0/24"]),
    (["10.0.0.0/25", "10.0.0.128/26", "10.0.0.192/26"], ["10.0.0.0/24"]),
    (["10.0.0.0/26", "10.0.0.128/26"], ["10.0.0.0/26", "10.0.0.128/26"]),
    (["10.0.0.64/26", "10.0.0.128/26"], ["10.0.0.64/26", "10.0.0.128/26"]),
    (["10.0.0.0/24", "10.0.0.7/32", "10.0.0.0/24"], ["10.0.0.0/24"]),
    (["10.0.0.0/30", "10.0.0.4/31", "10.0.0.6/32", "10.0.0.7/32"], ["10.0.0.0/29"]),
    (["10.0.0.%d/32" % i for i in range(16)], ["10.0.0.0/28"]),
    (["10.0.0.%d/32" % i for i in range(1, 16)], ["10.0.0.1/32", "10.0.0.2/31", "10.0.0.4/30", "10.0.0.8/29"]),
    (["2001:db8::/65", "2001:db8:0:0:8000::/65"], ["2001:db8::/64"]),
    (["2001:db8::/64", "10.0.0.1/32", "2001:db8:0:1::/64", "10.0.0.0/32"], ["10.0.0.0/31", "2001:db8::/63"]),
    (["0.0.0.0/1", "128.0.0.0/1"], ["0.0.0.0/0"]),
    (["::/1", "8000::/2", "c000::/2"], ["::/0"]),
]


@pytest.mark.parametrize("nets, expected", COLLAPSED, ids=["coll%d" % i for i in range(len(COLLAPSED))])
def test_collapse_table(nets, expected):
  assert collapse(nets) == [parse_network(e) for e in expected]
  assert collapse([parse_network(n) for n in reversed(nets)]) == [parse_network(e) for e in expected]


def test_collapse_rejects_host_bits():
  with pytest.raises(AddressError):
    collapse(["10.0.0.1/24"])


# -- slow references: brute-force sets of addresses --------------------------------------------

def addresses(nets):
  out = set()
  for n in nets:
    out.update(range(n.value, n.value + n.num_addresses))
  return out


def reference_collapse(version, bits, values):
  """Runs of consecutive addresses, each cut greedily into aligned power-of-two blocks."""
  out = []
  values = sorted(values)
  i = 0
  while i < len(values):
    lo = values[i]
    while i + 1 < len(values) and values[i + 1] == values[i] + 1:
      i += 1
    hi = values[i]
    i += 1
    while lo <= hi:
      k = 0
      while k < bits and lo % (2 << k) == 0 and lo + (2 << k) - 1 <= hi:
        k += 1
      out.append(Network(version, lo, bits - k))
      lo += 1 << k
  return out


def random_nets(gen, version, base, bits, low):
  nets = []
  for _ in range(gen.randint(1, 14)):
    prefix = gen.randint(bits - low, bits)
    size = 1 << (bits - prefix)
    nets.append(Network(version, base + gen.randrange(0, 1 << low, size), prefix))
  return nets


@pytest.mark.parametrize("version, base, bits", [(4, 0x0A000000, 32), (6, 0x20010DB8 << 96, 128)])
def test_random_collapse_against_sets(version, base, bits):
  gen = random.Random(1918 + version)
  for _ in range(400):
    nets = random_nets(gen, version, base, bits, 8)
    got = collapse(nets)
    assert got == reference_collapse(version, bits, addresses(nets)), [str(n) for n in nets]
    assert addresses(got) == addresses(nets)


def split(gen, net, depth):
  """`net` cut into random halves, at most `depth` times."""
  if depth == 0 or gen.random() < 0.2:
    return [net]
  half = net.num_addresses // 2
  return (split(gen, Network(net.version, net.value, net.prefix + 1), depth - 1)
          + split(gen, Network(net.version, net.value + half, net.prefix + 1), depth - 1))


@pytest.mark.parametrize("version, bits", [(4, 32), (6, 128)])
def test_random_splits_rejoin(version, bits):
  gen = random.Random(2575 + version)
  for _ in range(150):
    block = Network(version, gen.getrandbits(bits) >> 8 << 8, bits - 8)
    pieces = split(gen, block, 8)
    gen.shuffle(pieces)
    assert collapse(pieces) == [block], [str(n) for n in pieces]
    dropped = pieces[gen.randrange(len(pieces))]
    rest = [n for n in pieces if n is not dropped]
    assert collapse(rest) == reference_collapse(version, bits, addresses(rest))


def test_random_summarize_against_ipaddress():
  gen = random.Random(4632)
  for _ in range(300):
    version, bits = gen.choice([(4, 32), (6, 128)])
    a, b = sorted(gen.getrandbits(bits) >> gen.randrange(bits) for _ in range(2))
    cls = ipaddress.IPv4Address if version == 4 else ipaddress.IPv6Address
    want = [(int(n.network_address), n.prefixlen) for n in ipaddress.summarize_address_range(cls(a), cls(b))]
    assert [(n.value, n.prefix) for n in summarize(Address(version, a), Address(version, b))] == want
