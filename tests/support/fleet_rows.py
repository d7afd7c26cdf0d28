"""The HDFS and S3 fleet tests' fleet, and comparing a table read from a
store with the same table read locally: rows grouped by their cluster's
fleet name, and compared as sorted, order-free values."""

from pathlib import Path

from tests.support.cluster_histories import write_cluster
from tests.support.paths import CORPORA, EXAMPLE

#: clusters of random histories in the fleet: name -> (seed, steps)
GENERATED = {"generated-a": (11, 40), "generated-b": (12, 60)}


def fleet_folders(generated: Path) -> dict:
    """{name in the store: local cluster folder}: the example, the clusters
    of :data:`GENERATED` (written below ``generated``: a snapshot and a log
    after it) and every corpus cluster (a nested one's folders joined by ``--``)."""
    from metashell.spark import discover

    out = {"example": EXAMPLE}
    for name, (seed, steps) in GENERATED.items():
        out[name] = write_cluster(generated / name, seed, steps)
    if CORPORA.is_dir():
        for c in discover.clusters(str(CORPORA)):
            out[c[len(str(CORPORA)) + 1:].replace("/", "--")] = c
    return out


def by_name(rows: "list[dict]", names: dict) -> dict:
    """Rows by the fleet name of their cluster (``names``: cluster -> name),
    the cluster column blanked (it names the store or the local folder)."""
    out: dict = {}
    for r in rows:
        out.setdefault(names[r["cluster"]], []).append({**r, "cluster": None})
    return out


def comparable(table: str, rows: "list[dict]") -> list:
    """``rows`` as a sorted list of their values; in ``clusters``, the columns
    that hold file names (the store's or the local folder's) are left out."""
    if table == "clusters":
        rows = [{k: v for k, v in r.items() if k not in ("snapshot", "segments", "problems",
                                                        "notes")} for r in rows]
    return sorted(repr(sorted(r.items())) for r in rows)
