import pytest

from ledger import Account, InsufficientFunds
from ledger.interest import compound


@pytest.fixture
def accounts():
  return Account("alice", 100), Account("bob", 50)


def test_deposit_and_withdraw():
  a = Account("x", 100)
  a.withdraw(30)
  assert a.balance == 70
  a.deposit(5.5)
  assert a.balance == 75.5


def test_withdraw_too_much_raises():
  a = Account("x", 20)
  with pytest.raises(InsufficientFunds):
    a.withdraw(20.01)
  assert a.balance == 20
  assert a.history() == []


def test_amounts_must_be_positive():
  a = Account("x", 10)
  with pytest.raises(ValueError):
    a.deposit(0)
  with pytest.raises(ValueError):
    a.withdraw(-5)


def test_history_records_operations():
  a = Account("x")
  a.deposit(10)
  a.deposit(15)
  a.withdraw(20)
  assert a.history() == [("deposit", 10), ("deposit", 15), ("withdraw", 20)]


def test_transfer_moves_money(accounts):
  alice, bob = accounts
  alice.transfer_to(bob, 40)
  assert (alice.balance, bob.balance) == (60, 90)
  assert alice.history() == [("withdraw", 40)]
  assert bob.history() == [("deposit", 40)]


def test_failed_transfer_changes_nothing(accounts):
  alice, bob = accounts
  with pytest.raises(InsufficientFunds):
    alice.transfer_to(bob, 500)
  assert alice.balance == 100
  assert bob.balance == 50


def test_failed_transfer_keeps_history_clean(accounts):
  alice, bob = accounts
  bob.transfer_to(alice, 20)
  with pytest.raises(InsufficientFunds):
    bob.transfer_to(alice, 31)
  assert bob.history() == [("withdraw", 20)]
  assert alice.history() == [("deposit", 20)]
  assert (alice.balance, bob.balance) == (120, 30)


def test_compound():
  assert compound(1000, 0.05, 2) == 1102.5
  assert compound(80, 0.1, 0) == 80


def test_add_interest():
  a = Account("saver", 200, rate=0.1)
  assert a.add_interest(2) == 42.0
  assert a.balance == 242.0
  assert a.history()[-1] == ("interest", 42.0)
