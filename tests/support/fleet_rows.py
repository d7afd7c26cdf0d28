"""Comparing a table read from a store with the same table read locally, as
the HDFS and S3 fleet tests do: rows grouped by their cluster's fleet name,
and compared as sorted, order-free values."""


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
