"""Summaries of proxy access logs."""

from accesslog.parse import Request, parse_line
from accesslog.report import print_report, summarize

__all__ = ["Request", "parse_line", "print_report", "summarize"]
