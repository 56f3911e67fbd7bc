"""Money for invoices: exact rounding to a currency's minor unit, allocation, tax lines."""

from invoicekit.allocate import allocate
from invoicekit.invoice import Invoice, Line
from invoicekit.money import CURRENCY_PLACES, ROUNDING_MODES, quantum, round_money

__all__ = ["CURRENCY_PLACES", "Invoice", "Line", "ROUNDING_MODES", "allocate", "quantum", "round_money"]
