import ipaddress
import random

import pytest

from cidrkit import Address, AddressError, parse_address

# (text, version, value)
PARSED = [
    ("0.0.0.0", 4, 0),
    ("255.255.255.255", 4, 2 ** 32 - 1),
    ("192.0.2.33", 4, 0xC0000221),
    ("::", 6, 0),
    ("::1", 6, 1),
    ("1::", 6, 1 << 112),
    ("2001:db8::8:800:200c:417a", 6, 0x20010DB8000000000008080020 << 24 | 0x0C417A),
    ("2001:DB8:0:0:8:800:200C:417A", 6, 0x20010DB8000000000008080020 << 24 | 0x0C417A),
    ("::ffff:192.0.2.128", 6, 0xFFFF << 32 | 0xC0000280),
    ("::ffff:0.0.0.0", 6, 0xFFFF << 32),
    ("::192.0.2.1", 6, 0xC0000201),
    ("64:ff9b::198.51.100.7", 6, 0x64FF9B << 96 | 0xC6336407),
    ("2001:db8:1::10.1.2.3", 6, 0x20010DB80001 << 80 | 0x0A010203),
    ("1:2:3:4:5:6:7::", 6, 0x00010002000300040005000600070000),
    ("::2:3:4:5:6:7:8", 6, 0x00000002000300040005000600070008),
]

INVALID = ["", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1.2.3.-4", "1.2.3.4 ", ":", ":1", "1:", "1::2::3",
           "12345::", "g::", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8::", "::ffff:1.2.3",
           "::1.2.3.4:5", "1.2.3.4::", "::ffff:256.0.0.1", "::ffff:01.2.3.4", "1:2:3:4:5:6:7:1.2.3.4"]


@pytest.mark.parametrize("text, version, expected", PARSED, ids=["parse%d" % i for i in range(len(PARSED))])
def test_parse_table(text, version, expected):
  addr = parse_address(text)
  assert (addr.version, addr.value) == (version, expected)
  assert addr == Address(version, expected)


@pytest.mark.parametrize("text", INVALID, ids=["bad%d" % i for i in range(len(INVALID))])
def test_invalid_text(text):
  with pytest.raises(AddressError):
    parse_address(text)


def test_types():
  with pytest.raises(TypeError):
    parse_address(3232235777)
  with pytest.raises(AddressError):
    Address(4, 2 ** 32)
  assert isinstance(AddressError("x"), ValueError)


def spellings(gen, value):
  """Ways of writing a 128-bit value: exploded, compressed, and with an IPv4 tail after '::'."""
  addr = ipaddress.IPv6Address(value)
  out = [addr.exploded, addr.compressed, addr.exploded.upper()]
  low = value & 0xFFFFFFFF
  quad = ".".join(str(low >> s & 0xFF) for s in (24, 16, 8, 0))
  if value >> 32 == 0xFFFF:
    out.append("::ffff:" + quad)
  if value >> 32 == 0:
    out.append("::" + quad)
  if value >> 32 == 0x64FF9B << 64:
    out.append("64:ff9b::" + quad)
  return out


def test_random_against_ipaddress():
  gen = random.Random(4291)
  for _ in range(600):
    kind = gen.randrange(4)
    low = gen.getrandbits(32)
    if kind == 0:
      value = 0xFFFF << 32 | low
    elif kind == 1:
      value = low if low >> 16 else low | 1 << 24
    elif kind == 2:
      value = 0x64FF9B << 96 | low
    else:
      value = gen.getrandbits(128)
    for text in spellings(gen, value):
      assert parse_address(text).value == int(ipaddress.ip_address(text)) == value, text
    v4 = ".".join(str(gen.randrange(256)) for _ in range(4))
    assert parse_address(v4).value == int(ipaddress.IPv4Address(v4))
