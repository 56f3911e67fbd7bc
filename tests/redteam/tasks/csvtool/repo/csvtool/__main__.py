from csvtool.cli import main

raise SystemExit(main())
