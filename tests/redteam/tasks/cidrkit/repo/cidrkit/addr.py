"""Addresses as (version, int) pairs: parsing dotted quads and colon-hex text, and RFC 5952 output."""

BITS = {4: 32, 6: 128}
_HEX = frozenset("0123456789abcdefABCDEF")


class AddressError(ValueError):
  """Text that is not an address or network, or a value out of range."""


class Address:
  """One IPv4 or IPv6 address; `value` is its integer (32 or 128 bits)."""

  __slots__ = ("version", "value")

  def __init__(self, version, value):
    if version not in BITS:
      raise AddressError("unknown IP version %r" % (version,))
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << BITS[version]:
      raise AddressError("value out of range for IPv%d: %r" % (version, value))
    self.version = version
    self.value = value

  @property
  def bits(self):
    return BITS[self.version]

  def __int__(self):
    return self.value

  def __eq__(self, other):
    if not isinstance(other, Address):
      return NotImplemented
    return (self.version, self.value) == (other.version, other.value)

  def __lt__(self, other):
    if not isinstance(other, Address):
      return NotImplemented
    return (self.version, self.value) < (other.version, other.value)

  def __hash__(self):
    return hash((Address, self.version, self.value))

  def __str__(self):
    return format_address(self)

  def __repr__(self):
    return "Address(%r)" % str(self)


def _parse_v4(text):
  parts = text.split(".")
  if len(parts) != 4:
    raise AddressError("expected four dotted parts: %r" % text)
  value = 0
  for part in parts:
    if not (part.isascii() and part.isdigit()) or (len(part) > 1 and part[0] == "0") or int(part) > 255:
      raise AddressError("bad IPv4 part %r in %r" % (part, text))
    value = value << 8 | int(part)
  return value


def _groups(text, full, last):
  """The 16-bit groups of one side of '::' (`last`: it ends the address, so may be a dotted quad)."""
  if not text:
    return []
  items = text.split(":")
  out = []
  for i, item in enumerate(items):
    if "." in item:
      if not (last and i == len(items) - 1):
        raise AddressError("dotted quad not at the end of %r" % full)
      out.append(_parse_v4(item))
    elif 1 <= len(item) <= 4 and all(c in _HEX for c in item):
      out.append(int(item, 16))
    else:
      raise AddressError("bad IPv6 group %r in %r" % (item, full))
  return out


def _parse_v6(text):
  if text.count("::") > 1:
    raise AddressError("more than one '::' in %r" % text)
  head_text, sep, tail_text = text.partition("::")
  if sep:
    head = _groups(head_text, text, last=False)
    tail = _groups(tail_text, text, last=True)
    if len(head) + len(tail) > 7:
      raise AddressError("'::' stands for no group in %r" % text)
    groups = head + [0] * (8 - len(head) - len(tail)) + tail
  else:
    groups = _groups(text, text, last=True)
    if len(groups) != 8:
      raise AddressError("expected eight groups: %r" % text)
  value = 0
  for group in groups:
    value = value << 16 | group
  return value


def parse_address(text):
  """An Address from its text: a dotted quad (IPv4) or colon-hex with optional '::' (IPv6)."""
  if isinstance(text, Address):
    return text
  if not isinstance(text, str):
    raise TypeError("address text must be a str, not %s" % type(text).__name__)
  if ":" in text:
    return Address(6, _parse_v6(text))
  return Address(4, _parse_v4(text))


def _zero_run(groups):
  """(start, length) of the run of zero groups to compress; (-1, 0) if none."""
  for i, group in enumerate(groups):
    if group == 0:
      j = i
      while j < len(groups) and groups[j] == 0:
        j += 1
      return i, j - i
  return -1, 0


def format_address(address):
  """The canonical text: a dotted quad, or RFC 5952 IPv6 (lowercase hex without leading zeros, the
  longest run of two or more zero groups as '::', the first of equal runs)."""
  if not isinstance(address, Address):
    address = parse_address(address)
  value = address.value
  if address.version == 4:
    return ".".join(str(value >> shift & 0xFF) for shift in (24, 16, 8, 0))
  groups = [value >> (112 - 16 * i) & 0xFFFF for i in range(8)]
  texts = ["%x" % g for g in groups]
  start, length = _zero_run(groups)
  if length < 1:
    return ":".join(texts)
  return ":".join(texts[:start]) + "::" + ":".join(texts[start + length:])
