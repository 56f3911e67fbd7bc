"""In-memory accounts with deposits, withdrawals, transfers and compound interest."""

from ledger.account import Account, InsufficientFunds
from ledger.interest import compound

__all__ = ["Account", "InsufficientFunds", "compound"]
