"""A table DataFusion writes through iceberg-datafusion-writer: its states and their rows.

`iceberg-ballista sql` (DataFusion in its own process, no cluster) creates `db.sql_events` in
a SQLite catalog (`CREATE EXTERNAL TABLE ... STORED AS ICEBERG` with `day(ts)` in its
`partitioning` option; our CLI makes the namespace), then runs `INSERT INTO ... SELECT` from
two Parquet files, twice: DataFusion splits the input into partitions, hash-partitions the
rows by the table's partition key and writes them on every partition, and one commit node
lands each insert as one snapshot. Every reader must read exactly the rows of the files, with
every type's edge values (nulls, NaN, -0.0, infinities, decimals, a leap day, a null
partition), and the second snapshot must say what an append onto the first says
(foreign_appends.py builds the expected results).
"""

import datetime as dt
import json
import subprocess
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import table_meta

UTC = dt.timezone.utc
GROUP = "A table DataFusion wrote (INSERT INTO ... SELECT through iceberg-datafusion-writer)"
SCHEMA = pa.schema([("id", pa.int64()), ("ts", pa.timestamp("us", tz="UTC")), ("name", pa.string()),
                    ("d", pa.float64()), ("amount", pa.decimal128(10, 2)), ("flag", pa.bool_()),
                    ("on_day", pa.date32())])
CREATE = ("CREATE EXTERNAL TABLE {table} (id BIGINT NOT NULL, ts TIMESTAMP WITH TIME ZONE, name VARCHAR, "
          "d DOUBLE, amount DECIMAL(10, 2), flag BOOLEAN, on_day DATE) STORED AS ICEBERG LOCATION '' "
          "OPTIONS ('partitioning' 'day(ts)')")
FILTERS = {"ts_lt_mar1": {"op": "<", "col": "ts", "value": "2024-03-01T00:00:00+00:00"},
           "ts_is_null": {"op": "is_null", "col": "ts"},
           "id_in": {"op": "in", "col": "id", "values": [0, 7, 1999, 10003]},
           "name_is_null": {"op": "is_null", "col": "name"},
           "d_is_nan": {"op": "is_nan", "col": "d"},
           "amount_ge": {"op": ">=", "col": "amount", "value": "100.00"}}


def _rows(first: int, count: int) -> list[dict]:
    """`count` rows from id `first`: timestamps over nine days from 2024-02-27 (a leap day
    among them), and every optional column's edge values."""
    start = dt.datetime(2024, 2, 27, 23, 0, tzinfo=UTC)
    specials = [float("nan"), -0.0, 0.0, float("inf"), float("-inf"), None]
    rows = []
    for i in range(first, first + count):
        rows.append({
            "id": i,
            "ts": None if i % 97 == 5 else start + dt.timedelta(minutes=(i * 331) % (9 * 24 * 60)),
            "name": None if i % 7 == 3 else ("café ☕ " if i % 11 == 0 else "name ") + str(i),
            "d": specials[i % 6] if i % 5 == 0 else i / 8,
            "amount": None if i % 13 == 0 else Decimal(i % 40000 - 20000).scaleb(-2),
            "flag": None if i % 17 == 0 else i % 2 == 0,
            "on_day": None if i % 19 == 0 else dt.date(2024, 2, 28) + dt.timedelta(days=i % 5),
        })
    return rows


def _write(rows: list[dict], folder: Path, files: int) -> None:
    folder.mkdir(parents=True)
    step = -(-len(rows) // files)
    for n in range(files):
        part = pa.Table.from_pylist(rows[n * step:(n + 1) * step], schema=SCHEMA)
        pq.write_table(part, folder / f"part-{n}.parquet", row_group_size=700)


def _run(args: list[str]) -> str:
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:1] + args[-2:])}: {proc.stderr.strip()[-1500:]}")
    return proc.stdout


def sql_written(out: Path, cli: Path, sql: Path) -> tuple[list[tuple[str, str, list[dict]]], list[str]]:
    """`(state, metadata.json, rows it holds)` after each of DataFusion's two inserts into
    `db.sql_events`, and what failed."""
    folder = (out / "datafusion").resolve()
    inputs = [_rows(0, 3000), _rows(10000, 400)]
    for n, rows in enumerate(inputs):
        _write(rows, folder / f"raw{n}", 2)
    warehouse = folder / "wh"
    ident = "db.sql_events"
    states, rows = [], []
    try:
        _run([str(cli), "--warehouse", str(warehouse), "namespace", "create", "db"])
        catalog = ["--catalog-uri", f"sqlite:///{warehouse}/catalog.db", "--warehouse", f"file://{warehouse}"]
        _run([str(sql), *catalog, "sql", CREATE.format(table=f"default.{ident}")])
        for n, batch in enumerate(inputs):
            _run([str(sql), *catalog, "sql",
                  f"CREATE EXTERNAL TABLE raw STORED AS PARQUET LOCATION '{folder / f'raw{n}'}/'",
                  f"INSERT INTO default.{ident} SELECT * FROM raw"])
            listed = json.loads(_run([str(cli), "--warehouse", str(warehouse), "--json", "inspect", ident]))
            rows = rows + batch
            states.append(("sql_events" + "+insert" * (n + 1),
                           table_meta.strip_scheme(listed["metadata_location"]), rows))
    except RuntimeError as e:
        return states, [str(e)]
    return states, []
