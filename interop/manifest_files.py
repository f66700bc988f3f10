"""The live files of a table's current snapshot, decoded with fastavro: the expected file stats.

This is the yardstick the readers' stats are held against, so it shares nothing with the Rust
code that wrote the manifests: fastavro decodes the Avro (partition values through their Avro
logical types: date, time-micros, timestamp-micros, decimal, uuid) and `stats.canon_file` makes
them canonical like every reader's. Inheritance follows the
spec and Java's ManifestReader: a v3 data file whose first_row_id is null gets its manifest's
first_row_id plus the record counts of the null-id, not-deleted data files before it.
"""

import json
from pathlib import Path
from typing import Any

import fastavro

from canon import unscaled
from stats import canon_file
from table_meta import TableMeta, read_metadata, strip_scheme

DELETED = 2  # manifest entry status


def _read_avro(path: str) -> list[dict]:
    with open(strip_scheme(path), "rb") as f:
        return list(fastavro.reader(f))


def _map(kv: list | None) -> dict | None:
    """Iceberg writes int-keyed maps as arrays of {key, value} records."""
    return None if kv is None else {e["key"]: e["value"] for e in kv}


def _partition_value(v: Any, t: Any) -> Any:
    if isinstance(v, (bytes, bytearray)) and isinstance(t, str) and t.startswith("decimal"):
        scale = int(t.split(",")[1].rstrip(")"))  # a decimal without its logical type
        return unscaled(int.from_bytes(v, "big", signed=True), scale)
    return v  # canon() takes the logical values and ints (days, micros, nanos) alike


def live_files(meta: TableMeta, snapshot_id: int | None = None) -> list[dict]:
    """Canonical FILE records (FORMAT.md) of every live data and delete file of the snapshot."""
    doc = read_metadata(meta.path)
    snapshot_id = doc.get("current-snapshot-id") if snapshot_id is None else snapshot_id
    snap = next((s for s in doc.get("snapshots", []) if s["snapshot-id"] == snapshot_id), None)
    if snap is None:
        return []
    out = []
    for mf in _read_avro(snap["manifest-list"]):
        spec_id = mf.get("partition_spec_id", 0)
        types = meta.partition_types.get(spec_id, [])
        next_row_id = mf.get("first_row_id")
        for entry in _read_avro(mf["manifest_path"]):
            f = entry["data_file"]
            if entry["status"] == DELETED:
                continue
            content = f.get("content", 0)
            first_row_id = f.get("first_row_id")
            if content == 0 and first_row_id is None and next_row_id is not None:
                first_row_id = next_row_id
                next_row_id += f["record_count"]
            # the partition record's fields are the spec's, in order (Avro may sanitise names)
            part = list((f.get("partition") or {}).values())
            record = {
                "path": f["file_path"], "content": content, "file_format": f["file_format"],
                "spec_id": spec_id,
                "partition": {t["name"]: _partition_value(v, t["type"]) for t, v in zip(types, part)},
                "record_count": f["record_count"], "file_size_in_bytes": f["file_size_in_bytes"],
                "column_sizes": _map(f.get("column_sizes")), "value_counts": _map(f.get("value_counts")),
                "null_value_counts": _map(f.get("null_value_counts")),
                "nan_value_counts": _map(f.get("nan_value_counts")),
                "lower_bounds": _map(f.get("lower_bounds")), "upper_bounds": _map(f.get("upper_bounds")),
                "sort_order_id": f.get("sort_order_id"), "split_offsets": f.get("split_offsets"),
                "equality_ids": f.get("equality_ids"),
            }
            if meta.format_version >= 3 and content == 0:
                record["first_row_id"] = first_row_id
            out.append(canon_file(record, meta))
    return out
