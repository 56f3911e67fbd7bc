"""IPv4 and IPv6 addresses and CIDR networks: parsing, RFC 5952 text, containment, summarising."""

from cidrkit.addr import Address, AddressError, format_address, parse_address
from cidrkit.collapse import collapse, summarize
from cidrkit.network import Network, parse_network

__all__ = ["Address", "AddressError", "Network", "collapse", "format_address", "parse_address", "parse_network",
           "summarize"]
