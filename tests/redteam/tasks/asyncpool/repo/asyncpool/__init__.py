"""Bounded concurrency helpers for asyncio: map_limited and retry."""

from asyncpool.pool import map_limited
from asyncpool.retry import retry

__all__ = ["map_limited", "retry"]
