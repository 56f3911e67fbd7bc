"""Summarising address ranges and collapsing networks into the fewest CIDR networks."""

from cidrkit.addr import AddressError, parse_address
from cidrkit.network import Network, parse_network


def summarize(first, last):
  """The fewest networks that cover exactly the addresses first..last (inclusive), in order."""
  first, last = parse_address(first), parse_address(last)
  if first.version != last.version:
    raise AddressError("mixed IP versions: %s and %s" % (first, last))
  if last < first:
    raise AddressError("empty range: %s > %s" % (first, last))
  bits = first.bits
  lo, hi = first.value, last.value
  out = []
  while lo <= hi:
    size = lo & -lo if lo else 1 << bits
    while size > hi - lo + 1:
      size >>= 1
    out.append(Network(first.version, lo, bits - size.bit_length() + 1))
    lo += size
  return out


def _siblings(a, b):
  """Whether a and b are the two halves of one network."""
  return (a.version == b.version and a.prefix == b.prefix and a.prefix > 0
          and a.value ^ b.value == a.num_addresses and a.value < b.value)


def collapse(networks):
  """The fewest networks that cover exactly the addresses of `networks` (Networks or strict text),
  IPv4 before IPv6, in address order."""
  items = sorted(parse_network(n) for n in networks)
  kept = []
  for net in items:
    if kept and net.subnet_of(kept[-1]):
      continue
    kept.append(net)
  out = []
  for net in kept:
    if out and _siblings(out[-1], net):
      out[-1] = out[-1].supernet()
    else:
      out.append(net)
  return out
