import unittest

from tempus import UNITS, format_duration, next_runs, parse_duration, register_unit
from tempus import duration as duration_module


class ParseTest(unittest.TestCase):

  def test_single_units(self):
    cases = {"45s": 45, "3m": 180, "2h": 7200, "1d": 86400, "2w": 1209600}
    for text, seconds in cases.items():
      self.assertEqual(parse_duration(text), seconds, msg=text)

  def test_compound_and_spaces(self):
    cases = {"1h30m": 5400, "1h 30m": 5400, " 2d 3h 4m 5s ": 183845, "-1m30s": -90, "1m 1m": 120}
    for text, seconds in cases.items():
      self.assertEqual(parse_duration(text), seconds, msg=text)

  def test_fractions(self):
    self.assertAlmostEqual(parse_duration("1.5h"), 5400)
    self.assertAlmostEqual(parse_duration("0.25m"), 15)

  def test_milliseconds(self):
    cases = [("250ms", 0.25), ("1s500ms", 1.5), ("2m 5ms", 120.005), ("1h1m1s1ms", 3661.001),
             ("0.5ms", 0.0005), ("-40ms", -0.04)]
    for text, seconds in cases:
      self.assertAlmostEqual(parse_duration(text), seconds, places=9, msg=text)

  def test_minutes_are_not_milliseconds(self):
    self.assertEqual(parse_duration("5m"), 300)
    self.assertEqual(parse_duration("5m5s"), 305)
    self.assertAlmostEqual(parse_duration("5m5ms"), 300.005)

  def test_invalid(self):
    for text in ("", "   ", "-", "5", "h", "1x", "1h garbage", "1.h", "--1s", "1 hour", "ms5"):
      with self.assertRaises(ValueError, msg=repr(text)):
        parse_duration(text)


class FormatTest(unittest.TestCase):

  def test_format(self):
    cases = {0: "0s", 59: "59s", 60: "1m", 5400: "1h 30m", 90061: "1d 1h 1m 1s", -90: "-1m 30s",
             1209600: "2w", 0.25: "250ms", 61.5: "1m 1s 500ms"}
    for seconds, text in cases.items():
      self.assertEqual(format_duration(seconds), text, msg=seconds)

  def test_round_trip(self):
    for seconds in (0, 1, 59, 61, 3599, 3601, 86399, 90061.25, 0.001, 12.345, 7 * 86400 + 0.5, -2.75):
      self.assertAlmostEqual(parse_duration(format_duration(seconds)), seconds, places=6, msg=seconds)


class RegisteredUnitTest(unittest.TestCase):

  def setUp(self):
    self.saved = dict(UNITS)
    register_unit("fn", 14 * 86400)
    register_unit("mo", 30 * 86400)

  def tearDown(self):
    UNITS.clear()
    UNITS.update(self.saved)

  def test_custom_unit(self):
    self.assertEqual(parse_duration("1fn 1d"), 15 * 86400)

  def test_unit_sharing_a_prefix(self):
    self.assertEqual(parse_duration("2mo"), 60 * 86400)
    self.assertEqual(parse_duration("2mo 3m"), 60 * 86400 + 180)
    self.assertAlmostEqual(parse_duration("1mo 3ms"), 30 * 86400 + 0.003)

  def test_bad_registration(self):
    for name, seconds in (("", 5), ("x1", 5), ("x", 0), ("y", -1)):
      with self.assertRaises(ValueError, msg=(name, seconds)):
        register_unit(name, seconds)

  def test_table_is_restored(self):
    self.assertIs(duration_module.UNITS, UNITS)
    self.assertIn("mo", UNITS)


class ScheduleTest(unittest.TestCase):

  def setUp(self):
    self.start = 1_700_000_000.0
    self.saved = dict(UNITS)
    self.addCleanup(self._restore)

  def _restore(self):
    UNITS.clear()
    UNITS.update(self.saved)

  def test_every_string(self):
    runs = next_runs(self.start, "1h 30m", 3)
    self.assertEqual(runs, [self.start, self.start + 5400, self.start + 10800])

  def test_every_milliseconds(self):
    runs = next_runs(self.start, "750ms", 4)
    for got, want in zip(runs, [self.start + 0.75 * i for i in range(4)]):
      self.assertAlmostEqual(got, want, places=6)

  def test_bad_interval(self):
    with self.assertRaisesRegex(ValueError, "positive"):
      next_runs(self.start, "0s", 2)
