"""PyIceberg: StaticTable.from_metadata, scans to Arrow, manifests for file stats."""

from importlib.metadata import version as _version
from typing import Any

from pyiceberg import expressions as E
from pyiceberg.table import StaticTable

from canon import arrow_rows, canon_row, sort_rows
from filters import walk
from readers import attempt
from stats import canon_file, canon_snapshot, sort_files, sort_snapshots
from table_meta import TableMeta

NAME = "pyiceberg"


def version() -> str:
    return f"pyiceberg {_version('pyiceberg')}, pyarrow {_version('pyarrow')}"


class _Builder:
    CMP = {"=": E.EqualTo, "!=": E.NotEqualTo, "<": E.LessThan, "<=": E.LessThanOrEqual,
           ">": E.GreaterThan, ">=": E.GreaterThanOrEqual}
    UNARY = {"is_null": E.IsNull, "not_null": E.NotNull, "is_nan": E.IsNaN, "not_nan": E.NotNaN}

    def compare(self, op, col, value, typ):
        return self.CMP[op](col, _literal(value, typ))

    def unary(self, op, col, typ):
        return self.UNARY[op](col)

    def in_(self, col, values, negate, typ):
        vals = {_literal(v, typ) for v in values}
        return E.NotIn(col, vals) if negate else E.In(col, vals)

    def starts_with(self, col, prefix):
        return E.StartsWith(col, prefix)

    def and_(self, parts):
        return E.And(*parts) if len(parts) > 1 else parts[0]

    def or_(self, parts):
        return E.Or(*parts) if len(parts) > 1 else parts[0]

    def not_(self, part):
        return E.Not(part)


def _literal(v: Any, typ: Any) -> Any:
    """PyIceberg literals: timestamps/dates/times as ISO strings, UUIDs as strings."""
    if typ in ("date", "time") or str(typ).startswith("timestamp") or typ == "uuid":
        return v.isoformat() if hasattr(v, "isoformat") else str(v)
    return v


def _rows(table, meta: TableMeta, row_filter=None) -> list[dict]:
    scan = table.scan(row_filter=row_filter) if row_filter is not None else table.scan()
    return sort_rows([canon_row(r, meta.fields) for r in arrow_rows(scan.to_arrow())])


def _files(table, meta: TableMeta) -> list[dict]:
    snap = table.current_snapshot()
    out = []
    for manifest in snap.manifests(table.io) if snap else []:
        for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True):
            f = entry.data_file
            out.append(canon_file({
                "content": int(f.content), "path": f.file_path, "file_format": f.file_format.name,
                "spec_id": f.spec_id if f.spec_id is not None else manifest.partition_spec_id,
                "partition": list(f.partition), "record_count": f.record_count,
                "file_size_in_bytes": f.file_size_in_bytes, "column_sizes": f.column_sizes,
                "value_counts": f.value_counts, "null_value_counts": f.null_value_counts,
                "nan_value_counts": f.nan_value_counts, "lower_bounds": f.lower_bounds,
                "upper_bounds": f.upper_bounds, "sort_order_id": f.sort_order_id, "split_offsets": f.split_offsets,
                "equality_ids": f.equality_ids,
            }, meta))
    return sort_files(out)


def _snapshots(table) -> list[dict]:
    out = []
    for s in table.metadata.snapshots:
        summary = s.summary.model_dump() if s.summary else {}
        op = summary.pop("operation", None)
        out.append(canon_snapshot({
            "snapshot_id": s.snapshot_id, "parent_id": s.parent_snapshot_id,
            "sequence_number": s.sequence_number, "timestamp_ms": s.timestamp_ms,
            "operation": getattr(op, "value", op), "summary": summary}))
    return sort_snapshots(out)


def read(spec: dict, meta: TableMeta) -> dict:
    table = StaticTable.from_metadata(meta.path)
    filters = {}
    for name, expr in spec.get("filters", {}).items():
        filters[name] = attempt(lambda e=expr: _rows(table, meta, walk(e, meta, _Builder())))
    return {
        "scan": attempt(lambda: _rows(table, meta)),
        "filters": filters,
        "snapshots": attempt(lambda: _snapshots(table)),
        "files": attempt(lambda: _files(table, meta)),
    }
