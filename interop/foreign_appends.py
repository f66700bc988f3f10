"""Our appends onto tables other engines wrote: the spec and the expected result (FORMAT.md).

    python foreign_appends.py OUT --iceberg BIN [--sql BIN] [--cache CACHE] [--no-java]
                              --spec SPEC.json --expected EXPECTED.json

1. Writes the engines' tables: make_java_tables.py (Iceberg Java through Spark, Hadoop
   catalog: v1, v2 with merge-on-read position deletes, v3) into OUT/java and
   make_pyiceberg_tables.py (PyIceberg, SQLite catalog "default": v1, v2) into OUT/pyiceberg.
   Each also writes the rows as its engine reads them back (engine.json).
2. Appends to every table with our `iceberg` CLI, first --fast then --merge (or the modes of
   the table's `appends` in the engine's spec: fast, merge, merge for the tables of
   java_edge_tables.py), three rows each made from the table's schema (every column, one row
   of nulls, uuids of three sign classes). Java's tables go through `--catalog object-store`
   (the Hadoop layout), PyIceberg's through their SQLite catalog.
   With --sql, DataFusion writes a table through iceberg-datafusion-writer
   (datafusion_tables.py: two `INSERT INTO ... SELECT`s by `iceberg-ballista sql`).
   Also creates two tables of our own from CSV with `append --create` (object-store and SQLite
   catalogs: each one's create-with-first-snapshot) and appends NDJSON to them, so every
   reader checks the text conversion (zones, decimals by --column, `""` beside null).
   And registers Parquet files in place with `add-files`: pyarrow's (no field ids) into a
   table `--create` makes from them and into a Hive-partitioned one (`added_in_place`), and
   Spark's (field ids) into a Java table (an `add-files` step in the table's `appends`).
   After all of ours, `iceberg orphans` must find nothing under any engine's table that the
   table does not refer to (Hadoop's `.crc` checksum files go with their file).
3. Lists a state per table and append for the readers: as the engine left it, after our fast
   append (`+fast`), after our merge append (`+fast+merge`, and `+fast+merge+merge`), each at
   its own metadata.json. Every state gets the engine's filters plus `c = <uuid>` for each
   uuid we append to a uuid column c.

Expected, for each state: the engine's rows plus the rows we appended (so every reader must
still apply the engine's deletes); filtered scans are those rows through filters.evaluate; the
file stats are the manifests decoded with fastavro; the history is the snapshot list of the
metadata.json except that our snapshots' parent, sequence number, operation and summary
totals are what they must be given the engine's last snapshot: parent = the snapshot before,
sequence number + 1 (v2 and up), added counts from the files our manifests add, totals =
the parent's totals plus what was added (delete-file totals carried over).
"""

import argparse
import datetime as dt
import json
import shutil
import subprocess
import sys
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datafusion_tables  # noqa: E402
import filters  # noqa: E402
import manifest_files  # noqa: E402
import table_meta  # noqa: E402
from canon import canon_row, sort_rows  # noqa: E402
from stats import canon_snapshot, sort_files, sort_snapshots  # noqa: E402

HERE = Path(__file__).resolve().parent
UTC = dt.timezone.utc
# Summary totals and how an append changes them (added key, or None: carried over).
TOTALS = {"total-records": "added-records", "total-data-files": "added-data-files",
          "total-files-size": "added-files-size", "total-delete-files": None,
          "total-position-deletes": None, "total-equality-deletes": None}


def arrow_type(t: Any) -> pa.DataType:
    """Iceberg type -> the Arrow type of our input Parquet file."""
    if isinstance(t, dict):
        if t["type"] == "struct":
            return pa.struct([arrow_field(f) for f in t["fields"]])
        if t["type"] == "list":
            return pa.list_(pa.field("element", arrow_type(t["element"]), not t["element-required"]))
        return pa.map_(arrow_type(t["key"]), pa.field("value", arrow_type(t["value"]), not t["value-required"]))
    simple = {"boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(),
              "double": pa.float64(), "date": pa.date32(), "time": pa.time64("us"),
              "timestamp": pa.timestamp("us"), "timestamptz": pa.timestamp("us", tz="UTC"),
              "timestamp_ns": pa.timestamp("ns"), "timestamptz_ns": pa.timestamp("ns", tz="UTC"),
              "string": pa.string(), "uuid": pa.binary(16), "binary": pa.binary()}
    if t in simple:
        return simple[t]
    if t.startswith("decimal"):
        p, s = (int(x) for x in t[len("decimal("):-1].split(","))
        return pa.decimal128(p, s)
    return pa.binary(int(t[len("fixed["):-1]))


def arrow_field(f: dict) -> pa.Field:
    return pa.field(f["name"], arrow_type(f["type"]), not f["required"],
                    metadata={b"PARQUET:field_id": str(f["id"]).encode()})


def value(t: Any, n: int, required: bool) -> Any:
    """A value of type t for row number n (distinct per n); None for the optional columns of
    every third row, so that nulls reach every column and the null partition."""
    if not required and n % 3 == 2:
        return None
    if isinstance(t, dict):
        if t["type"] == "struct":
            return {f["name"]: value(f["type"], n, f["required"]) for f in t["fields"]}
        if t["type"] == "list":
            return [value(t["element"], n + i, t["element-required"]) for i in range(2)]
        return [(value(t["key"], n, True), value(t["value"], n, t["value-required"]))]
    if t in ("int", "long"):
        return n
    if t == "boolean":
        return n % 2 == 0
    if t in ("float", "double"):
        return n + 0.5
    if t.startswith("decimal"):
        scale = int(t.split(",")[1].rstrip(")"))
        return Decimal(n % 1000).scaleb(-scale)
    if t == "date":
        return dt.date(2024, 3, 1) + dt.timedelta(days=n % 60)
    if t == "time":
        return dt.time(10, n % 60, 0, 250)
    if t.startswith("timestamp"):
        ts = dt.datetime(2024, 3, 1, 12) + dt.timedelta(hours=n % 100, microseconds=n)
        return ts.replace(tzinfo=UTC) if "tz" in t else ts
    if t == "string":
        return f"n{n}-ü"
    if t == "uuid":
        # sign classes 0, 3, 2 (top bits of bytes 0 and 8) for n % 4 = 0, 1, 2: one file of ours
        # holds uuids that unsigned bytes and Java 1.10's signed longs order differently
        b = bytearray(uuid.UUID(int=n).bytes)
        cls = (0, 3, 2, 1)[n % 4]
        b[0] |= 0x80 if cls & 2 else 0
        b[8] |= 0x80 if cls & 1 else 0
        return bytes(b)
    if t == "binary":
        return bytes([n % 256, 0xFF])
    return bytes([n % 256]) * int(t[len("fixed["):-1])


def write_rows(meta: table_meta.TableMeta, first: int, count: int, path: Path) -> list[dict]:
    """Writes `count` rows numbered from `first` to a Parquet file; returns them canonical."""
    rows = [{f["name"]: value(f["type"], n, f["required"]) for f in meta.fields}
            for n in range(first, first + count)]
    schema = pa.schema([arrow_field(f) for f in meta.fields])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return [canon_row(r, meta.fields) for r in rows]


def append(cli: Path, catalog: list[str], table: str, data: Path, mode: str) -> str:
    """Our append; returns the new metadata.json."""
    proc = subprocess.run([str(cli), *catalog, "--json", "append", table, str(data), f"--{mode}"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"iceberg append {table} --{mode}: {proc.stderr.strip()[-1500:]}")
    return table_meta.strip_scheme(json.loads(proc.stdout)["metadata_location"])


def expire(cli: Path, catalog: list[str], table: str) -> str:
    """Our `expire` keeping the last two snapshots; returns the new metadata.json."""
    proc = subprocess.run([str(cli), *catalog, "--json", "expire", table, "--older-than", "0s",
                           "--retain-last", "2"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"iceberg expire {table}: {proc.stderr.strip()[-1500:]}")
    report = json.loads(proc.stdout)
    if not report["expired_snapshots"] or report["cleanup_error"]:
        raise RuntimeError(f"iceberg expire {table}: expired nothing, or failed to clean up: {report}")
    return table_meta.strip_scheme(report["metadata_location"])


def rewrite_manifests(cli: Path, catalog: list[str], table: str) -> str:
    """Our `rewrite-manifests`; returns the new metadata.json (it must rewrite something)."""
    proc = subprocess.run([str(cli), *catalog, "--json", "rewrite-manifests", table],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"iceberg rewrite-manifests {table}: {proc.stderr.strip()[-1500:]}")
    report = json.loads(proc.stdout)
    if not report["metadata_location"]:
        raise RuntimeError(f"iceberg rewrite-manifests {table}: rewrote nothing: {report}")
    return table_meta.strip_scheme(report["metadata_location"])


def compact(cli: Path, catalog: list[str], table: str) -> str:
    """Our `compact` from three small files per partition on; returns the new metadata.json
    (it must compact something)."""
    proc = subprocess.run([str(cli), *catalog, "--json", "compact", table, "--min-input-files", "3"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"iceberg compact {table}: {proc.stderr.strip()[-1500:]}")
    report = json.loads(proc.stdout)
    if not report["metadata_location"]:
        raise RuntimeError(f"iceberg compact {table}: compacted nothing: {report}")
    return table_meta.strip_scheme(report["metadata_location"])


def orphan_files(cli: Path, catalog: list[str], table: str) -> list[str]:
    """The files under `table` that nothing of it refers to, however new (our `orphans`)."""
    proc = subprocess.run([str(cli), *catalog, "--json", "orphans", table, "--older-than", "2999-01-01"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"iceberg orphans {table}: {proc.stderr.strip()[-1500:]}")
    return [o["path"] for o in json.loads(proc.stdout)["orphans"]]


def add_files(cli: Path, catalog: list[str], table: str, files: Path) -> str:
    """Our `add-files` of the Parquet files under `files`; returns the new metadata.json."""
    proc = subprocess.run([str(cli), *catalog, "--json", "add-files", table, str(files)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"iceberg add-files {table} {files}: {proc.stderr.strip()[-1500:]}")
    return table_meta.strip_scheme(json.loads(proc.stdout)["metadata_location"])


def _table_dir(metadata: str, table: str) -> Path:
    """The folder of `table` beside the table whose metadata.json is `metadata` (Hadoop layout)."""
    return Path(table_meta.strip_scheme(metadata)).parent.parent.parent / table


def snapshots(meta: table_meta.TableMeta, ours: dict[int, list[dict]]) -> list[dict]:
    """The metadata's snapshots; for ours (snapshot id -> its added files, decoded with fastavro),
    what an append onto the parent must say."""
    doc = table_meta.read_metadata(meta.path)
    by_id = {s["snapshot-id"]: s for s in doc.get("snapshots", [])}
    out = []
    for s in doc.get("snapshots", []):
        summary = {k: v for k, v in s["summary"].items() if k != "operation"}
        snap = {"snapshot_id": s["snapshot-id"], "parent_id": s.get("parent-snapshot-id"),
                "sequence_number": s.get("sequence-number", 0), "timestamp_ms": s["timestamp-ms"],
                "operation": s["summary"]["operation"], "summary": summary}
        # (a snapshot whose parent our expiry removed is left as the metadata says)
        if s["snapshot-id"] in ours and s.get("parent-snapshot-id") in by_id:
            snap.update(_our_snapshot(s, by_id, ours[s["snapshot-id"]], meta.format_version))
        out.append(canon_snapshot(snap))
    return sort_snapshots(out)


def _our_snapshot(s: dict, by_id: dict, added: list[dict], version: int) -> dict:
    parent = by_id[s["parent-snapshot-id"]] if s.get("parent-snapshot-id") in by_id else None
    psum = parent["summary"] if parent else {}
    summary = {k: v for k, v in s["summary"].items() if k != "operation"}
    data = [f for f in added if f["content"] == 0]
    summary["added-records"] = str(sum(f["record_count"] for f in data))
    summary["added-data-files"] = str(len(data))
    summary["added-files-size"] = str(sum(f["file_size_in_bytes"] for f in data))
    for total, add in TOTALS.items():
        summary[total] = str(int(psum.get(total, 0)) + (int(summary[add]) if add else 0))
    return {"parent_id": parent["snapshot-id"] if parent else None, "operation": "append",
            "sequence_number": parent.get("sequence-number", 0) + 1 if version >= 2 and parent else 0,
            "summary": summary}


def _added_files(meta: table_meta.TableMeta) -> list[dict]:
    """Files of the current snapshot that it added (their path was not live in the parent)."""
    doc = table_meta.read_metadata(meta.path)
    current = next(s for s in doc["snapshots"] if s["snapshot-id"] == doc["current-snapshot-id"])
    before = {f["path"] for f in manifest_files.live_files(meta, current.get("parent-snapshot-id"))}
    return [f for f in manifest_files.live_files(meta) if f["path"] not in before]


def expected_state(meta: table_meta.TableMeta, rows: list[dict], filter_spec: dict,
                   ours: dict[int, list[dict]]) -> dict:
    return {
        "scan": sort_rows(rows),
        "filters": {k: sort_rows([r for r in rows if filters.evaluate(e, r, meta)]) for k, e in filter_spec.items()},
        "snapshots": snapshots(meta, ours),
        "files": sort_files(manifest_files.live_files(meta)),
    }


def _our_uuid_filters(meta: table_meta.TableMeta, appends: int) -> dict:
    """`c = <uuid>` for every uuid we append to a top-level uuid column c (of every sign class)."""
    out = {}
    for f in meta.fields:
        if f["type"] != "uuid":
            continue
        for n in range(1000, 1000 * (appends + 1), 1000):
            for k in range(n, n + 3):
                v = value("uuid", k, f["required"])
                if v is not None:
                    out[f"{f['name']}_eq_ours_{k}"] = {"op": "=", "col": f["name"], "value": str(uuid.UUID(bytes=v))}
    return out


# Text our CLI creates a table from (`append --create`): zoned and local timestamps, a date,
# a code with a leading zero, a decimal by --column, a quoted empty string beside a null.
TEXT_CSV = ("id,at,local,day,code,price,flag,note\n"
            "0,2024-03-01T10:00:00Z,2024-03-01T10:00:00,2024-03-01,007,12.50,true,\"\"\n"
            "1,2024-03-01T12:30:00.5+02:00,2024-03-01 11:30:00.5,2024-02-29,012,,false,\n"
            "2,2024-03-02T23:59:59.999999-05:00,2024-03-02T00:00:00,2024-03-02,100,-0.05,true,x\n")
TEXT_NDJSON = ('{"id":3,"at":"2024-03-03T00:00:00+00:00","local":"2024-03-03T01:02:03","day":"2024-03-03",'
               '"code":"0","price":99999999.99,"flag":false,"note":""}\n'
               '{"id":4,"at":null,"local":null,"day":null,"code":null,"price":null,"flag":null,"note":null}\n')


def _text_rows() -> list[dict]:
    """The rows of TEXT_CSV then TEXT_NDJSON, as they must be read back."""
    at = lambda *a, **k: dt.datetime(*a, **k, tzinfo=UTC)  # noqa: E731
    return [
        {"id": 0, "at": at(2024, 3, 1, 10), "local": dt.datetime(2024, 3, 1, 10), "day": dt.date(2024, 3, 1),
         "code": "007", "price": Decimal("12.50"), "flag": True, "note": ""},
        {"id": 1, "at": at(2024, 3, 1, 10, 30, 0, 500000), "local": dt.datetime(2024, 3, 1, 11, 30, 0, 500000),
         "day": dt.date(2024, 2, 29), "code": "012", "price": None, "flag": False, "note": None},
        {"id": 2, "at": at(2024, 3, 3, 4, 59, 59, 999999), "local": dt.datetime(2024, 3, 2),
         "day": dt.date(2024, 3, 2), "code": "100", "price": Decimal("-0.05"), "flag": True, "note": "x"},
        {"id": 3, "at": at(2024, 3, 3), "local": dt.datetime(2024, 3, 3, 1, 2, 3), "day": dt.date(2024, 3, 3),
         "code": "0", "price": Decimal("99999999.99"), "flag": False, "note": ""},
        {"id": 4, "at": None, "local": None, "day": None, "code": None, "price": None, "flag": None, "note": None},
    ]


def _cli_json(cli: Path, args: list[str]) -> dict:
    proc = subprocess.run([str(cli), "--json", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"iceberg {' '.join(args)}: {proc.stderr.strip()[-1500:]}")
    return json.loads(proc.stdout)


def text_created(out: Path, cli: Path) -> tuple[list[dict], dict, list[str]]:
    """Tables our CLI creates from CSV with `append --create` (the table and its first
    snapshot in one catalog step, through each catalog's own create) and then appends
    NDJSON to: every reader must see the values the text says, types included."""
    group = "Tables our CLI created from CSV (append --create), then appended NDJSON to"
    folder = out / "text"
    folder.mkdir(parents=True)
    (folder / "in.csv").write_text(TEXT_CSV)
    (folder / "more.ndjson").write_text(TEXT_NDJSON)
    rows_all = _text_rows()
    catalogs = {"text_object_store": ["--warehouse", str(folder / "hadoop"), "--catalog", "object-store"],
                "text_sqlite": ["--warehouse", str(folder / "sql")]}
    spec, expected, failed = [], {}, []
    for name, catalog in catalogs.items():
        try:
            made = _cli_json(cli, [*catalog, "append", f"db.{name}", str(folder / "in.csv"), "--create",
                                   "--column", "price=decimal(10, 2)", "--partition", "day(at)"])
            first = table_meta.strip_scheme(made["metadata_location"])
            second = append(cli, catalog, f"db.{name}", folder / "more.ndjson", "fast")
        except RuntimeError as e:
            failed.append(str(e))
            print(f"foreign_appends.py: {e}", file=sys.stderr)
            continue
        flt = {"code_eq_007": {"op": "=", "col": "code", "value": "007"},
               "id_ge_2": {"op": ">=", "col": "id", "value": 2},
               "note_is_null": {"op": "is_null", "col": "note"}}
        for state, path, rows in [(name, first, rows_all[:3]), (f"{name}+fast", second, rows_all)]:
            meta = table_meta.load(path)
            ours = {} if state == name else {table_meta.read_metadata(path)["current-snapshot-id"]: _added_files(meta)}
            expected[state] = expected_state(meta, [canon_row(r, meta.fields) for r in rows], flt, ours)
            spec.append({"name": state, "metadata": path, "group": group, "filters": flt})
    return spec, expected, failed


# A table our CLI creates from CSV and then evolves with `append --evolve`: a column added
# (old files lack it), then an int and a float widened (old files hold 4-byte values and
# bounds), with the int the source of a bucket partition (bucket(int) == bucket(long)).
EVOLVE_CSVS = [
    ("create.csv", "id,qty,ratio\n1,5,0.5\n2,-7,\n",
     ["--create", "--column", "qty=int", "--column", "ratio=float", "--partition", "bucket(4, qty)"]),
    ("add.csv", "id,qty,ratio,note\n3,7,1.25,hi\n4,,,\n", ["--evolve"]),
    ("widen.csv", "id,qty,ratio,note\n5,8000000000,0.1,big\n6,6,-2.5,\n",
     ["--evolve", "--column", "qty=long", "--column", "ratio=double"]),
]
EVOLVE_ROWS = [
    {"id": 1, "qty": 5, "ratio": 0.5}, {"id": 2, "qty": -7, "ratio": None},
    {"id": 3, "qty": 7, "ratio": 1.25, "note": "hi"}, {"id": 4, "qty": None, "ratio": None, "note": None},
    {"id": 5, "qty": 8000000000, "ratio": 0.1, "note": "big"}, {"id": 6, "qty": 6, "ratio": -2.5, "note": None},
]


def evolved(out: Path, cli: Path) -> tuple[list[dict], dict, list[str]]:
    """A table our CLI creates and evolves (`append --evolve`): every reader must find old
    files' rows with nulls for the added column and their int/float values widened, and the
    filters must read old files' 4-byte bounds as the promoted types."""
    group = ("A table our CLI evolved (append --evolve: a column added, then int and float widened; "
             "then alter: renamed, dropped, added)")
    folder = out / "evolve"
    folder.mkdir(parents=True)
    catalog = ["--warehouse", str(folder / "hadoop"), "--catalog", "object-store"]
    flt = {"qty_ge_6": {"op": ">=", "col": "qty", "value": 6},
           "ratio_lt_1": {"op": "<", "col": "ratio", "value": 1.0},
           "note_is_null": {"op": "is_null", "col": "note"}}
    spec, expected, failed = [], {}, []
    for step, (file, text, flags) in enumerate(EVOLVE_CSVS):
        (folder / file).write_text(text)
        try:
            done = _cli_json(cli, [*catalog, "append", "db.evolved", str(folder / file), *flags])
        except RuntimeError as e:
            failed.append(str(e))
            print(f"foreign_appends.py: {e}", file=sys.stderr)
            break
        path = table_meta.strip_scheme(done["metadata_location"])
        meta = table_meta.load(path)
        state = "evolved" + ["", "+add_column", "+widen"][step]
        ours = {} if step == 0 else {table_meta.read_metadata(path)["current-snapshot-id"]: _added_files(meta)}
        rows = EVOLVE_ROWS[: 2 * (step + 1)]
        names = {f["name"] for f in meta.fields}
        here = {k: e for k, e in flt.items() if e["col"] in names}  # `note` from the second state on
        expected[state] = expected_state(meta, [canon_row(r, meta.fields) for r in rows], here, ours)
        spec.append({"name": state, "metadata": path, "group": group, "filters": here})
    if failed:
        return spec, expected, failed
    # Then `iceberg alter`: `note` renamed (its id, so its values, stay), `ratio` dropped, a
    # column added after `id`; and an append under the altered schema.
    alters = [["rename-column", "note", "comment"], ["drop-column", "ratio"],
              ["add-column", "tag", "string", "--after", "id"]]
    (folder / "altered.csv").write_text("id,tag,qty,comment\n7,t,9,late\n8,,,\n")
    try:
        for change in alters:
            _cli_json(cli, [*catalog, "alter", "db.evolved", *change])
        done = _cli_json(cli, [*catalog, "append", "db.evolved", str(folder / "altered.csv")])
    except RuntimeError as e:
        failed.append(str(e))
        print(f"foreign_appends.py: {e}", file=sys.stderr)
        return spec, expected, failed
    path = table_meta.strip_scheme(done["metadata_location"])
    meta = table_meta.load(path)
    ours = {table_meta.read_metadata(path)["current-snapshot-id"]: _added_files(meta)}
    rows = [{"id": r["id"], "qty": r["qty"], "comment": r.get("note")} for r in EVOLVE_ROWS]
    rows += [{"id": 7, "tag": "t", "qty": 9, "comment": "late"}, {"id": 8, "tag": None, "qty": None, "comment": None}]
    here = {"qty_ge_6": flt["qty_ge_6"], "comment_is_null": {"op": "is_null", "col": "comment"},
            "tag_is_null": {"op": "is_null", "col": "tag"}}
    state = "evolved+add_column+widen+alter"
    expected[state] = expected_state(meta, [canon_row(r, meta.fields) for r in rows], here, ours)
    spec.append({"name": state, "metadata": path, "group": group, "filters": here})
    return spec, expected, failed


# The Java-written table we also append to with `--evolve`, after its fast and merge appends:
# its int `id` (a bucket source, under position deletes and a sort order) arrives as a long
# and a `note` column is new, in a plain Parquet file without field ids.
EVOLVE_FOREIGN = "java_v2_part"


def evolve_foreign(cli: Path, catalog: list[str], folder: Path, name: str, rows: list[dict]) -> str:
    """Our `append --evolve` onto a foreign table; adds its three rows to `rows` (canonical
    under the evolved schema) and returns the new metadata.json."""
    data = folder / f"{name}-evolve.parquet"
    new = [{"id": 5000 + k, "name": value("string", 5000 + k, False), "amount": 7 * k,
            "note": None if k == 1 else f"note {k}"} for k in range(3)]
    schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("amount", pa.int64()),
                        ("note", pa.string())])
    pq.write_table(pa.Table.from_pylist(new, schema=schema), data)
    done = _cli_json(cli, [*catalog, "append", f"db.{name}", str(data), "--evolve"])
    rows += new
    return table_meta.strip_scheme(done["metadata_location"])


# A table our CLI re-partitions with `iceberg alter`: day(ts) first, then bucket(4, id) added and
# day(ts) removed, so files under three specs; filters on the old and the new source find all.
REPART_CSVS = [
    ("day.csv", "id,ts,v\n1,2024-03-01T10:00:00Z,a\n2,2024-03-02T10:00:00Z,b\n",
     ["--create", "--partition", "day(ts)"]),
    ("both.csv", "id,ts,v\n3,2024-03-01T12:00:00Z,c\n4,2024-03-03T10:00:00Z,\n", []),
    ("bucket.csv", "id,ts,v\n5,2024-03-02T23:00:00Z,e\n6,2024-03-04T10:00:00Z,f\n", []),
]
REPART_ALTERS = [[], [["add-partition-field", "bucket(4, id)"]], [["drop-partition-field", "ts_day"]]]
REPART_ROWS = [
    {"id": 1, "ts": "2024-03-01T10:00:00+00:00", "v": "a"}, {"id": 2, "ts": "2024-03-02T10:00:00+00:00", "v": "b"},
    {"id": 3, "ts": "2024-03-01T12:00:00+00:00", "v": "c"}, {"id": 4, "ts": "2024-03-03T10:00:00+00:00", "v": None},
    {"id": 5, "ts": "2024-03-02T23:00:00+00:00", "v": "e"}, {"id": 6, "ts": "2024-03-04T10:00:00+00:00", "v": "f"},
]


def repartitioned(out: Path, cli: Path) -> tuple[list[dict], dict, list[str]]:
    """A table whose partition spec our CLI evolves between appends: every reader must find the
    files of every spec, and prune (or not) by the old and the new partition source."""
    group = "A table our CLI re-partitioned (alter: day(ts), then + bucket(4, id), then - day(ts))"
    folder = out / "repartition"
    folder.mkdir(parents=True)
    catalog = ["--warehouse", str(folder / "hadoop"), "--catalog", "object-store"]
    flt = {"ts_lt_mar2": {"op": "<", "col": "ts", "value": "2024-03-02T00:00:00+00:00"},
           "id_eq_5": {"op": "=", "col": "id", "value": 5},
           "id_in": {"op": "in", "col": "id", "values": [1, 4, 6]}}
    spec, expected, failed = [], {}, []
    for step, ((file, text, flags), alters) in enumerate(zip(REPART_CSVS, REPART_ALTERS)):
        (folder / file).write_text(text)
        try:
            for change in alters:
                _cli_json(cli, [*catalog, "alter", "db.repart", *change])
            done = _cli_json(cli, [*catalog, "append", "db.repart", str(folder / file), *flags])
        except RuntimeError as e:
            failed.append(str(e))
            print(f"foreign_appends.py: {e}", file=sys.stderr)
            break
        path = table_meta.strip_scheme(done["metadata_location"])
        meta = table_meta.load(path)
        state = "repart" + ["+day", "+day_bucket", "+bucket"][step]
        ours = {} if step == 0 else {table_meta.read_metadata(path)["current-snapshot-id"]: _added_files(meta)}
        rows = [canon_row(r, meta.fields) for r in REPART_ROWS[: 2 * (step + 1)]]
        expected[state] = expected_state(meta, rows, flt, ours)
        spec.append({"name": state, "metadata": path, "group": group, "filters": flt})
    return spec, expected, failed


def added_in_place(out: Path, cli: Path) -> tuple[list[dict], dict, list[str]]:
    """pyarrow's own Parquet files (no field ids) registered with
    `iceberg add-files`, not rewritten: one plain file into a table `--create` made from it,
    and `write_dataset`'s Hive folders (the partition column left out of the files) into a
    table partitioned by it, made by `create` or by `add-files --create --hive-partitioning`
    from the folders' keys. Readers find columns by the name mapping the commit set, and
    the identity partition's values from the partition tuples."""
    import pyarrow.dataset as ds

    group = "pyarrow's Parquet files added in place (add-files: plain, and Hive folders of write_dataset)"
    folder = out / "added"
    (folder / "plain").mkdir(parents=True)
    start = dt.datetime(2024, 3, 1, tzinfo=UTC)
    rows = [{"id": i, "name": f"name {i:05}" if i % 5 else None, "category": i % 4,
             "ts": start + dt.timedelta(minutes=7 * i)} for i in range(2000)]
    arrow = pa.schema([("id", pa.int64()), ("name", pa.string()), ("category", pa.int32()),
                       ("ts", pa.timestamp("us", tz="UTC"))])
    table = pa.Table.from_pylist(rows, schema=arrow)
    plain = folder / "plain" / "part-0.parquet"
    pq.write_table(table, plain, row_group_size=500)
    ds.write_dataset(table, folder / "hive", format="parquet", partitioning=["category"],
                     partitioning_flavor="hive")
    catalog = ["--warehouse", str(folder / "hadoop"), "--catalog", "object-store"]
    flt = {"category_eq_3": {"op": "=", "col": "category", "value": 3},
           "id_lt_10": {"op": "<", "col": "id", "value": 10},
           "ts_ge_mar5": {"op": ">=", "col": "ts", "value": "2024-03-05T00:00:00+00:00"},
           "name_is_null": {"op": "is_null", "col": "name"}}
    spec, expected, failed = [], {}, []
    try:
        made = {"added_plain": _cli_json(cli, [*catalog, "add-files", "db.added_plain", str(plain), "--create"])}
        _cli_json(cli, [*catalog, "create", "db.added_hive", "--schema-from", str(plain), "--partition", "category"])
        made["added_hive"] = _cli_json(cli, [*catalog, "add-files", "db.added_hive", str(folder / "hive"),
                                             "--hive-partitioning"])
        # the table made from the folders alone: `category` (not in the files) an int column
        # read from the identity partition's values
        made["added_hive_created"] = _cli_json(cli, [*catalog, "add-files", "db.added_hive_created",
                                                     str(folder / "hive"), "--hive-partitioning", "--create"])
    except RuntimeError as e:
        print(f"foreign_appends.py: {e}", file=sys.stderr)
        return spec, expected, [str(e)]
    for name, done in made.items():
        path = table_meta.strip_scheme(done["metadata_location"])
        meta = table_meta.load(path)
        expected[name] = expected_state(meta, [canon_row(r, meta.fields) for r in rows], flt, {})
        spec.append({"name": name, "metadata": path, "group": group, "filters": flt})
    return spec, expected, failed


def sql_written(out: Path, cli: Path, sql: Path) -> tuple[list[dict], dict, list[str]]:
    """The table DataFusion writes (datafusion_tables.py): each insert's rows, and from the
    second insert on, what an append onto the one before must say."""
    states, failed = datafusion_tables.sql_written(out, cli, sql)
    spec, expected, ours = [], {}, {}
    flt = datafusion_tables.FILTERS
    for n, (state, path, rows) in enumerate(states):
        meta = table_meta.load(path)
        if n > 0:
            ours[table_meta.read_metadata(path)["current-snapshot-id"]] = _added_files(meta)
        expected[state] = expected_state(meta, [canon_row(r, meta.fields) for r in rows], flt, dict(ours))
        spec.append({"name": state, "metadata": path, "group": datafusion_tables.GROUP, "filters": flt})
    return spec, expected, failed


def run(out: Path, cli: Path, cache: Path, java: bool, sql: Path | None) -> tuple[dict, dict, list[str]]:
    shutil.rmtree(out, ignore_errors=True)  # the engines' tables are made anew every time
    py = sys.executable
    engines = []
    if java:
        subprocess.run([py, str(HERE / "make_java_tables.py"), str(out / "java"), "--cache", str(cache)], check=True)
        engines.append(("Java", out / "java", ["--warehouse", str(out / "java" / "warehouse"),
                                                "--catalog", "object-store"]))
    subprocess.run([py, str(HERE / "make_pyiceberg_tables.py"), str(out / "pyiceberg")], check=True)
    engines.append(("PyIceberg", out / "pyiceberg", ["--warehouse", str(out / "pyiceberg" / "warehouse"),
                                                     "--catalog", f"sqlite:///{out / 'pyiceberg' / 'catalog.db'}"]))
    spec, expected, failed = [], {}, []
    for engine, folder, catalog in engines:
        group = f"Tables written by {engine}, then appended to by us (fast, then merge)"
        engine_rows = json.loads((folder / "engine.json").read_text())["tables"]
        for t in json.loads((folder / "spec.json").read_text())["tables"]:
            name, meta = t["name"], table_meta.load(t["metadata"])
            rows = list(engine_rows[name]["scan"])
            modes = t.get("appends", ["fast", "merge"])
            flt = {**t["filters"], **_our_uuid_filters(meta, len(modes))}
            states, ours = [(name, meta.path)], {}
            for i, mode in enumerate(modes):
                try:
                    if mode == "add-files":  # the engine's own files of another table, in place
                        source = t["add_files_from"]
                        rows += engine_rows[source]["scan"]
                        path = add_files(cli, catalog, f"db.{name}", _table_dir(t["metadata"], source) / "data")
                    elif mode == "rewrite-manifests":  # no rows added; every file as it was
                        path = rewrite_manifests(cli, catalog, f"db.{name}")
                    elif mode == "compact":  # no rows added; small files rewritten
                        path = compact(cli, catalog, f"db.{name}")
                    elif mode == "expire":  # no rows added; the states whose head expired go
                        path = expire(cli, catalog, f"db.{name}")
                        kept = {s["snapshot-id"] for s in table_meta.read_metadata(path)["snapshots"]}
                        gone = [n for n, p in states
                                if table_meta.read_metadata(p).get("current-snapshot-id") not in kept]
                        states = [(n, p) for n, p in states if n not in gone]
                        for n in gone:
                            expected.pop(n, None)
                    else:
                        data = folder / f"{name}-{i}-{mode}.parquet"
                        rows += write_rows(meta, 1000 * (i + 1), 3, data)
                        path = append(cli, catalog, f"db.{name}", data, mode)
                except RuntimeError as e:  # the states so far are still read; main() exits 1
                    failed.append(str(e))
                    print(f"foreign_appends.py: {e}", file=sys.stderr)
                    break
                after = table_meta.load(path)
                doc = table_meta.read_metadata(path)
                if mode not in ("expire", "rewrite-manifests", "compact"):  # those add no rows
                    ours[doc["current-snapshot-id"]] = _added_files(after)
                states.append((f"{name}+{'+'.join(modes[:i + 1])}", path))
                expected[states[-1][0]] = expected_state(after, rows, flt, ours)
            if engine == "Java" and name == EVOLVE_FOREIGN and len(states) == len(modes) + 1:
                try:
                    path = evolve_foreign(cli, catalog, folder, name, rows)
                except RuntimeError as e:
                    failed.append(str(e))
                    print(f"foreign_appends.py: {e}", file=sys.stderr)
                else:
                    after = table_meta.load(path)
                    ours[table_meta.read_metadata(path)["current-snapshot-id"]] = _added_files(after)
                    rows = [canon_row(r, after.fields) for r in rows]
                    evolve_flt = {**flt, "note_is_null": {"op": "is_null", "col": "note"}}
                    state = f"{name}+{'+'.join(modes)}+evolve"
                    expected[state] = expected_state(after, rows, evolve_flt, ours)
                    spec.append({"name": state, "metadata": path, "group": group, "filters": evolve_flt})
            try:  # after all of ours: nothing under the table that it does not refer to
                orphans = orphan_files(cli, catalog, f"db.{name}")
            except RuntimeError as e:
                orphans = [str(e)]
            if orphans:
                failed.append(f"iceberg orphans db.{name}: {orphans[:5]}")
            if states and states[0][0] == name:  # the engine's own state, unless our expiry took its head
                expected[name] = expected_state(meta, list(engine_rows[name]["scan"]), flt, {})
            spec += [{"name": n, "metadata": p, "group": group, "filters": flt} for n, p in states]
    for made in (text_created, evolved, repartitioned, added_in_place):
        more_spec, more_expected, more_failed = made(out, cli)
        spec += more_spec
        expected.update(more_expected)
        failed += more_failed
    if sql is not None:
        more_spec, more_expected, more_failed = sql_written(out, cli, sql)
        spec += more_spec
        expected.update(more_expected)
        failed += more_failed
    return {"tables": spec}, {"reader": "expected", "tables": expected}, failed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--iceberg", type=Path, required=True, help="our CLI binary")
    ap.add_argument("--cache", type=Path, default=HERE.parent / "target" / "interop-cache")
    ap.add_argument("--no-java", action="store_true", help="skip the Java tables (Spark start-up, ~40 s)")
    ap.add_argument("--sql", type=Path, help="the iceberg-ballista binary: DataFusion writes a table with it")
    ap.add_argument("--spec", type=Path, required=True)
    ap.add_argument("--expected", type=Path, required=True)
    args = ap.parse_args()
    sql = args.sql.resolve() if args.sql else None
    spec, expected, failed = run(args.out.resolve(), args.iceberg.resolve(), args.cache.resolve(), not args.no_java, sql)
    args.spec.write_text(json.dumps(spec, indent=1, ensure_ascii=False) + "\n")
    args.expected.write_text(json.dumps(expected, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(spec['tables'])} table states", file=sys.stderr)
    if failed:  # written anyway, so that the states before the failed append can be read by hand
        sys.exit(f"foreign_appends.py: {len(failed)} of our appends failed (the table's later states are "
                 f"left out of the spec):\n" + "\n".join(failed))


if __name__ == "__main__":
    main()
