"""Canonical data-file entries and snapshots (see FORMAT.md), from what a reader exposes."""

import struct
import uuid
from typing import Any

from canon import canon, dumps, unscaled
from table_meta import TableMeta

INT_MAPS = ("column_sizes", "value_counts", "null_value_counts", "nan_value_counts")
BOUND_MAPS = ("lower_bounds", "upper_bounds")
LISTS = ("split_offsets", "equality_ids")  # None when absent or empty
SCALARS = ("content", "file_format", "spec_id", "record_count", "file_size_in_bytes", "sort_order_id",
           "first_row_id")


def decode_bound(b: bytes, t: Any) -> Any:
    """Iceberg's single-value binary serialization -> a Python value `canon` understands."""
    b = bytes(b)
    if t == "boolean":
        return b[0] != 0
    # a promoted column (int -> long, float -> double) may keep 4-byte bounds from older files
    if t in ("int", "date", "long", "time") or t.startswith("timestamp"):
        return struct.unpack("<i" if len(b) == 4 else "<q", b)[0]
    if t in ("float", "double"):
        return struct.unpack("<f" if len(b) == 4 else "<d", b)[0]
    if t == "string":
        return b.decode("utf-8", errors="replace")
    if t == "uuid":
        return uuid.UUID(bytes=b)
    if t.startswith("decimal"):
        scale = int(t.split(",")[1].rstrip(")"))
        return unscaled(int.from_bytes(b, "big", signed=True), scale)
    return b  # binary, fixed


def canon_file(raw: dict, meta: TableMeta) -> dict:
    """raw: any subset of the FORMAT.md file keys; bounds may be bytes (serialized) or values."""
    out: dict[str, Any] = {"path": meta.relative(raw["path"])}
    for k in SCALARS:
        if k in raw:
            out[k] = raw[k] if k != "file_format" or raw[k] is None else str(raw[k]).upper()
    if "partition" in raw:
        types = meta.partition_types.get(raw.get("spec_id", 0), [])
        part = raw["partition"] or {}
        if not isinstance(part, dict):
            part = {f["name"]: v for f, v in zip(types, part)}
        out["partition"] = {f["name"]: canon(part.get(f["name"]), f["type"]) for f in types}
    for k in INT_MAPS:
        if k in raw:
            out[k] = {str(fid): int(n) for fid, n in (raw[k] or {}).items()}
    for k in BOUND_MAPS:
        if k in raw:
            vals = {}
            for fid, v in (raw[k] or {}).items():
                t = meta.types_by_id.get(int(fid))
                if t is None or isinstance(t, dict):
                    vals[str(fid)] = v.hex() if isinstance(v, (bytes, bytearray)) else v
                    continue
                if isinstance(v, (bytes, bytearray, memoryview)):
                    v = decode_bound(v, t)
                vals[str(fid)] = canon(v, t)
            out[k] = vals
    for k in LISTS:
        if k in raw:
            out[k] = [int(x) for x in raw[k]] if raw[k] else None
    return out


def canon_snapshot(s: dict) -> dict:
    """s: snapshot_id, parent_id, sequence_number, timestamp_ms, operation, summary (any subset)."""
    out = {k: s[k] for k in ("snapshot_id", "parent_id", "timestamp_ms", "operation") if k in s}
    if "sequence_number" in s:
        out["sequence_number"] = s["sequence_number"] or 0  # v1 has none: 0, as Java reports it
    if "summary" in s:
        summary = {str(k): str(v) for k, v in (s["summary"] or {}).items() if k != "operation"}
        out["summary"] = dict(sorted(summary.items()))
    return out


def sort_files(files: list[dict]) -> list[dict]:
    return sorted(files, key=lambda f: (f["path"], dumps(f)))


def sort_snapshots(snaps: list[dict]) -> list[dict]:
    return sorted(snaps, key=lambda s: (s.get("sequence_number", 0), s.get("timestamp_ms", 0), s["snapshot_id"]))
