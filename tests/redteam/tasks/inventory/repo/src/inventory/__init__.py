"""Stock records and order pricing for a small shop."""

from inventory.models import Item
from inventory.pricing import apply_discount, line_total, sales_tax, subtotal, total_price

__all__ = ["Item", "apply_discount", "line_total", "sales_tax", "subtotal", "total_price"]
__version__ = "0.3.1"
