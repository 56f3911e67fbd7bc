"""Compact duration strings ('1h 30m', '250ms') to seconds and back."""

from tempus.duration import UNITS, format_duration, parse_duration, register_unit
from tempus.schedule import next_runs

__all__ = ["UNITS", "format_duration", "next_runs", "parse_duration", "register_unit"]
