"""``python -m fakemaster``: the command line of fakemaster.cli."""

from fakemaster.cli import main

raise SystemExit(main())
