"""Polars: pl.scan_iceberg(metadata path) (planning by polars-iceberg when installed). Report-only."""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

import polars as pl

from canon import arrow_rows, canon_row, sort_rows
from filters import walk
from readers import attempt
from table_meta import TableMeta

NAME = "polars"


def version() -> str:
    try:
        plugin = f", polars-iceberg {_version('polars-iceberg')}"
    except PackageNotFoundError:
        plugin = ", no polars-iceberg (PyIceberg planning)"
    return f"polars {pl.__version__}{plugin}"


class PolarsBuilder:
    @staticmethod
    def col(c: str) -> pl.Expr:
        head, *rest = c.split(".")
        e = pl.col(head)
        for part in rest:
            e = e.struct.field(part)
        return e

    @staticmethod
    def lit(value, typ):
        return value.bytes if typ == "uuid" else value  # Polars reads uuid as 16-byte Binary

    def compare(self, op, col, value, typ):
        c, v = self.col(col), pl.lit(self.lit(value, typ))
        return {"=": c == v, "!=": c != v, "<": c < v, "<=": c <= v, ">": c > v, ">=": c >= v}[op]

    def unary(self, op, col, typ):
        c = self.col(col)
        return {"is_null": c.is_null(), "not_null": c.is_not_null(), "is_nan": c.is_nan(),
                "not_nan": c.is_not_nan()}[op]

    def in_(self, col, values, negate, typ):
        e = self.col(col).is_in([self.lit(v, typ) for v in values])
        return ~e if negate else e

    def starts_with(self, col, prefix):
        return self.col(col).str.starts_with(prefix)

    def and_(self, parts):
        return pl.all_horizontal(parts)

    def or_(self, parts):
        return pl.any_horizontal(parts)

    def not_(self, part):
        return ~part


def _rows(meta: TableMeta, expr=None) -> list[dict]:
    lf = pl.scan_iceberg(meta.path)
    if expr is not None:
        lf = lf.filter(walk(expr, meta, PolarsBuilder()))
    return sort_rows([canon_row(r, meta.fields) for r in arrow_rows(lf.collect().to_arrow())])


def read(spec: dict, meta: TableMeta) -> dict:
    return {
        "scan": attempt(lambda: _rows(meta)),
        "filters": {name: attempt(lambda e=e: _rows(meta, e)) for name, e in spec.get("filters", {}).items()},
    }
