import unittest

from tempus import format_duration, parse_duration


class PublicDurationTest(unittest.TestCase):

  def test_hours_and_minutes(self):
    self.assertEqual(parse_duration("1h 30m"), 5400)
    self.assertEqual(format_duration(5400), "1h 30m")

  def test_milliseconds(self):
    self.assertAlmostEqual(parse_duration("1.5s 250ms"), 1.75)

  def test_units(self):
    for text, seconds in (("2w", 1209600), ("1d", 86400), ("45s", 45)):
      with self.subTest(text=text):
        self.assertEqual(parse_duration(text), seconds)


if __name__ == "__main__":
  unittest.main()
