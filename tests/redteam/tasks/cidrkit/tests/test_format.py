import ipaddress
import random

import pytest

from cidrkit import Address, format_address, parse_address

# (text, its canonical form): RFC 5952 section 4 and friends.
FORMATTED = [
    ("0:0:0:0:0:0:0:0", "::"),
    ("0:0:0:0:0:0:0:1", "::1"),
    ("1:0:0:0:0:0:0:0", "1::"),
    ("2001:DB8:0:0:0:0:2:1", "2001:db8::2:1"),
    ("2001:0db8:0000:0000:0001:0000:0000:0001", "2001:db8::1:0:0:1"),
    ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"),
    ("2001:db8:0:0:1:0:0:0", "2001:db8:0:0:1::"),
    ("2001:db8:1:0:0:0:1:0", "2001:db8:1::1:0"),
    ("1:0:0:2:0:0:0:3", "1:0:0:2::3"),
    ("1:0:0:0:2:0:0:0", "1::2:0:0:0"),
    ("0:1:0:1:0:1:0:1", "0:1:0:1:0:1:0:1"),
    ("0:0:1:0:0:0:1:0", "0:0:1::1:0"),
    ("2001:db8::", "2001:db8::"),
    ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
    ("2001:db8:0:0:0:204:61ff:fe9d", "2001:db8::204:61ff:fe9d"),
    ("1:2:3:4:5:6:7:0", "1:2:3:4:5:6:7:0"),
    ("0:2:3:4:5:6:7:8", "0:2:3:4:5:6:7:8"),
    ("1:0:0:4:5:0:0:8", "1::4:5:0:0:8"),
    ("192.0.2.1", "192.0.2.1"),
    ("0.0.0.0", "0.0.0.0"),
]


@pytest.mark.parametrize("text, expected", FORMATTED, ids=["fmt%d" % i for i in range(len(FORMATTED))])
def test_canonical_text(text, expected):
  assert format_address(parse_address(text)) == expected
  assert str(parse_address(text)) == expected
  assert parse_address(expected) == parse_address(text)


# -- a slow reference ------------------------------------------------------------------------

def reference_format(value):
  """Tries every run of two or more zero groups as the '::'; the one that replaces the most groups
  wins, the leftmost of equal ones."""
  groups = ["%x" % (value >> (112 - 16 * i) & 0xFFFF) for i in range(8)]
  best, replaced = ":".join(groups), 1
  for start in range(8):
    for end in range(start + 2, 9):
      if all(g == "0" for g in groups[start:end]) and end - start > replaced:
        best, replaced = ":".join(groups[:start]) + "::" + ":".join(groups[end:]), end - start
  return best


# Group values seen in real address plans.
PLAN = [0x1, 0x2, 0x5, 0x42, 0xdb8, 0x2001, 0xffff, 0xabcd, 0x85a3, 0x8a2e, 0x7334, 0x1234, 0xcafe, 0xbeef]


def random_value(gen):
  value = 0
  for _ in range(8):
    value = value << 16 | (0 if gen.random() < 0.45 else gen.choice(PLAN))
  return value


def test_random_addresses_match_reference():
  gen = random.Random(5952)
  for _ in range(1500):
    value = random_value(gen)
    want = reference_format(value)
    got = format_address(Address(6, value))
    assert got == want, hex(value)
    assert int(ipaddress.IPv6Address(got)) == value


def test_random_round_trip():
  gen = random.Random(16)
  for _ in range(500):
    value = random_value(gen)
    want = reference_format(value)
    assert parse_address(want).value == value
    assert format_address(parse_address(want)) == want
