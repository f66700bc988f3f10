"""Writes Iceberg tables with Apache Iceberg Java 1.10.2 through Spark 3.5 and a spec.json.

    python make_java_tables.py OUT_DIR [--cache CACHE_DIR]

Spark runs local[1] with a Hadoop catalog "x" on OUT_DIR/warehouse (setup.sh must have run:
the runtime jar needs CACHE/java's relocated Jackson). Tables, each with a couple of appends:
  java_v1_part   v1, identity(category) + days(ts); decimal, double/float (NaN), date,
                 timestamp (tz) and timestamp_ntz, binary, struct/list/map
  java_v2_part   v2, bucket(4, id) + truncate(2, name), sort order id; merge-on-read DELETE
                 (a position delete file)
  java_v3        v3 (row lineage: first_row_id), months(dt)
and the tables of java_edge_tables.py (merge-on-read position deletes and deletion vectors, a
v1 table Java merged and upgraded to v2, partition names that are not Avro names, uuid
partitions and stats across the sign bit), all in one SparkSession.
OUT_DIR/spec.json lists their current metadata.json, a few filters (FORMAT.md) and the modes
foreign_appends.py appends with, and OUT_DIR/engine.json the rows as Spark reads them back (an
expected result, FORMAT.md).
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import java_edge_tables  # noqa: E402
import table_meta  # noqa: E402
from canon import canon_row, sort_rows  # noqa: E402

RUNTIME = "iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
EXTENSIONS = "iceberg-spark-extensions-3.5_2.12-1.10.2.jar"


def spark_session(warehouse: Path, cache: Path):
    import snowpark_connect_deps_iceberg
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # local only

    jars_dir = Path(snowpark_connect_deps_iceberg.__file__).parent / "jars"
    jackson = sorted((cache / "java").glob("shaded-jackson-*.jar"))
    if len(jackson) != 3:
        sys.exit(f"no relocated Jackson in {cache}/java: run interop/setup.sh first")
    jars = [jars_dir / RUNTIME, jars_dir / EXTENSIONS, *jackson]
    return (SparkSession.builder.master("local[1]").appName("interop-make-java-tables")
            .config("spark.jars", ",".join(map(str, jars)))
            .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
            .config("spark.sql.catalog.x", "org.apache.iceberg.spark.SparkCatalog")
            .config("spark.sql.catalog.x.type", "hadoop")
            # a file: URL, so that the paths in the metadata carry a scheme (iceberg-rust needs one)
            .config("spark.sql.catalog.x.warehouse", warehouse.as_uri())
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.shuffle.partitions", "1")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.memory", "1g")
            .getOrCreate())


def v1_part(sql) -> dict:
    sql("""CREATE TABLE x.db.java_v1_part (id BIGINT NOT NULL, category STRING, price DECIMAL(10,2),
           d DOUBLE, f FLOAT, dt DATE, ts TIMESTAMP, ts_ntz TIMESTAMP_NTZ, data BINARY,
           s STRUCT<a: INT, b: STRING>, l ARRAY<BIGINT>, m MAP<STRING, DOUBLE>)
           USING iceberg PARTITIONED BY (category, days(ts)) TBLPROPERTIES ('format-version'='1')""")
    sql("""INSERT INTO x.db.java_v1_part VALUES
        (1, 'a', 1.50, 1.5, 1.25, DATE'2024-01-01', TIMESTAMP'2024-01-01 10:00:00.123456',
         TIMESTAMP_NTZ'2024-01-01 10:00:00', X'00FF', named_struct('a', 1, 'b', 'x'), array(1, 2), map('k', 1.0)),
        (2, 'a', NULL, double('NaN'), float('NaN'), NULL, TIMESTAMP'2024-01-02 00:00:00', NULL, NULL,
         NULL, array(), map()),
        (3, NULL, -7.25, double('-0.0'), NULL, DATE'1969-12-31', NULL, TIMESTAMP_NTZ'1969-12-31 23:59:59.999999',
         X'', named_struct('a', NULL, 'b', NULL), NULL, NULL)""")
    sql("""INSERT INTO x.db.java_v1_part VALUES
        (4, 'b', 99999999.99, 1e300, -3.5, DATE'2024-02-29', TIMESTAMP'2024-02-29 23:59:59.999999',
         TIMESTAMP_NTZ'2024-02-29 12:00:00', X'01', named_struct('a', 4, 'b', 'y'), array(NULL, 5),
         map('z', double('NaN')))""")
    return {"name": "java_v1_part", "filters": {
        "category_a": {"op": "=", "col": "category", "value": "a"},
        "ts_ge_jan2": {"op": ">=", "col": "ts", "value": "2024-01-02T00:00:00.000000+00:00"},
        "price_gt": {"op": ">", "col": "price", "value": "0.00"},
        "d_is_nan": {"op": "is_nan", "col": "d"},
        "dt_null_or_id_4": {"op": "or", "args": [{"op": "is_null", "col": "dt"},
                                                  {"op": "=", "col": "id", "value": 4}]},
    }}


def v2_part(sql) -> dict:
    sql("""CREATE TABLE x.db.java_v2_part (id INT, name STRING, amount BIGINT)
           USING iceberg PARTITIONED BY (bucket(4, id), truncate(2, name))
           TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')""")
    sql("ALTER TABLE x.db.java_v2_part WRITE ORDERED BY id")
    sql("INSERT INTO x.db.java_v2_part VALUES (1, 'apple', 10), (2, 'apricot', NULL), (3, 'banana', 30), "
        "(4, NULL, 40)")
    sql("INSERT INTO x.db.java_v2_part VALUES (5, 'apple', 50), (6, 'cherry', 60), (NULL, 'date', 70)")
    sql("DELETE FROM x.db.java_v2_part WHERE id = 2 OR id = 5")
    return {"name": "java_v2_part", "filters": {
        "id_in": {"op": "in", "col": "id", "values": [1, 3, 5, 6]},
        "name_ap": {"op": "starts_with", "col": "name", "value": "ap"},
        "amount_null": {"op": "is_null", "col": "amount"},
    }}


def v3(sql) -> dict:
    sql("""CREATE TABLE x.db.java_v3 (id BIGINT, dt DATE, v STRING)
           USING iceberg PARTITIONED BY (months(dt)) TBLPROPERTIES ('format-version'='3')""")
    sql("INSERT INTO x.db.java_v3 VALUES (1, DATE'2024-01-15', 'a'), (2, DATE'2024-02-01', 'b')")
    sql("INSERT INTO x.db.java_v3 VALUES (3, DATE'2024-02-10', NULL), (4, NULL, 'd')")
    return {"name": "java_v3", "filters": {"dt_lt_feb": {"op": "<", "col": "dt", "value": "2024-02-01"}}}


def current_metadata(table_dir: Path) -> str:
    version = (table_dir / "metadata" / "version-hint.text").read_text().strip()
    gz = table_dir / "metadata" / f"v{version}.gz.metadata.json"  # write.metadata.compression-codec=gzip
    return str(gz if gz.exists() else table_dir / "metadata" / f"v{version}.metadata.json")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--cache", type=Path, default=Path(__file__).resolve().parent.parent / "target" / "interop-cache")
    args = ap.parse_args()
    out = args.out.resolve()
    # PySpark turns TIMESTAMP values into naive datetimes in the process's local time zone
    os.environ["TZ"] = "UTC"
    time.tzset()
    warehouse = out / "warehouse"
    warehouse.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    spark = spark_session(warehouse, args.cache.resolve())
    spark.sparkContext.setLogLevel("ERROR")
    spark_up = time.monotonic()
    tables, engine, seconds = [], {}, {}
    makers = [("java_v1_part", lambda s: v1_part(s.sql)), ("java_v2_part", lambda s: v2_part(s.sql)),
              ("java_v3", lambda s: v3(s.sql)), *java_edge_tables.TABLES]
    for name, make in makers:
        t0 = time.monotonic()
        spark.sql(f"DROP TABLE IF EXISTS x.db.{name} PURGE")
        t = make(spark)
        t["metadata"] = current_metadata(warehouse / "db" / name)
        tables.append(t)
        fields = table_meta.load(t["metadata"]).fields
        for read in (name, t.get("add_files_from")):
            if read:  # the source of added files: its rows as Spark reads them, in the target's terms
                rows = [r.asDict(recursive=True) for r in spark.table(f"x.db.{read}").collect()]
                engine[read] = {"scan": sort_rows([canon_row(r, fields) for r in rows])}
        seconds[name] = round(time.monotonic() - t0, 1)
    spark.stop()
    (out / "engine.json").write_text(json.dumps({"reader": "spark (writer)", "tables": engine}, indent=1,
                                                ensure_ascii=False) + "\n")
    spec = {"tables": [{k: t[k] for k in ("name", "metadata", "filters", "appends", "add_files_from")
                        if k in t} for t in tables]}
    (out / "spec.json").write_text(json.dumps(spec, indent=2, ensure_ascii=False) + "\n")
    print(f"{out / 'spec.json'} ({time.monotonic() - started:.1f} s: Spark up in {spark_up - started:.1f} s, "
          f"then per table {seconds})")


if __name__ == "__main__":
    main()
