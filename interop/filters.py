"""The small filter-expression format of the spec (FORMAT.md) and a walker over it.

    {"op": "<", "col": "id", "value": 10}      ops: = != < <= > >=
    {"op": "in", "col": "id", "values": [1, 2]}  also not_in
    {"op": "is_null", "col": "c"}                also not_null, is_nan, not_nan
    {"op": "starts_with", "col": "s", "value": "ab"}
    {"op": "and", "args": [...]}                 also or; {"op": "not", "arg": {...}}

Literals are JSON in the canonical form of the column's type (FORMAT.md); timestamps may also be
integer micros. `walk` hands each reader's builder native Python literals (canon.native).
"""

from typing import Any, Protocol

from canon import canon, native, order_key
from table_meta import TableMeta

COMPARISONS = ("=", "!=", "<", "<=", ">", ">=")
UNARY = ("is_null", "not_null", "is_nan", "not_nan")


class Builder(Protocol):
    def compare(self, op: str, col: str, value: Any, typ: Any) -> Any: ...
    def unary(self, op: str, col: str, typ: Any) -> Any: ...
    def in_(self, col: str, values: list, negate: bool, typ: Any) -> Any: ...
    def starts_with(self, col: str, prefix: str) -> Any: ...
    def and_(self, parts: list) -> Any: ...
    def or_(self, parts: list) -> Any: ...
    def not_(self, part: Any) -> Any: ...


class SqlLogic:
    """The boolean connectives of a SQL builder (every SQL dialect spells them alike)."""

    def and_(self, parts: list) -> str:
        return "(" + " AND ".join(parts) + ")"

    def or_(self, parts: list) -> str:
        return "(" + " OR ".join(parts) + ")"

    def not_(self, part: str) -> str:
        return f"(NOT {part})"


def walk(e: dict, meta: TableMeta, b: Builder) -> Any:
    op = e["op"]
    if op in ("and", "or"):
        parts = [walk(a, meta, b) for a in e["args"]]
        return b.and_(parts) if op == "and" else b.or_(parts)
    if op == "not":
        return b.not_(walk(e["arg"], meta, b))
    typ = meta.column_type(e["col"])
    if op in COMPARISONS:
        return b.compare(op, e["col"], native(e["value"], typ), typ)
    if op in UNARY:
        return b.unary(op, e["col"], typ)
    if op in ("in", "not_in"):
        return b.in_(e["col"], [native(v, typ) for v in e["values"]], op == "not_in", typ)
    if op == "starts_with":
        return b.starts_with(e["col"], e["value"])
    raise ValueError(f"unknown filter op {op!r}")


def _value(row: dict, col: str) -> Any:
    v = row
    for part in col.split("."):
        v = None if v is None else v.get(part)
    return v


def _is_nan(v: Any, typ: Any) -> bool:
    return typ in ("float", "double") and v == "NaN"


def evaluate(e: dict, row: dict, meta: TableMeta) -> bool:
    """The filter on one canonical row, with Iceberg's row semantics (Java's Evaluator): a
    comparison with null or NaN is false, `!=` and `not_in` keep nulls. The expected side of
    filtered scans for tables whose rows we know (FORMAT.md)."""
    op = e["op"]
    if op in ("and", "or"):
        results = (evaluate(a, row, meta) for a in e["args"])
        return all(results) if op == "and" else any(results)
    if op == "not":
        return not evaluate(e["arg"], row, meta)
    typ = meta.column_type(e["col"])
    v = _value(row, e["col"])
    if op in UNARY:
        nan = v is not None and _is_nan(v, typ)
        return {"is_null": v is None, "not_null": v is not None, "is_nan": nan, "not_nan": not nan}[op]
    if op == "starts_with":
        return v is not None and v.startswith(e["value"])
    if op in ("in", "not_in"):
        keys = {order_key(canon(x, typ), typ) for x in e["values"]}
        hit = v is not None and not _is_nan(v, typ) and order_key(v, typ) in keys
        return hit if op == "in" else not hit
    if v is None or _is_nan(v, typ):
        return op == "!="
    a, b = order_key(v, typ), order_key(canon(e["value"], typ), typ)
    return {"=": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
