"""chDB (embedded ClickHouse): icebergLocal('<table dir>'). Report-only.

icebergLocal takes the table folder, not a metadata file: it reads the folder's newest metadata,
which is the spec's file only when that one is the latest. Paths must lie under ClickHouse's
user_files_path (the working directory), so queries run from "/" with a relative path.
"""

import os
from importlib.metadata import version as _version

import chdb

from canon import arrow_rows, canon, canon_row, sort_rows
from filters import SqlLogic, walk
from readers import attempt
from table_meta import TableMeta, strip_scheme

NAME = "chdb"


def version() -> str:
    return f"chdb {_version('chdb')} (ClickHouse {chdb.engine_version})" if hasattr(chdb, "engine_version") \
        else f"chdb {_version('chdb')}"


def _q(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


class ClickHouseBuilder(SqlLogic):
    CMP = {"=": "=", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}

    @staticmethod
    def col(c: str) -> str:
        return ".".join(f"`{p}`" for p in c.split("."))

    def lit(self, v, typ) -> str:
        if v is None:
            return "NULL"
        if typ in ("int", "long"):
            return str(int(v))
        if typ in ("float", "double"):
            return repr(float(v))  # nan, inf, -inf are ClickHouse literals too
        if typ == "boolean":
            return "true" if v else "false"
        if str(typ).startswith("decimal"):
            return f"toDecimal128({_q(canon(v, typ))}, {typ.split(',')[1].rstrip(')').strip()})"
        if typ == "date":
            return f"toDate32({_q(canon(v, typ))})"
        if str(typ).startswith("timestamp"):
            text = canon(v, typ).replace("T", " ").replace("+00:00", "")
            digits = 9 if typ.endswith("_ns") else 6
            return f"toDateTime64({_q(text)}, {digits}{', ' + _q('UTC') if 'tz' in typ else ''})"
        if typ == "uuid":
            return f"toUUID({_q(str(v))})"
        if typ == "binary" or str(typ).startswith("fixed"):
            return f"unhex({_q(bytes(v).hex())})"
        return _q(str(v))

    def compare(self, op, col, value, typ):
        return f"({self.col(col)} {self.CMP[op]} {self.lit(value, typ)})"

    def unary(self, op, col, typ):
        c = self.col(col)
        return {"is_null": f"({c} IS NULL)", "not_null": f"({c} IS NOT NULL)",
                "is_nan": f"isNaN({c})", "not_nan": f"(NOT isNaN({c}))"}[op]

    def in_(self, col, values, negate, typ):
        return f"({self.col(col)} {'NOT IN' if negate else 'IN'} ({', '.join(self.lit(v, typ) for v in values)}))"

    def starts_with(self, col, prefix):
        return f"startsWith({self.col(col)}, {_q(prefix)})"


def _rows(meta: TableMeta, expr=None) -> list[dict]:
    table_dir = strip_scheme(meta.location).lstrip("/")
    # binary/fixed come back as (non-UTF-8) String: select them as hex
    cols = [f"hex(`{f['name']}`) AS `{f['name']}`" if f["type"] == "binary" or str(f["type"]).startswith("fixed")
            else f"`{f['name']}`" for f in meta.fields]
    sql = f"SELECT {', '.join(cols)} FROM icebergLocal({_q(table_dir)})"
    if expr is not None:
        sql += " WHERE " + walk(expr, meta, ClickHouseBuilder())
    cwd = os.getcwd()
    os.chdir("/")
    try:
        table = chdb.query(sql, "ArrowTable")
    finally:
        os.chdir(cwd)
    return sort_rows([canon_row(r, meta.fields) for r in arrow_rows(table)])


def read(spec: dict, meta: TableMeta) -> dict:
    return {
        "scan": attempt(lambda: _rows(meta)),
        "filters": {name: attempt(lambda e=e: _rows(meta, e)) for name, e in spec.get("filters", {}).items()},
    }
