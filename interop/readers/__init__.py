"""External Iceberg readers. Each module has NAME, version() and read(table, meta) -> result dict
(or read_all(tables, metas) when it is cheaper to read every table in one go, as for Java)."""

import traceback
from typing import Any, Callable

READERS = ("java", "pyiceberg", "iceberg_rust", "duckdb", "chdb", "polars", "data_files")


def attempt(fn: Callable[[], Any]) -> Any:
    """fn's value, or {"error": message} when it raises: one feature's failure is a result."""
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - any reader failure is reported, not raised
        last = traceback.extract_tb(e.__traceback__)[-1]
        return {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''} "
                         f"({last.filename.rsplit('/', 1)[-1]}:{last.lineno})"[:500]}
