"""Rate limiters with an injectable clock: a token bucket, a sliding window and per-key limiters."""

from ratelimit.bucket import TokenBucket
from ratelimit.keyed import KeyedLimiter
from ratelimit.window import SlidingWindow

__all__ = ["KeyedLimiter", "SlidingWindow", "TokenBucket"]
