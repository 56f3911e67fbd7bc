"""Accounts: a balance in cents precision and a history of what changed it."""

from ledger.interest import compound


class InsufficientFunds(Exception):
  """A withdrawal or transfer asked for more than the balance."""


def _amount(value):
  if value <= 0:
    raise ValueError(f"amount must be positive: {value}")
  return round(value, 2)


class Account:
  """A named account. `rate` is the interest rate per period (0.05 is 5%)."""

  def __init__(self, owner, balance=0, rate=0.0):
    if balance < 0:
      raise ValueError(f"opening balance must not be negative: {balance}")
    self.owner = owner
    self.rate = rate
    self._balance = round(float(balance), 2)
    self._history = []

  def __repr__(self):
    return f"Account({self.owner!r}, {self._balance!r})"

  @property
  def balance(self):
    return self._balance

  def history(self):
    """`(kind, amount)` entries, oldest first."""
    return list(self._history)

  def deposit(self, amount):
    amount = _amount(amount)
    self._balance = round(self._balance + amount, 2)
    self._history.append(("deposit", amount))

  def withdraw(self, amount):
    amount = _amount(amount)
    if amount > self._balance:
      raise InsufficientFunds(f"{self.owner}: balance {self._balance}, asked for {amount}")
    self._balance = round(self._balance - amount, 2)
    self._history.append(("withdraw", amount))

  def transfer_to(self, other, amount):
    """Moves `amount` from this account to `other`."""
    other.deposit(amount)
    self.withdraw(amount)

  def add_interest(self, periods=1):
    """Credits `periods` periods of compound interest; returns the interest earned."""
    new_balance = compound(self._balance, self.rate, periods)
    earned = round(new_balance - self._balance, 2)
    if earned:
      self._balance = new_balance
      self._history.append(("interest", earned))
    return earned
