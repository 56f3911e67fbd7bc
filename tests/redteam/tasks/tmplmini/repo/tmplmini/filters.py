"""The filters: value | name or value | name(arguments). Each takes the render environment, the
value and the filter's arguments."""

from tmplmini.markup import Markup, escape
from tmplmini.runtime import UNDEFINED, is_missing, text_of


def _items(value):
  return [] if is_missing(value) else list(value)


def f_upper(env, value):
  return text_of(value).upper()


def f_lower(env, value):
  return text_of(value).lower()


def f_capitalize(env, value):
  return text_of(value).capitalize()


def f_trim(env, value):
  return text_of(value).strip()


def f_length(env, value):
  return 0 if is_missing(value) else len(value)


def f_default(env, value, fallback=""):
  return fallback if is_missing(value) else value


def f_join(env, value, separator=""):
  items = _items(value)
  if not env.autoescape:
    return text_of(separator).join(text_of(item) for item in items)
  return Markup(escape(separator).join(escape(text_of(item)) for item in items))


def f_replace(env, value, old, new):
  return text_of(value).replace(text_of(old), text_of(new))


def f_truncate(env, value, length, end="..."):
  if not isinstance(length, int):
    raise TypeError("truncate() takes an int length")
  text = text_of(value)
  return text if len(text) <= length else text[:length] + text_of(end)


def f_first(env, value):
  items = _items(value)
  return items[0] if items else UNDEFINED


def f_last(env, value):
  items = _items(value)
  return items[-1] if items else UNDEFINED


def f_escape(env, value):
  return escape(text_of(value))


def f_safe(env, value):
  return value if isinstance(value, Markup) else Markup(text_of(value))


# name -> (function, the fewest arguments, the most arguments)
FILTERS = {
    "upper": (f_upper, 0, 0),
    "lower": (f_lower, 0, 0),
    "capitalize": (f_capitalize, 0, 0),
    "trim": (f_trim, 0, 0),
    "length": (f_length, 0, 0),
    "default": (f_default, 0, 1),
    "join": (f_join, 0, 1),
    "replace": (f_replace, 2, 2),
    "truncate": (f_truncate, 1, 2),
    "first": (f_first, 0, 0),
    "last": (f_last, 0, 0),
    "escape": (f_escape, 0, 0),
    "e": (f_escape, 0, 0),
    "safe": (f_safe, 0, 0),
}
