"""Text helpers."""

from textkit.slug import slugify
