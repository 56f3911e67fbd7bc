"""One field of a cron expression: its text -> the set of values it names."""

MONTH_NAMES = {name: number for number, name in enumerate(
    ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"], start=1)}
WEEKDAY_NAMES = {name: number for number, name in enumerate(["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"])}


class CronError(ValueError):
  """A malformed cron expression, or one that never fires."""


def _number(text, lo, hi, names):
  """One value of a field: ASCII digits or (where the field has names) a name, within lo..hi."""
  if names and text.upper() in names:
    return names[text.upper()]
  if not (text.isascii() and text.isdigit()):
    raise CronError(f"not a number: {text!r}")
  value = int(text)
  if not lo <= value <= hi:
    raise CronError(f"{value} is outside {lo}-{hi}")
  return value


def parse_field(text, lo, hi, names=None):
  """The set of values in lo..hi that a field names. A field is a comma-separated list of items;
  an item is '*', 'N' or 'N-M', optionally followed by '/S' (every S-th value)."""
  values = set()
  for item in text.split(","):
    base, slash, step_text = item.partition("/")
    step = 1
    if slash:
      if not (step_text.isascii() and step_text.isdigit()) or int(step_text) < 1:
        raise CronError(f"bad step: {item!r}")
      step = int(step_text)
    if base == "*":
      start, end = lo, hi
    elif "-" in base:
      first, _, last = base.partition("-")
      start, end = _number(first, lo, hi, names), _number(last, lo, hi, names)
      if start > end:
        raise CronError(f"empty range: {item!r}")
    else:
      start = _number(base, lo, hi, names)
      end = hi if slash else start
    values.update(value for value in range(start, end + 1) if value % step == 0)
  return values
