"""python -m urlnorm [--check] < urls.txt"""

import sys

from urlnorm.cli import main

sys.exit(main())
