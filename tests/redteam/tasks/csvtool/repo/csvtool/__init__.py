"""Summaries of one column of a CSV file."""

__version__ = "1.2.0"
