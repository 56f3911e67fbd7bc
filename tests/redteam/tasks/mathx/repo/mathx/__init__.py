"""Small statistics helpers."""

from mathx.stats import mean, median
