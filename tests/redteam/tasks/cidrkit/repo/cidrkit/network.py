"""CIDR networks: a base address and a prefix length, with containment."""

from cidrkit.addr import BITS, Address, AddressError, parse_address


class Network:
  """The addresses whose first `prefix` bits equal those of `value` (whose host bits are zero)."""

  __slots__ = ("version", "value", "prefix")

  def __init__(self, version, value, prefix):
    Address(version, value)
    bits = BITS[version]
    if isinstance(prefix, bool) or not isinstance(prefix, int) or not 0 <= prefix <= bits:
      raise AddressError("prefix out of range for IPv%d: %r" % (version, prefix))
    if value & ((1 << (bits - prefix)) - 1):
      raise AddressError("host bits set in %s/%d" % (Address(version, value), prefix))
    self.version = version
    self.value = value
    self.prefix = prefix

  @property
  def bits(self):
    return BITS[self.version]

  @property
  def num_addresses(self):
    return 1 << (self.bits - self.prefix)

  @property
  def first(self):
    return Address(self.version, self.value)

  @property
  def last(self):
    return Address(self.version, self.value + self.num_addresses - 1)

  def supernet(self):
    """The network one bit shorter that holds this one."""
    if self.prefix == 0:
      raise AddressError("%s has no supernet" % self)
    size = self.num_addresses
    return Network(self.version, self.value & ~(2 * size - 1), self.prefix - 1)

  def subnet_of(self, other):
    return (self.version == other.version and other.prefix <= self.prefix
            and (self.value ^ other.value) >> (other.bits - other.prefix) == 0)

  def __contains__(self, item):
    if isinstance(item, Network):
      return item.subnet_of(self)
    addr = parse_address(item)
    return addr.version == self.version and (addr.value ^ self.value) >> (self.bits - self.prefix) == 0

  def __eq__(self, other):
    if not isinstance(other, Network):
      return NotImplemented
    return (self.version, self.value, self.prefix) == (other.version, other.value, other.prefix)

  def __lt__(self, other):
    if not isinstance(other, Network):
      return NotImplemented
    return (self.version, self.value, self.prefix) < (other.version, other.value, other.prefix)

  def __hash__(self):
    return hash((Network, self.version, self.value, self.prefix))

  def __str__(self):
    return "%s/%d" % (Address(self.version, self.value), self.prefix)

  def __repr__(self):
    return "Network(%r)" % str(self)


def parse_network(text, strict=True):
  """A Network from 'address/prefix' (a bare address is a host network). With strict=False, host
  bits are cleared instead of raising AddressError."""
  if isinstance(text, Network):
    return text
  if not isinstance(text, str):
    raise TypeError("network text must be a str, not %s" % type(text).__name__)
  addr_text, slash, prefix_text = text.partition("/")
  addr = parse_address(addr_text)
  bits = BITS[addr.version]
  if slash:
    if not (prefix_text.isascii() and prefix_text.isdigit()) or (len(prefix_text) > 1 and prefix_text[0] == "0"):
      raise AddressError("bad prefix length in %r" % text)
    prefix = int(prefix_text)
    if prefix > bits:
      raise AddressError("prefix length too large in %r" % text)
  else:
    prefix = bits
  host = addr.value & ((1 << (bits - prefix)) - 1)
  if host and strict:
    raise AddressError("host bits set in %r" % text)
  return Network(addr.version, addr.value - host, prefix)
