#!/usr/bin/env python3
"""Run ``fakemaster check`` against every replication client installable here and write the
compatibility matrix (docs/compatibility.md); see fakemaster/contract/matrix.py.

    python scripts/compatibility-matrix.py                       # every case but live_stream
    python scripts/compatibility-matrix.py --only 'multi_domain/*' --client zongji --out m.md
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fakemaster.contract.matrix import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
