"""Cron expressions: parsing the five fields and finding the times an expression fires."""

from cronex.expr import CronExpr, matches, parse
from cronex.fields import CronError, parse_field
from cronex.schedule import days_in_month, iter_fires, next_fire

__all__ = ["CronError", "CronExpr", "days_in_month", "iter_fires", "matches", "next_fire", "parse", "parse_field"]
