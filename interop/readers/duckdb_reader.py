"""DuckDB with the iceberg and avro extensions shipped as PyPI wheels (loaded from their files)."""

import re
import struct
from importlib.metadata import version as _version
from pathlib import Path

import duckdb

from canon import arrow_rows, canon, canon_row, sort_rows
from filters import SqlLogic, walk
from readers import attempt
from stats import canon_file, canon_snapshot, sort_files, sort_snapshots
from table_meta import TableMeta

NAME = "duckdb"
_conn = None


def version() -> str:
    return f"duckdb {duckdb.__version__}, duckdb-extension-iceberg {_version('duckdb-extension-iceberg')}"


def connect() -> duckdb.DuckDBPyConnection:
    """One connection with the extensions LOADed from the wheels' .duckdb_extension files."""
    global _conn
    if _conn is None:
        import duckdb_extension_avro
        import duckdb_extension_iceberg

        _conn = duckdb.connect()  # the wheels' extensions are signed: no allow_unsigned_extensions
        for mod in (duckdb_extension_avro, duckdb_extension_iceberg):
            ext = next(Path(mod.__file__).parent.glob("extensions/*/*.duckdb_extension"))
            _conn.execute(f"LOAD '{ext}'")
        _conn.execute("SET TimeZone = 'UTC'")
    return _conn


class SqlBuilder(SqlLogic):
    """Filter -> (SQL text, parameters); literals travel as typed Python parameters."""

    CMP = {"=": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}

    def __init__(self, quote=lambda c: ".".join(f'"{p}"' for p in c.split("."))):
        self.params: list = []
        self.quote = quote

    def _p(self, v) -> str:
        self.params.append(v)
        return "?"

    def compare(self, op, col, value, typ):
        return f"({self.quote(col)} {self.CMP[op]} {self._p(value)})"

    def unary(self, op, col, typ):
        c = self.quote(col)
        return {"is_null": f"({c} IS NULL)", "not_null": f"({c} IS NOT NULL)",
                "is_nan": f"isnan({c})", "not_nan": f"(NOT isnan({c}))"}[op]

    def in_(self, col, values, negate, typ):
        return f"({self.quote(col)} {'NOT IN' if negate else 'IN'} ({', '.join(self._p(v) for v in values)}))"

    def starts_with(self, col, prefix):
        return f"starts_with({self.quote(col)}, {self._p(prefix)})"


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _rows(meta: TableMeta, expr=None) -> list[dict]:
    sql, params = f"SELECT * FROM iceberg_scan({_sql_str(meta.path)})", []
    if expr is not None:
        b = SqlBuilder()
        sql += " WHERE " + walk(expr, meta, b)
        params = b.params
    res = connect().execute(sql, params)
    table = res.fetch_arrow_table() if hasattr(res, "fetch_arrow_table") else res.arrow().read_all()
    return sort_rows([canon_row(r, meta.fields) for r in arrow_rows(table)])


def _snapshots(meta: TableMeta) -> list[dict]:
    rows = connect().execute(
        f"SELECT snapshot_id, sequence_number, epoch_ms(timestamp_ms), operation "
        f"FROM iceberg_snapshots({_sql_str(meta.path)})").fetchall()
    return sort_snapshots([canon_snapshot({"snapshot_id": s, "sequence_number": n, "timestamp_ms": ts,
                                           "operation": op}) for s, n, ts, op in rows])


def _leaf_ids(meta: TableMeta) -> dict[str, int]:
    """DuckDB names stats by leaf name only; map the unambiguous leaf names to field ids."""
    ids: dict[str, list[int]] = {}

    def visit(fields):
        for f in fields:
            ids.setdefault(f["name"], []).append(f["id"])
            t = f["type"]
            if isinstance(t, dict):
                if t["type"] == "struct":
                    visit(t["fields"])
                elif t["type"] == "list":
                    visit([{"name": "element", "id": t["element-id"], "type": t["element"]}])
                elif t["type"] == "map":
                    visit([{"name": "key", "id": t["key-id"], "type": t["key"]},
                           {"name": "value", "id": t["value-id"], "type": t["value"]}])

    visit(meta.fields)
    return {name: v[0] for name, v in ids.items() if len(v) == 1}


def _bound(text: str | None, t) -> object:
    """DuckDB's text for a bound -> a value canon() takes."""
    if t == "float":
        return struct.unpack("<f", struct.pack("<f", float(text)))[0]
    if t == "binary" or str(t).startswith("fixed"):
        return re.sub(rb"\\x([0-9A-Fa-f]{2})", lambda m: bytes([int(m.group(1), 16)]), text.encode("latin-1"))
    if t == "boolean":
        return text == "true"
    return text


def _files(meta: TableMeta) -> list[dict]:
    conn, path = connect(), _sql_str(meta.path)
    files: dict[str, dict] = {}
    # 1.5.5 labels a data file's content "EXISTING" (the status enum's name for 0): use manifest_content
    for p, fmt, n, mc, c in conn.execute(
            "SELECT file_path, file_format, record_count, manifest_content, content "
            f"FROM iceberg_metadata({path}) WHERE status <> 'DELETED'").fetchall():
        content = 0 if mc == "DATA" else {"POSITION_DELETES": 1, "EQUALITY_DELETES": 2}.get(c, c)
        files[p] = {"path": p, "file_format": fmt, "record_count": n, "content": content,
                    "column_sizes": {}, "value_counts": {},
                    "null_value_counts": {}, "nan_value_counts": {}, "lower_bounds": {}, "upper_bounds": {}}
    ids, with_stats = _leaf_ids(meta), set()
    for p, col, lo, hi, size, vc, nc, nan in conn.execute(
            "SELECT file_path, column_name, lower_bound, upper_bound, column_size, value_count, null_value_count, "
            f"nan_value_count FROM iceberg_column_stats({path}) WHERE status <> 'DELETED'").fetchall():
        f, fid = files.get(p), ids.get(col)
        if f is None or fid is None:
            continue
        if any(v is not None for v in (size, vc, nc, nan)) or {lo, hi} - {None, "NULL"}:
            with_stats.add(p)
        for key, v in (("column_sizes", size), ("value_counts", vc), ("null_value_counts", nc),
                       ("nan_value_counts", nan)):
            if v is not None:
                f[key][fid] = v
        t = meta.types_by_id[fid]
        for key, v in (("lower_bounds", lo), ("upper_bounds", hi)):
            if v is not None and v != "NULL":
                f[key][fid] = canon(_bound(v, t), t)
    for p in files.keys() - with_stats:  # e.g. delete files: DuckDB lists no column stats for them
        for key in ("column_sizes", "value_counts", "null_value_counts", "nan_value_counts", "lower_bounds",
                    "upper_bounds"):
            del files[p][key]
    return sort_files([canon_file(f, meta) for f in files.values()])


def read_all(tables: list[dict], metas: dict, cache) -> dict:
    """read() on every table in a worker process: the extension aborts the process on some
    manifests (readers/isolated.py), which then costs that table only."""
    from readers import isolated

    return isolated.read_all(NAME, tables)


def read(spec: dict, meta: TableMeta) -> dict:
    return {
        "scan": attempt(lambda: _rows(meta)),
        "filters": {name: attempt(lambda e=e: _rows(meta, e)) for name, e in spec.get("filters", {}).items()},
        "snapshots": attempt(lambda: _snapshots(meta)),
        "files": attempt(lambda: _files(meta)),
    }
