"""Catalogue records."""

import dataclasses

from inventory.util import parse_price


@dataclasses.dataclass(frozen=True)
class Item:
  """One catalogue line: a stock keeping unit, its name, unit price and quantity."""
  sku: str
  name: str
  unit_price: float
  qty: int = 0

  @classmethod
  def from_row(cls, row):
    """An Item from a csv.DictReader row of data/catalog.csv."""
    return cls(sku=row["sku"].strip(), name=row["name"].strip(),
               unit_price=parse_price(row["unit_price"]), qty=int(row.get("qty") or 0))


def load_catalog(path):
  """Every Item in a catalogue CSV file (columns sku,name,unit_price,qty)."""
  import csv
  with open(path, newline="", encoding="utf-8") as fh:
    return [Item.from_row(row) for row in csv.DictReader(fh)]
