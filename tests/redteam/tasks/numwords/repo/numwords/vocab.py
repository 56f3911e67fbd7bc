"""The words of numbers."""

ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
        "nineteen"]
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
# SCALES[k] names 1000**k.
SCALES = ["", "thousand", "million", "billion", "trillion", "quadrillion", "quintillion",
          "sextillion", "septillion", "octillion", "nonillion", "decillion"]
LIMIT = 1000 ** len(SCALES)  # 10**36
