#!/usr/bin/env python3
"""Capture golden binlog files from a real MariaDB server.

For every variant this starts a private mariadbd (see tests/peers/mariadb.py)
with the variant's options, runs the matching workload from
tests/peers/workload.py (never the > 16 MiB row), stops the server cleanly
(so the last file ends with a STOP event) and writes

    tests/golden/binlogs/<variant>/mysql-bin.NNNNNN   the server's bytes, as is
    tests/golden/binlogs/<variant>/expected.json      WorkloadResult + file info

``expected.json`` holds the server VERSION(), the options, the relevant
server variables, for each binlog file its size, sha256 and event-type
counts, and for every table its columns (information_schema) and final rows
(raw bytes: a JSON string if valid UTF-8 without control characters,
else {"hex": ...}; load it with ``WorkloadResult.loads``).

Usage: scripts/capture-golden-binlogs.py [--variant NAME ...] [--out DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from tests.peers.binlog_scan import event_type_counts  # noqa: E402
from tests.peers.mariadb import MariaDBServer  # noqa: E402
from tests.peers.workload import (  # noqa: E402
    WorkloadResult,
    run_codec_workload,
    run_compressed_workload,
    run_full_metadata_workload,
    run_minimal_image_workload,
)

DEFAULT_OUT = REPO_ROOT / "tests" / "golden" / "binlogs"

Runner = Callable[[MariaDBServer], WorkloadResult]

#: variant name -> (server options, workload, description)
VARIANTS: dict[str, tuple[dict[str, Any], Runner, str]] = {
    "default": (
        {},
        lambda s: run_codec_workload(s, huge_row=False, variant="default"),
        "default options (ROW, FULL image, CRC32 checksums): every column type, DML, DDL,"
        " XA, statement-based INTVAR/RAND/USER_VAR, LOAD DATA, rotation",
    ),
    "minimal": (
        {"binlog_row_image": "MINIMAL"},
        lambda s: run_minimal_image_workload(s, variant="minimal"),
        "binlog_row_image=MINIMAL: partial before/after images",
    ),
    "compressed": (
        {"log_bin_compress": "ON", "log_bin_compress_min_len": 10},
        lambda s: run_compressed_workload(s, variant="compressed"),
        "log_bin_compress=ON, min_len=10: QUERY_COMPRESSED and *_ROWS_COMPRESSED_V1",
    ),
    "full_metadata": (
        {"binlog_row_metadata": "FULL"},
        run_full_metadata_workload,
        "binlog_row_metadata=FULL: TABLE_MAP optional metadata (names, charsets, enum/set"
        " values, signedness, primary key, geometry types)",
    ),
    "checksum_none": (
        {"binlog_checksum": "NONE"},
        lambda s: run_codec_workload(s, huge_row=False, variant="checksum_none"),
        "binlog_checksum=NONE: the codec workload without CRC32 trailers",
    ),
}


def capture(name: str, out_root: Path) -> tuple[int, str]:
    options, runner, description = VARIANTS[name]
    out = out_root / name
    with MariaDBServer(options) as server:
        t0 = time.monotonic()
        result = runner(server)
        server.stop()
        files = server.binlog_files()
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        file_info = {}
        for f in files:
            data = f.read_bytes()
            (out / f.name).write_bytes(data)
            file_info[f.name] = {
                "size": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
                "event_types": dict(sorted(event_type_counts([f]).items())),
            }
        result.binlog_files = [f.name for f in files]
        result.extra.update(
            {
                "description": description,
                "options": {**server.options, "log_bin": "<tmp>/binlog/mysql-bin"},
                "files": file_info,
                "clean_shutdown": True,
                "captured_by": "scripts/capture-golden-binlogs.py",
            }
        )
        (out / "expected.json").write_text(result.dumps(), encoding="utf-8")
        elapsed = time.monotonic() - t0
    total = sum(p.stat().st_size for p in out.iterdir())
    print(
        f"{name:14s} {len(files)} binlog file(s), {total / 1024:7.1f} KiB total"
        f" ({elapsed:.1f}s) {result.version}"
    )
    return total, result.version


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--variant", action="append", choices=sorted(VARIANTS), help="default: all")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--max-total-kib", type=int, default=2048, help="fail above this total size")
    args = ap.parse_args(argv)
    names = args.variant or list(VARIANTS)
    grand = 0
    versions = set()
    for name in names:
        size, version = capture(name, args.out)
        grand += size
        versions.add(version)
    (args.out / "README.md").write_text(_readme(versions), encoding="utf-8")
    print(
        f"total {grand / 1024:.1f} KiB in {args.out.relative_to(REPO_ROOT) if args.out.is_relative_to(REPO_ROOT) else args.out}"
    )
    if grand > args.max_total_kib * 1024:
        print(
            f"error: golden files exceed {args.max_total_kib} KiB; trim the workload",
            file=sys.stderr,
        )
        return 1
    return 0


def _readme(versions: set[str]) -> str:
    lines = [
        "# Golden binlogs from a real MariaDB server",
        "",
        "Generated by `scripts/capture-golden-binlogs.py`; do not edit by hand.",
        f"Server: {', '.join(sorted(versions))}.",
        "",
        "Each directory holds the binlog files exactly as the server wrote them (cleanly",
        "stopped, so the last file ends with a STOP event) and `expected.json`: the",
        "server options and variables, per-file size/sha256/event-type counts, and for",
        "every table its information_schema columns and final rows (raw text-protocol",
        "bytes; load with `tests.peers.workload.WorkloadResult.loads`).",
        "",
        "| variant | server options | content |",
        "|---|---|---|",
    ]
    for name, (options, _runner, description) in VARIANTS.items():
        opts = ", ".join(f"`{k}={v}`" for k, v in options.items()) or "(defaults)"
        lines.append(f"| `{name}` | {opts} | {description} |")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
