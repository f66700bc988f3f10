"""Writes a few Iceberg tables with PyIceberg and a spec.json listing them.

    python make_pyiceberg_tables.py OUT_DIR

Tables (all with two or three appends, nulls on every column):
  pyi_v1_identity   v1, identity(category); long/int/string/double (NaN, -0.0)/float/bool
  pyi_v2_day        v2, day(ts); timestamp, timestamptz, date, time; after our fast and
                    merge appends, our `expire` keeps the last two snapshots
  pyi_v2_bucket     v2, bucket(4, id) + truncate(3, name); decimal, uuid, binary, fixed
  pyi_v2_nested     v2, unpartitioned; struct, list, map; then a row delete
  pyi_v2_double     v2, identity(d double): PyIceberg 0.12 reads such partition values as float32
OUT_DIR/spec.json gets each table's metadata path and a few filters (FORMAT.md), and
OUT_DIR/engine.json the rows as PyIceberg reads them back (an expected result, FORMAT.md).
The catalog is named "default", as our CLI names a SQLite catalog given by URI, so that
`iceberg --catalog sqlite:///OUT_DIR/catalog.db` appends to these tables.
"""

import datetime as dt
import json
import sys
import uuid
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.expressions import EqualTo
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform, TruncateTransform
from pyiceberg.types import (
    BinaryType, BooleanType, DateType, DecimalType, DoubleType, FixedType, FloatType, IntegerType,
    ListType, LongType, MapType, NestedField, StringType, StructType, TimestampType, TimestamptzType,
    TimeType, UUIDType,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))

import table_meta  # noqa: E402
from canon import arrow_rows, canon_row, sort_rows  # noqa: E402

UTC = dt.timezone.utc


def field(fid: int, name: str, typ, required: bool = False) -> NestedField:
    return NestedField(field_id=fid, name=name, field_type=typ, required=required)


def v1_identity(cat: SqlCatalog) -> dict:
    schema = Schema(
        field(1, "id", LongType(), required=True), field(2, "category", StringType()),
        field(3, "n", IntegerType()), field(4, "d", DoubleType()), field(5, "f", FloatType()),
        field(6, "flag", BooleanType()),
    )
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="category"))
    t = cat.create_table("db.pyi_v1_identity", schema, partition_spec=spec, properties={"format-version": "1"})
    arrow = t.schema().as_arrow()
    t.append(pa.Table.from_pylist([
        {"id": 1, "category": "a", "n": 10, "d": 1.5, "f": 1.1, "flag": True},
        {"id": 2, "category": "a", "n": None, "d": float("nan"), "f": None, "flag": False},
        {"id": 3, "category": "b", "n": -7, "d": -0.0, "f": float("nan"), "flag": None},
    ], schema=arrow))
    t.append(pa.Table.from_pylist([
        {"id": 4, "category": None, "n": 2**31 - 1, "d": None, "f": -2.5, "flag": True},
        {"id": 5, "category": "b", "n": 0, "d": 1e300, "f": 3.0, "flag": False},
    ], schema=arrow))
    return {"name": "pyi_v1_identity", "metadata": t.metadata_location, "filters": {
        "id_lt_3": {"op": "<", "col": "id", "value": 3},
        "category_eq_b": {"op": "=", "col": "category", "value": "b"},
        "category_null": {"op": "is_null", "col": "category"},
        "d_is_nan": {"op": "is_nan", "col": "d"},
        "d_gt_1_or_n_null": {"op": "or", "args": [
            {"op": ">", "col": "d", "value": 1.0}, {"op": "is_null", "col": "n"}]},
    }}


def v2_day(cat: SqlCatalog) -> dict:
    schema = Schema(
        field(1, "id", LongType()), field(2, "ts", TimestampType()), field(3, "tstz", TimestamptzType()),
        field(4, "day", DateType()), field(5, "t", TimeType()),
    )
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=DayTransform(), name="ts_day"))
    t = cat.create_table("db.pyi_v2_day", schema, partition_spec=spec, properties={"format-version": "2"})
    arrow = t.schema().as_arrow()
    base = dt.datetime(2024, 2, 28, 23, 59, 59, 999999)
    for k in range(3):
        rows = [{"id": 10 * k + i, "ts": base + dt.timedelta(hours=7 * i + k),
                 "tstz": (base + dt.timedelta(minutes=i)).replace(tzinfo=UTC),
                 "day": dt.date(1969, 12, 31) + dt.timedelta(days=i), "t": dt.time(12, i, 0, 123456)}
                for i in range(4)]
        rows.append({"id": 10 * k + 9, "ts": None, "tstz": None, "day": None, "t": None})
        t.append(pa.Table.from_pylist(rows, schema=arrow))
    # after our fast and merge appends, our `expire` keeps the last two snapshots
    return {"name": "pyi_v2_day", "metadata": t.metadata_location, "appends": ["fast", "merge", "expire"],
            "filters": {
        "ts_ge_feb29": {"op": ">=", "col": "ts", "value": "2024-02-29T00:00:00"},
        "ts_null": {"op": "is_null", "col": "ts"},
        "day_lt_1970": {"op": "<", "col": "day", "value": "1970-01-01"},
        "tstz_eq": {"op": "=", "col": "tstz", "value": "2024-02-29T00:00:59.999999+00:00"},
        "t_gt": {"op": ">", "col": "t", "value": "12:01:00.123456"},
        "ts_micros_lt": {"op": "<", "col": "ts", "value": 1709164800000000},
    }}


def v2_bucket(cat: SqlCatalog) -> dict:
    schema = Schema(
        field(1, "id", IntegerType()), field(2, "name", StringType()), field(3, "price", DecimalType(10, 2)),
        field(4, "u", UUIDType()), field(5, "b", BinaryType()), field(6, "fx", FixedType(4)),
    )
    spec = PartitionSpec(
        PartitionField(source_id=1, field_id=1000, transform=BucketTransform(4), name="id_bucket"),
        PartitionField(source_id=2, field_id=1001, transform=TruncateTransform(3), name="name_trunc"),
    )
    t = cat.create_table("db.pyi_v2_bucket", schema, partition_spec=spec, properties={"format-version": "2"})
    arrow = t.schema().as_arrow()
    for k in range(2):
        rows = [{"id": 100 * k + i, "name": ["apple", "apricot", "banana", "ünïcode"][i],
                 "price": Decimal(f"{k}{i}.{i}5"), "u": uuid.UUID(int=(k << 64) + i).bytes,
                 "b": bytes([i, k, 255]), "fx": bytes([k, i, 0, 1])} for i in range(4)]
        rows.append({"id": None, "name": None, "price": None, "u": None, "b": None, "fx": None})
        t.append(pa.Table.from_pylist(rows, schema=arrow))
    return {"name": "pyi_v2_bucket", "metadata": t.metadata_location, "filters": {
        "id_in": {"op": "in", "col": "id", "values": [1, 3, 101]},
        "name_ge_b": {"op": ">=", "col": "name", "value": "b"},
        "price_lt": {"op": "<", "col": "price", "value": "10.00"},
        "and_not_null": {"op": "and", "args": [{"op": "not_null", "col": "id"}, {"op": "!=", "col": "id", "value": 2}]},
        "u_eq": {"op": "=", "col": "u", "value": "00000000-0000-0001-0000-000000000002"},
        "b_eq": {"op": "=", "col": "b", "value": "0100ff"},
        # not_in / not on a nullable column: Iceberg keeps nulls, SQL drops them; so guard with not_null
        "price_not_in": {"op": "and", "args": [{"op": "not_null", "col": "price"},
                                               {"op": "not_in", "col": "price", "values": ["0.05", "11.15"]}]},
        "not_starts_ap": {"op": "and", "args": [{"op": "not_null", "col": "name"},
                                                {"op": "not", "arg": {"op": "starts_with", "col": "name", "value": "ap"}}]},
    }}


def v2_nested(cat: SqlCatalog) -> dict:
    schema = Schema(
        field(1, "id", LongType()),
        field(2, "s", StructType(field(5, "x", IntegerType()), field(6, "y", StringType()))),
        field(3, "l", ListType(element_id=7, element_type=DoubleType(), element_required=False)),
        field(4, "m", MapType(key_id=8, key_type=StringType(), value_id=9, value_type=LongType(),
                              value_required=False)),
    )
    t = cat.create_table("db.pyi_v2_nested", schema, properties={"format-version": "2"})
    arrow = t.schema().as_arrow()
    t.append(pa.Table.from_pylist([
        {"id": 1, "s": {"x": 1, "y": "one"}, "l": [1.0, None, float("nan")], "m": {"a": 1, "b": None}},
        {"id": 2, "s": None, "l": [], "m": {}},
        {"id": 3, "s": {"x": None, "y": None}, "l": None, "m": None},
    ], schema=arrow))
    t.append(pa.Table.from_pylist([{"id": 4, "s": {"x": 4, "y": "four"}, "l": [-0.0], "m": {"z": -1}}],
                                  schema=arrow))
    t.delete(EqualTo("id", 2))
    return {"name": "pyi_v2_nested", "metadata": t.metadata_location, "filters": {
        "id_ge_3": {"op": ">=", "col": "id", "value": 3},
        "s_x_not_null": {"op": "not_null", "col": "s.x"},
    }}


def v2_double(cat: SqlCatalog) -> dict:
    schema = Schema(field(1, "id", LongType()), field(2, "d", DoubleType()))
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="d"))
    t = cat.create_table("db.pyi_v2_double", schema, partition_spec=spec, properties={"format-version": "2"})
    t.append(pa.Table.from_pylist([{"id": 1, "d": 0.1}, {"id": 2, "d": 1e300}, {"id": 3, "d": None}],
                                  schema=t.schema().as_arrow()))
    return {"name": "pyi_v2_double", "metadata": t.metadata_location, "filters": {
        "d_eq": {"op": "=", "col": "d", "value": 0.1}}}


def main() -> None:
    out = Path(sys.argv[1]).resolve()
    (out / "warehouse").mkdir(parents=True, exist_ok=True)
    cat = SqlCatalog("default", uri=f"sqlite:///{out}/catalog.db", warehouse=f"file://{out}/warehouse")
    cat.create_namespace_if_not_exists("db")
    tables = []
    for make in (v1_identity, v2_day, v2_bucket, v2_nested, v2_double):
        name = make.__name__
        if cat.table_exists(f"db.pyi_{name}"):
            cat.drop_table(f"db.pyi_{name}")
        tables.append(make(cat))
    engine = {}
    for t in tables:
        t["metadata"] = t["metadata"].removeprefix("file://")
        meta = table_meta.load(t["metadata"])
        rows = arrow_rows(cat.load_table(f"db.{t['name']}").scan().to_arrow())
        engine[t["name"]] = {"scan": sort_rows([canon_row(r, meta.fields) for r in rows])}
    (out / "spec.json").write_text(json.dumps({"tables": tables}, indent=2) + "\n")
    (out / "engine.json").write_text(json.dumps({"reader": "pyiceberg (writer)", "tables": engine}, indent=1) + "\n")
    print(out / "spec.json")


if __name__ == "__main__":
    main()
