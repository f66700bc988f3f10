"""iceberg-rust 0.10.1 through its Python binding (PyPI pyiceberg-core, which PyIceberg 0.12 pulls).

Scans: pyiceberg_core.datafusion.IcebergDataFusionTable is iceberg-rust's DataFusion table
provider (metadata, manifests and Parquet all read by iceberg-rust), registered in a
`datafusion.SessionContext` (datafusion must be the major pyiceberg-core was built with: 53).
The provider declines filter pushdown, so DataFusion applies the filters after iceberg-rust's
full scan: filtered results check DataFusion over iceberg-rust, not iceberg-rust's pruning.

Stats: pyiceberg_core.manifest.read_manifest_list / read_manifest_entries are iceberg-rust's Avro
readers (bytes in). They return the entries as written, without inheritance, so entry status,
sequence numbers and v3 first_row_id are not exposed; the manifest list's location comes from
the metadata.json (table_meta), as it does for every reader's canonicaliser.
History: the binding has no metadata API, so n.a.
"""

import json
import os
from importlib.metadata import version as _version
from pathlib import Path

import pyarrow as pa

# A panic in the binding is reported as that feature's error; its backtrace only clutters the log.
os.environ["RUST_BACKTRACE"] = "0"

from datafusion import SessionContext  # noqa: E402
from pyiceberg_core import manifest as iceberg_manifest  # noqa: E402
from pyiceberg_core.datafusion import IcebergDataFusionTable  # noqa: E402

from canon import arrow_rows, canon, canon_row, sort_rows, unscaled  # noqa: E402
from filters import SqlLogic, walk  # noqa: E402
from readers import attempt  # noqa: E402
from stats import canon_file, sort_files  # noqa: E402
from table_meta import TableMeta, read_metadata, strip_scheme  # noqa: E402

NAME = "iceberg_rust"
DELETED = 2  # manifest entry status


def version() -> str:
    return f"iceberg-rust {_version('pyiceberg-core')} (pyiceberg-core), datafusion {_version('datafusion')}"


def _q(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


class DataFusionBuilder(SqlLogic):
    """Filter -> DataFusion SQL. Typed literals go through arrow_cast to the column's Arrow type,
    because DataFusion does not coerce e.g. Time64(ns) (a TIME literal) to Time64(us)."""

    CMP = {"=": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}

    @staticmethod
    def col(c: str) -> str:
        head, *rest = c.split(".")
        return f'"{head}"' + "".join(f"[{_q(p)}]" for p in rest)

    @staticmethod
    def lit(v, typ) -> str:
        if v is None:
            return "NULL"
        if typ in ("int", "long"):
            return str(int(v))
        if typ in ("float", "double"):
            return f"arrow_cast({_q(repr(float(v)))}, {_q('Float32' if typ == 'float' else 'Float64')})"
        if typ == "boolean":
            return "true" if v else "false"
        if str(typ).startswith("decimal"):
            return f"CAST({_q(canon(v, typ))} AS {typ.upper()})"
        if typ == "date":
            return f"DATE {_q(canon(v, typ))}"
        if typ == "time":
            return f"arrow_cast({_q(canon(v, typ))}, 'Time64(Microsecond)')"
        if str(typ).startswith("timestamp"):
            unit = "Nanosecond" if typ.endswith("_ns") else "Microsecond"
            tz = 'Some("+00:00")' if typ.startswith("timestamptz") else "None"
            return f"arrow_cast({_q(canon(v, typ))}, {_q(f'Timestamp({unit}, {tz})')})"
        if typ == "uuid" or typ == "binary" or str(typ).startswith("fixed"):
            raw = v.bytes if typ == "uuid" else bytes(v)
            return f"X'{raw.hex()}'"
        return _q(str(v))

    def compare(self, op, col, value, typ):
        return f"({self.col(col)} {self.CMP[op]} {self.lit(value, typ)})"

    def unary(self, op, col, typ):
        c = self.col(col)
        return {"is_null": f"({c} IS NULL)", "not_null": f"({c} IS NOT NULL)",
                "is_nan": f"isnan({c})", "not_nan": f"(NOT isnan({c}))"}[op]

    def in_(self, col, values, negate, typ):
        vals = ", ".join(self.lit(v, typ) for v in values)
        return f"({self.col(col)} {'NOT IN' if negate else 'IN'} ({vals}))"

    def starts_with(self, col, prefix):
        return f"starts_with({self.col(col)}, {_q(prefix)})"


def _no_panic(fn):
    """fn's value; a Rust panic (pyo3's PanicException is a BaseException, which `attempt`
    lets through and which would end the whole reader) becomes a RuntimeError."""
    try:
        return fn()
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception:
        raise
    except BaseException as e:  # noqa: BLE001 - pyo3_runtime.PanicException
        raise RuntimeError(f"iceberg-rust panicked: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None


def _context(meta: TableMeta) -> SessionContext:
    ctx = SessionContext()
    url = "file://" + strip_scheme(meta.path)
    ctx.register_table("t", IcebergDataFusionTable(identifier=["default", "t"], metadata_location=url,
                                                   file_io_properties={}))
    return ctx


def _rows(ctx: SessionContext, meta: TableMeta, expr=None) -> list[dict]:
    cols = ", ".join(f'"{f["name"]}"' for f in meta.fields)
    sql = f"SELECT {cols} FROM t"
    if expr is not None:
        sql += " WHERE " + walk(expr, meta, DataFusionBuilder())
    # Batch by batch: iceberg-rust passes on each file's own Arrow field metadata, so a uuid column
    # is arrow.uuid in files whose ARROW:schema says so (ours) and plain fixed[16] in others
    # (PyIceberg's), and pyarrow refuses to put such batches in one table. The values agree.
    rows = [r for batch in ctx.sql(sql).collect() for r in arrow_rows(pa.Table.from_batches([batch]))]
    return sort_rows([canon_row(r, meta.fields) for r in rows])


def _partition_value(v, typ):
    """iceberg-rust hands partition values in their internal form: decimals unscaled."""
    if v is not None and str(typ).startswith("decimal"):
        return unscaled(int(v), int(typ.split(",")[1].rstrip(")")))
    return v


def _files(meta: TableMeta) -> list[dict]:
    doc = read_metadata(meta.path)
    current = doc.get("current-snapshot-id")
    snap = next((s for s in doc.get("snapshots", []) if s["snapshot-id"] == current), None)
    if snap is None:
        return []
    out = []
    manifests = iceberg_manifest.read_manifest_list(Path(strip_scheme(snap["manifest-list"])).read_bytes())
    for mf in manifests.entries():
        spec_id = mf.partition_spec_id
        types = meta.partition_types.get(spec_id, [])
        for entry in iceberg_manifest.read_manifest_entries(Path(strip_scheme(mf.manifest_path)).read_bytes()).entries():
            if entry.status == DELETED:
                continue
            f = entry.data_file
            part = [None if x is None else x.value() for x in f.partition]
            out.append(canon_file({
                "content": int(f.content), "path": f.file_path, "file_format": f.file_format,
                "spec_id": spec_id,
                "partition": [_partition_value(v, t["type"]) for v, t in zip(part, types)],
                "record_count": f.record_count, "file_size_in_bytes": f.file_size_in_bytes,
                "column_sizes": f.column_sizes, "value_counts": f.value_counts,
                "null_value_counts": f.null_value_counts, "nan_value_counts": f.nan_value_counts,
                "lower_bounds": f.lower_bounds, "upper_bounds": f.upper_bounds,
                "sort_order_id": f.sort_order_id, "split_offsets": f.split_offsets,
                "equality_ids": f.equality_ids,
            }, meta))
    return sort_files(out)


def read(spec: dict, meta: TableMeta) -> dict:
    ctx = _context(meta)
    return {
        "scan": attempt(lambda: _no_panic(lambda: _rows(ctx, meta))),
        "filters": {name: attempt(lambda e=e: _no_panic(lambda: _rows(ctx, meta, e)))
                    for name, e in spec.get("filters", {}).items()},
        "files": attempt(lambda: _no_panic(lambda: _files(meta))),
    }
