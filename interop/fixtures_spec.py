"""The spec and the expected result for our golden fixture tables (FORMAT.md).

    python fixtures_spec.py ROOT --spec SPEC.json --expected EXPECTED.json

ROOT is the generated fixture folder (`/tmp/iceberg-fixtures`, see tests/fixtures/README.md).
The expected rows are what the generator appended (`ROOT/expected/<table>.parquet`, plain
Parquet); expected filter results are those rows filtered here in Python; the expected
history is the snapshot list of our own metadata.json; the expected file stats are our
manifests decoded with fastavro (manifest_files.py), and the `data_files` pseudo-reader holds
those stats against the Parquet files themselves.
"""

import argparse
import json
import math
import sys
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))

import canon  # noqa: E402
import manifest_files  # noqa: E402
import stats  # noqa: E402
import table_meta  # noqa: E402

GROUP = "Golden fixtures (tests/fixtures/tables)"
# Filters every engine evaluates the same way (FORMAT.md: no NaN or uuid comparisons, nulls
# guarded); each with its Python twin over the raw rows.
COMMON = {
    "id_lt_15": ({"op": "<", "col": "id", "value": 15}, lambda r: r["id"] < 15),
    "id_in": ({"op": "in", "col": "id", "values": [1, 22, 33]}, lambda r: r["id"] in (1, 22, 33)),
}
# Per partition source column, when the table is partitioned by it.
BY_COLUMN = {
    "i": ({"op": ">=", "col": "i", "value": 0}, lambda r: r["i"] is not None and r["i"] >= 0),
    "l": ({"op": "<", "col": "l", "value": 42}, lambda r: r["l"] is not None and r["l"] < 42),
    "s": ({"op": "=", "col": "s", "value": "abc"}, lambda r: r["s"] == "abc"),
    "dt": ({"op": ">=", "col": "dt", "value": 0}, lambda r: r["dt"] is not None and r["dt"].toordinal() >= 719163),
}


def build(root: Path) -> tuple[dict, dict]:
    index = json.loads((root / "index.json").read_text())
    spec_tables, expected_tables = [], {}
    for t in index["tables"]:
        meta_path = root / t["metadata"]
        meta = table_meta.load(str(meta_path))
        rows = canon.arrow_rows(pq.read_table(root / t["expected"]))
        filters = dict(COMMON)
        if any(f["name"] == "d" for f in meta.fields):
            # NaN is left out of Parquet min/max; a reader that prunes on those misses these rows
            filters["d_is_nan"] = ({"op": "is_nan", "col": "d"},
                                   lambda r: r["d"] is not None and math.isnan(r["d"]))
        for p in t["partition"]:
            col = p[p.index("(") + 1:-1]
            filters[f"{col}_not_null"] = (
                {"op": "not_null", "col": col}, lambda r, c=col: r[c] is not None)
            if col in BY_COLUMN:
                filters[f"{col}_cmp"] = BY_COLUMN[col]
        spec_tables.append({"name": t["name"], "metadata": str(meta_path), "group": GROUP,
                            "filters": {k: f for k, (f, _) in filters.items()}})
        doc = json.loads(meta_path.read_text())
        snaps = [stats.canon_snapshot({
            "snapshot_id": s["snapshot-id"], "parent_id": s.get("parent-snapshot-id"),
            "sequence_number": s.get("sequence-number", 0), "timestamp_ms": s["timestamp-ms"],
            "operation": s["summary"]["operation"],
            "summary": {k: v for k, v in s["summary"].items() if k != "operation"},
        }) for s in doc.get("snapshots", [])]
        expected_tables[t["name"]] = {
            "scan": [canon.canon_row(r, meta.fields) for r in rows],
            "filters": {k: [canon.canon_row(r, meta.fields) for r in rows if keep(r)]
                        for k, (_, keep) in filters.items()},
            "snapshots": stats.sort_snapshots(snaps),
            "files": stats.sort_files(manifest_files.live_files(meta)),
        }
    return {"tables": spec_tables}, {"reader": "expected", "tables": expected_tables}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path)
    ap.add_argument("--spec", type=Path, required=True)
    ap.add_argument("--expected", type=Path, required=True)
    args = ap.parse_args()
    spec, expected = build(args.root)
    args.spec.write_text(json.dumps(spec, indent=1, ensure_ascii=False) + "\n")
    args.expected.write_text(json.dumps(expected, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(spec['tables'])} tables", file=sys.stderr)


if __name__ == "__main__":
    main()
