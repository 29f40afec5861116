"""The position a batch leaves (``position.json``): the last event's file, offset and GTID,
the number of events and the latest GTID of each domain, from per-domain aggregates of the
batch's events, which one query reads (:func:`position_groups`) or the batch's first look
reads with the rest (:func:`position_aggregates`, :func:`by_domain`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["by_domain", "gtid_domain", "position_after", "position_aggregates", "position_groups"]


def gtid_domain() -> Any:
    """The GTID domain of an event (None: the event has no GTID)."""
    from pyspark.sql import functions as F

    return F.split(F.col("source.gtid"), "-")[0].cast("bigint")


def position_aggregates(counted: Any, prefix: str = "") -> list[Any]:
    """Over the rows where ``counted`` holds: the source ``s`` of the last event, its ``seq``
    (``at``), the number of events ``n`` and the latest GTID ``v`` (names after ``prefix``).
    Snapshot rows (a negative file index) are never counted."""
    from pyspark.sql import functions as F

    counted = counted & (F.col("seq.file_index") >= 0)
    gtid = F.split(F.col("source.gtid"), "-")
    seq = F.when(counted, F.col("seq"))
    return [
        F.max_by(F.col("source"), seq).alias(f"{prefix}s"),
        F.max(seq).alias(f"{prefix}at"),
        F.count(seq).alias(f"{prefix}n"),
        F.max(
            F.when(
                counted & F.col("source.gtid").isNotNull(),
                F.struct(
                    gtid[2].cast("bigint").alias("seq"),
                    gtid[1].cast("bigint").alias("server"),
                ),
            )
        ).alias(f"{prefix}v"),
    ]


def position_groups(log: Any) -> list[Any]:
    """Per GTID ``domain`` of ``log``: :func:`position_aggregates` of its events. One query."""
    from pyspark.sql import functions as F

    groups: list[Any] = (
        log.where(F.col("seq.file_index") >= 0)
        .groupBy(gtid_domain().alias("domain"))
        .agg(*position_aggregates(F.lit(True)))
        .collect()
    )
    return groups


def by_domain(groups: Iterable[Any], prefix: str) -> list[dict[str, Any]]:
    """Groups of finer keys with ``domain`` and prefixed :func:`position_aggregates`, as
    :func:`position_groups` gives them: one per domain that has events."""
    found: dict[Any, dict[str, Any]] = {}
    for group in groups:
        at = group[f"{prefix}at"]
        if at is None:  # no event of the group counts
            continue
        v = group[f"{prefix}v"]
        domain = found.setdefault(group["domain"], {"domain": group["domain"], "n": 0, "v": None})
        domain["n"] += int(group[f"{prefix}n"])
        if "at" not in domain or tuple(at) > tuple(domain["at"]):
            domain["at"], domain["s"] = at, group[f"{prefix}s"]
        if v is not None and (domain["v"] is None or tuple(v) > tuple(domain["v"])):
            domain["v"] = v
    return list(found.values())


def position_after(
    groups: Sequence[Any], base: Mapping[str, Any] | None, batch_id: int
) -> dict[str, Any]:
    """The position after the events of ``groups`` (as :func:`position_groups` gives them),
    which follow those of the position ``base`` (None: none before)."""
    gtids = [r for r in groups if r["domain"] is not None and r["v"] is not None]
    latest = max(groups, key=lambda r: tuple(r["at"]), default=None)
    # domain -> (seq, server), the latest of each domain
    domains: dict[int, tuple[int, int]] = {}
    for text in filter(None, ((base or {}).get("gtid_binlog_pos") or "").split(",")):
        domain, server, seq = (int(part) for part in text.split("-"))
        domains[domain] = (seq, server)
    for r in gtids:
        found = (int(r["v"]["seq"]), int(r["v"]["server"]))
        domains[int(r["domain"])] = max(found, domains.get(int(r["domain"]), found))
    source = latest["s"] if latest is not None else None
    count = sum(int(r["n"]) for r in groups)
    before = base or {}
    return {
        "batch_id": batch_id,
        "events": int(before.get("events") or 0) + count,
        "file": source["file"] if source else before.get("file"),
        "pos": source["pos"] if source else before.get("pos"),
        "gtid": source["gtid"] if source else before.get("gtid"),
        "gtid_binlog_pos": ",".join(
            f"{d}-{server}-{seq}" for d, (seq, server) in sorted(domains.items())
        ),
    }
