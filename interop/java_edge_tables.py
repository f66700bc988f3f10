"""The Java tables that exercise our merge append's edges (make_java_tables.py makes them).

Each function takes the SparkSession (catalog "x") and returns the table's spec entry: its
filters, and `appends`, the modes foreign_appends.py appends with (fast, then merge twice, so
that our second merge also folds a manifest our first one wrote). Every table has
`commit.manifest.min-count-to-merge` = 2 by the time we append, so our merge really folds.

  java_v2_mor       v2, days(ts); three inserts, then merge-on-read DELETE, UPDATE, DELETE
                    (position delete files in two delete manifests next to three data manifests)
  java_v3_dv        v3, bucket(2, id); merge-on-read DELETE, UPDATE, DELETE: deletion vectors
                    in Puffin files (one replaced by a merged DV); Java merges from the start
  java_v1_upgraded  v1 whose inserts Java itself merges (EXISTING entries, no sequence
                    numbers), one more v1 manifest, then upgraded to v2 by Java and a
                    merge-on-read DELETE (position deletes at sequence number 1 onto data
                    files of sequence number 0, which our merge must keep)
  java_v2_names     partition fields whose names are not Avro names, which Java sanitizes
                    (event_x2Dtime_day): days(`event-time`), `user id`, s.a (a struct
                    field), `1col`
  java_v2_names_unicode  identity(`café`): Java keeps non-ASCII letters in Avro names
  java_v2_uuid      made through the Java API (Spark SQL has no uuid type): identity(u) +
                    bucket(4, u2), uuids in all four sign classes (top bits of bytes 0 and 8)
  java_v2_uuid_days days(ts) with uuid columns u, v outside the spec: our appended files mix
                    sign classes in one file (Parquet stats); Java's files hold one class each
  java_v2_uuid_compact  identity(u), three small files in a uuid of each of two sign classes;
                    our `compact` rewrites both at once, one manifest per class for Java's order
  java_v2_gzip      write.metadata.compression-codec=gzip: Java's versions are
                    v<N>.gz.metadata.json, which our object-store catalog reads and commits past
  java_v2_spill     identity(id) with write.max-open-files=1 and a 1-byte spill budget (our
                    properties; Java ignores them): each of our appends spans three partitions,
                    so two go through our writer's spill and its local run files
  java_v2_evolved   Java evolves the schema (column added, renamed, widened, dropped) and the
                    spec (bucket(4, id) added, days(ts) dropped) between its inserts: files
                    under three specs and two schemas before our appends
  java_v1_evolved   the same in v1, where Java keeps the dropped days(ts) as a void field
  java_v2_rewrite,  v2 and v3, days(ts); merge-on-read DELETE and UPDATE (position deletes,
  java_v3_rewrite   deletion vectors) over several data manifests; after our fast append, our
                    `rewrite-manifests` folds the data manifests, keeping sequence numbers,
                    so the deletes still apply; then another fast append
  java_v2_compact   identity(region): five small files in `eu` and in `us`, a position delete
                    in `us`; after our fast append, our `compact` rewrites `eu` into one file
                    and leaves `us` alone; then another fast append
  java_v2_expire    days(ts); copy-on-write DELETE and UPDATE rewrite data files; after our
                    fast and merge appends, our `expire` keeps the last two snapshots and
                    deletes what only the expired ones reached
  java_v2_widened   identity(qty), qty widened int -> long by Java between inserts, then the
                    field dropped: our merge folds manifests of int and long values (written
                    as longs); our `compact` takes the old spec's four small files of four
                    partitions as one group and writes them in the current spec
  java_v2_dropped_source  bucket(4, k) dropped from the spec, then the column k: our
                    `rewrite-manifests` folds the old spec's manifests, written with the
                    newest schema that still has k; then our merge and a fast append
  java_v1_void_dropped  v1, days(ts) dropped from the spec (a void field), bucket(2, id) added,
                    then the column ts dropped: Java types the void field `unknown` (an Avro
                    null in manifests) and cannot write to the table any more (no accessor for
                    ts); our fast append writes it, our merges fold Java's manifest of that
                    spec (the void field typed timestamp, all null) with ours
  java_v2_bloom     bloom filters on id, name and tags.element, no Parquet statistics for qty
                    (Java's per-column Parquet properties), five one-row inserts: Java tests
                    each row group's bloom filter for `id = ...` and `name = ...`, so a filter
                    of ours that hashed a value otherwise would hide rows; after our fast
                    append our `compact` rewrites Java's files and ours into one, then a merge
  java_v2_added     identity(region) + days(ts), with nested columns; after our fast append,
                    our `add-files` registers in place the data files Spark wrote for a second
                    table of the same definition, java_v2_added_src (field ids in their
                    Parquet schema, the same ids as the target's): partitions inferred from
                    the files' statistics, nothing copied
"""

# uuids by sign class (top bit of byte 0, top bit of byte 8): unsigned bytes and Java 1.10's
# two signed longs order them differently
UUIDS = {
    0: ["00000000-0000-0000-0000-000000000001", "7fffffff-ffff-ffff-7fff-ffffffffffff"],
    1: ["12345678-1234-1234-9234-123456789abc"],
    2: ["80000000-0000-0000-0000-000000000000", "a1b2c3d4-0000-4000-0000-000000000001"],
    3: ["ffffffff-ffff-ffff-ffff-ffffffffffff", "c0ffee00-0000-4000-8000-000000000000"],
}
ALL_UUIDS = [u for us in UUIDS.values() for u in us]
MERGE_TWICE = ["fast", "merge", "merge"]
MOR = "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read'"


def _props(sql, table: str, props: str) -> None:
    sql(f"ALTER TABLE x.db.{table} SET TBLPROPERTIES ({props})")


def v2_mor(spark) -> dict:
    sql = spark.sql
    sql(f"""CREATE TABLE x.db.java_v2_mor (id BIGINT, ts TIMESTAMP, name STRING, qty INT)
           USING iceberg PARTITIONED BY (days(ts)) TBLPROPERTIES ('format-version'='2', {MOR})""")
    sql("""INSERT INTO x.db.java_v2_mor VALUES (1, TIMESTAMP'2024-03-01 01:00:00', 'a', 1),
           (2, TIMESTAMP'2024-03-01 02:00:00', 'b', 2), (3, TIMESTAMP'2024-03-02 00:00:00', 'c', NULL)""")
    sql("""INSERT INTO x.db.java_v2_mor VALUES (4, TIMESTAMP'2024-03-01 05:00:00', 'd', 4),
           (5, NULL, 'e', 5), (6, TIMESTAMP'2024-03-03 00:00:00', NULL, 6)""")
    sql("""INSERT INTO x.db.java_v2_mor VALUES (7, TIMESTAMP'2024-03-02 07:00:00', 'g', 7),
           (8, TIMESTAMP'2024-03-01 08:00:00', 'h', 8)""")
    sql("DELETE FROM x.db.java_v2_mor WHERE id IN (2, 7)")
    sql("UPDATE x.db.java_v2_mor SET qty = qty * 10 WHERE id IN (1, 5)")
    sql("DELETE FROM x.db.java_v2_mor WHERE name = 'd'")
    # only now: Java's own commits leave several data and delete manifests for our merge
    _props(sql, "java_v2_mor", "'commit.manifest.min-count-to-merge'='2'")
    return {"name": "java_v2_mor", "appends": MERGE_TWICE, "filters": {
        "id_in": {"op": "in", "col": "id", "values": [1, 2, 4, 5, 7]},
        "qty_gt_5": {"op": ">", "col": "qty", "value": 5},
        "ts_ge_mar2": {"op": ">=", "col": "ts", "value": "2024-03-02T00:00:00.000000+00:00"},
        "name_null": {"op": "is_null", "col": "name"},
    }}


def v3_dv(spark) -> dict:
    sql = spark.sql
    sql(f"""CREATE TABLE x.db.java_v3_dv (id BIGINT, dt DATE, v STRING)
           USING iceberg PARTITIONED BY (bucket(2, id))
           TBLPROPERTIES ('format-version'='3', {MOR}, 'commit.manifest.min-count-to-merge'='2')""")
    sql("""INSERT INTO x.db.java_v3_dv VALUES (1, DATE'2024-01-01', 'a'), (2, DATE'2024-01-02', 'b'),
           (3, NULL, 'c'), (4, DATE'2024-01-04', NULL)""")
    sql("INSERT INTO x.db.java_v3_dv VALUES (5, DATE'2024-02-01', 'e'), (6, DATE'2024-02-02', 'f'), (7, NULL, NULL)")
    sql("DELETE FROM x.db.java_v3_dv WHERE id = 2 OR id = 6")
    sql("UPDATE x.db.java_v3_dv SET v = 'u' WHERE id = 3")
    sql("DELETE FROM x.db.java_v3_dv WHERE id = 4")  # a second DV for a file: Java merges the two
    return {"name": "java_v3_dv", "appends": MERGE_TWICE, "filters": {
        "id_le_4": {"op": "<=", "col": "id", "value": 4},
        "v_in": {"op": "in", "col": "v", "values": ["b", "u", "e"]},
        "dt_null": {"op": "is_null", "col": "dt"},
    }}


def v1_upgraded(spark) -> dict:
    sql = spark.sql
    sql("""CREATE TABLE x.db.java_v1_upgraded (id BIGINT, category STRING, amount DECIMAL(9,2))
           USING iceberg PARTITIONED BY (category)
           TBLPROPERTIES ('format-version'='1', 'commit.manifest.min-count-to-merge'='2')""")
    sql("INSERT INTO x.db.java_v1_upgraded VALUES (1, 'a', 1.00), (2, 'a', 2.00), (3, 'b', 3.00)")
    sql("INSERT INTO x.db.java_v1_upgraded VALUES (4, 'a', 4.00)")
    sql("INSERT INTO x.db.java_v1_upgraded VALUES (5, 'c', NULL), (6, NULL, 6.00)")  # Java merged each time
    _props(sql, "java_v1_upgraded", "'commit.manifest.min-count-to-merge'='100'")
    sql("INSERT INTO x.db.java_v1_upgraded VALUES (7, 'b', 7.00), (8, 'b', -8.25), (9, 'a', 9.00)")  # 2nd manifest
    _props(sql, "java_v1_upgraded", f"'format-version'='2', {MOR}")
    # one row of a two-row file each: position deletes (a whole file would be dropped instead)
    sql("DELETE FROM x.db.java_v1_upgraded WHERE id IN (2, 8)")
    _props(sql, "java_v1_upgraded", "'commit.manifest.min-count-to-merge'='2'")
    return {"name": "java_v1_upgraded", "appends": MERGE_TWICE, "filters": {
        "category_a": {"op": "=", "col": "category", "value": "a"},
        "amount_lt_4": {"op": "<", "col": "amount", "value": "4.00"},
        "id_not_in": {"op": "and", "args": [{"op": "not_null", "col": "id"},
                                             {"op": "not_in", "col": "id", "values": [2, 3, 4]}]},
    }}


def v2_names(spark) -> dict:
    # s is NOT NULL: Java reads a null struct whose field is an identity partition source as a
    # struct of nulls (the partition value stands in for the field), PyIceberg as null
    sql = spark.sql
    sql("""CREATE TABLE x.db.java_v2_names (id BIGINT, `event-time` TIMESTAMP, `user id` STRING,
           s STRUCT<a: INT, b: STRING> NOT NULL, `1col` INT)
           USING iceberg PARTITIONED BY (days(`event-time`), `user id`, s.a, `1col`)
           TBLPROPERTIES ('format-version'='2', 'commit.manifest.min-count-to-merge'='2')""")
    sql("""INSERT INTO x.db.java_v2_names VALUES
           (1, TIMESTAMP'2024-05-01 10:00:00', 'ann lee', named_struct('a', 1, 'b', 'x'), 1),
           (2, TIMESTAMP'2024-05-02 00:00:00', 'bob', named_struct('a', 2, 'b', NULL), 2)""")
    sql("""INSERT INTO x.db.java_v2_names VALUES (3, NULL, NULL, named_struct('a', NULL, 'b', NULL), NULL),
           (4, TIMESTAMP'2024-05-01 23:59:59', 'ann lee', named_struct('a', NULL, 'b', 'y'), 1)""")
    return {"name": "java_v2_names", "appends": MERGE_TWICE, "filters": {
        "event_time_ge": {"op": ">=", "col": "event-time", "value": "2024-05-01T12:00:00.000000+00:00"},
        "user_id_eq": {"op": "=", "col": "user id", "value": "ann lee"},
        "s_a_eq_1": {"op": "=", "col": "s.a", "value": 1},
        "1col_lt_2": {"op": "<", "col": "1col", "value": 2},
    }}


def v2_names_unicode(spark) -> dict:
    # Java keeps `café` as the Avro name (its validAvroName takes any Character.isLetter)
    sql = spark.sql
    sql("""CREATE TABLE x.db.java_v2_names_unicode (id BIGINT, `café` STRING) USING iceberg
           PARTITIONED BY (`café`) TBLPROPERTIES ('format-version'='2', 'commit.manifest.min-count-to-merge'='2')""")
    sql("INSERT INTO x.db.java_v2_names_unicode VALUES (1, 'crème'), (2, NULL)")
    sql("INSERT INTO x.db.java_v2_names_unicode VALUES (3, 'naïve'), (4, 'crème')")
    return {"name": "java_v2_names_unicode", "appends": MERGE_TWICE, "filters": {
        "cafe_eq": {"op": "=", "col": "café", "value": "crème"}}}


def _create_uuid_table(spark, name: str, columns: list, partition, props: dict) -> None:
    """Creates x.db.<name> through the Spark catalog's Iceberg catalog (Java API over py4j):
    columns are (name, type) pairs, "long"/"string"/"uuid"/"timestamptz", all optional;
    partition(builder) adds the spec's fields."""
    jvm = spark._jvm
    types = jvm.org.apache.iceberg.types.Types
    prim = {"long": types.LongType.get(), "string": types.StringType.get(), "uuid": types.UUIDType.get(),
            "timestamptz": types.TimestampType.withZone()}
    fields = jvm.java.util.ArrayList()
    for i, (col, typ) in enumerate(columns, start=1):
        fields.add(types.NestedField.optional(i, col, prim[typ]))
    schema = jvm.org.apache.iceberg.Schema(fields)
    spec = partition(jvm.org.apache.iceberg.PartitionSpec.builderFor(schema)).build()
    jprops = jvm.java.util.HashMap()
    for k, v in props.items():
        jprops.put(k, v)
    catalog = spark._jsparkSession.sessionState().catalogManager().catalog("x").icebergCatalog()
    catalog.createTable(jvm.org.apache.iceberg.catalog.TableIdentifier.parse(f"db.{name}"), schema, spec, jprops)


def _uuid_filters(cols: list[str]) -> dict:
    return {f"{c}_eq_{i}": {"op": "=", "col": c, "value": u} for c in cols for i, u in enumerate(ALL_UUIDS)}


def v2_uuid(spark) -> dict:
    _create_uuid_table(spark, "java_v2_uuid", [("id", "long"), ("u", "uuid"), ("u2", "uuid"), ("name", "string")],
                       lambda b: b.identity("u").bucket("u2", 4),
                       {"format-version": "2", "commit.manifest.min-count-to-merge": "2"})
    # u: all classes in each insert (manifest summaries across classes); u2: one class per
    # insert, so that no file of Java's holds two classes (see v2_uuid_days)
    for n, cls in enumerate((0, 3, 1, 2)):
        rows = [f"({10 * n + i}, '{u}', '{UUIDS[cls][i % len(UUIDS[cls])]}', 'r{n}{i}')"
                for i, u in enumerate(ALL_UUIDS[n::2][:3])]
        if n == 0:
            rows.append("(99, NULL, NULL, NULL)")
        spark.sql(f"INSERT INTO x.db.java_v2_uuid VALUES {', '.join(rows)}")
    return {"name": "java_v2_uuid", "appends": MERGE_TWICE, "filters": {
        **_uuid_filters(["u", "u2"]), "u_null": {"op": "is_null", "col": "u"}}}


def v2_uuid_days(spark) -> dict:
    _create_uuid_table(spark, "java_v2_uuid_days", [("id", "long"), ("ts", "timestamptz"), ("u", "uuid"),
                                                     ("v", "uuid")],
                       lambda b: b.day("ts"), {"format-version": "2", "commit.manifest.min-count-to-merge": "2"})
    for cls, us in UUIDS.items():  # one insert and one day (so one file) per sign class
        rows = [f"({10 * cls + i}, TIMESTAMP'2024-03-0{1 + cls} 0{i}:00:00', '{u}', '{us[-1 - i]}')"
                for i, u in enumerate(us)]
        spark.sql(f"INSERT INTO x.db.java_v2_uuid_days VALUES {', '.join(rows)}")
    spark.sql("INSERT INTO x.db.java_v2_uuid_days VALUES (99, NULL, NULL, NULL)")
    return {"name": "java_v2_uuid_days", "appends": MERGE_TWICE, "filters": _uuid_filters(["u", "v"])}


def v2_uuid_compact(spark) -> dict:
    # identity(u): three one-row inserts into a uuid of sign class 0, three into one of class 2
    # (each of Java's manifests holds one partition); our `compact` rewrites both partitions
    # in one commit, and its new files must land in one manifest per class: one spanning both
    # would have bounds Java's signed order reads as empty, and Java's `u = ...` would miss them
    _create_uuid_table(spark, "java_v2_uuid_compact", [("id", "long"), ("u", "uuid")],
                       lambda b: b.identity("u"), {"format-version": "2"})
    for n, u in enumerate([UUIDS[0][0]] * 3 + [UUIDS[2][0]] * 3):
        spark.sql(f"INSERT INTO x.db.java_v2_uuid_compact VALUES ({n}, '{u}')")
    return {"name": "java_v2_uuid_compact", "appends": ["compact", "fast"], "filters": {
        **_uuid_filters(["u"]), "id_gt_2": {"op": ">", "col": "id", "value": 2}}}


def v2_gzip(spark) -> dict:
    # Java writes v<N>.gz.metadata.json: our object-store catalog must find, read and commit
    # past them, and take their names as taken
    sql = spark.sql
    sql("""CREATE TABLE x.db.java_v2_gzip (id BIGINT, name STRING) USING iceberg PARTITIONED BY (name)
           TBLPROPERTIES ('format-version'='2', 'write.metadata.compression-codec'='gzip',
                          'commit.manifest.min-count-to-merge'='2')""")
    sql("INSERT INTO x.db.java_v2_gzip VALUES (1, 'a'), (2, 'b')")
    sql("INSERT INTO x.db.java_v2_gzip VALUES (3, 'a'), (4, NULL)")
    return {"name": "java_v2_gzip", "appends": MERGE_TWICE, "filters": {
        "name_eq_a": {"op": "=", "col": "name", "value": "a"}}}


def v2_spill(spark) -> dict:
    # our writer keeps one file open and spills the other partitions of each append (three
    # distinct ids, one of them null) through a run file, writing each once at the end
    sql = spark.sql
    sql("""CREATE TABLE x.db.java_v2_spill (id BIGINT, name STRING) USING iceberg PARTITIONED BY (id)
           TBLPROPERTIES ('format-version'='2', 'write.max-open-files'='1',
                          'write.spill.buffer-size-bytes'='1', 'commit.manifest.min-count-to-merge'='2')""")
    sql("INSERT INTO x.db.java_v2_spill VALUES (1, 'a'), (2, 'b'), (NULL, 'c')")
    return {"name": "java_v2_spill", "appends": MERGE_TWICE, "filters": {
        "id_eq_1": {"op": "=", "col": "id", "value": 1},
        "id_null": {"op": "is_null", "col": "id"}}}


def _evolved(spark, name: str, version: int) -> dict:
    # Java evolves schema and spec between its inserts: a column added, one renamed, an int
    # widened to long, one dropped; bucket(4, id) added and days(ts) dropped (v1: a void
    # field in its place). Our appends write with the current schema and spec, our merges fold
    # manifests of each spec apart
    sql = spark.sql
    sql(f"""CREATE TABLE x.db.{name} (id BIGINT, ts TIMESTAMP, name STRING, qty INT, junk STRING)
           USING iceberg PARTITIONED BY (days(ts))
           TBLPROPERTIES ('format-version'='{version}', 'commit.manifest.min-count-to-merge'='2')""")
    sql(f"""INSERT INTO x.db.{name} VALUES (1, TIMESTAMP'2024-03-01 01:00:00', 'a', 1, 'x'),
           (2, TIMESTAMP'2024-03-02 02:00:00', NULL, 2, 'y')""")
    sql(f"ALTER TABLE x.db.{name} ADD COLUMN note STRING")
    sql(f"ALTER TABLE x.db.{name} RENAME COLUMN name TO label")
    sql(f"ALTER TABLE x.db.{name} ALTER COLUMN qty TYPE BIGINT")
    sql(f"ALTER TABLE x.db.{name} DROP COLUMN junk")
    sql(f"ALTER TABLE x.db.{name} ADD PARTITION FIELD bucket(4, id)")
    sql(f"""INSERT INTO x.db.{name} VALUES (3, TIMESTAMP'2024-03-01 03:00:00', 'c', 8000000000, 'n3'),
           (4, NULL, 'd', NULL, NULL)""")
    sql(f"ALTER TABLE x.db.{name} DROP PARTITION FIELD days(ts)")
    sql(f"INSERT INTO x.db.{name} VALUES (5, TIMESTAMP'2024-03-03 05:00:00', 'e', 5, 'n5')")
    return {"name": name, "appends": MERGE_TWICE, "filters": {
        "ts_lt_mar2": {"op": "<", "col": "ts", "value": "2024-03-02T00:00:00.000000+00:00"},
        "id_eq_3": {"op": "=", "col": "id", "value": 3},
        "qty_gt_4": {"op": ">", "col": "qty", "value": 4},
        "note_null": {"op": "is_null", "col": "note"}}}


def v2_evolved(spark) -> dict:
    return _evolved(spark, "java_v2_evolved", 2)


def v1_evolved(spark) -> dict:
    return _evolved(spark, "java_v1_evolved", 1)


def _rewritten(spark, name: str, version: int) -> dict:
    # merge-on-read deletes (position deletes in v2, deletion vectors in v3) on files of
    # several data manifests: after our fast append, our `rewrite-manifests` folds the data
    # manifests into one, keeping each entry's data sequence number, so Java's deletes must
    # still apply to exactly the rows they did (and v3 row ids stay)
    sql = spark.sql
    sql(f"""CREATE TABLE x.db.{name} (id BIGINT, ts TIMESTAMP, name STRING) USING iceberg
           PARTITIONED BY (days(ts)) TBLPROPERTIES ('format-version'='{version}', {MOR})""")
    sql(f"""INSERT INTO x.db.{name} VALUES (1, TIMESTAMP'2024-03-01 01:00:00', 'a'),
           (2, TIMESTAMP'2024-03-01 02:00:00', 'b'), (3, TIMESTAMP'2024-03-02 00:00:00', NULL)""")
    sql(f"""INSERT INTO x.db.{name} VALUES (4, TIMESTAMP'2024-03-02 05:00:00', 'd'),
           (5, NULL, 'e'), (6, TIMESTAMP'2024-03-01 06:00:00', 'f')""")
    sql(f"DELETE FROM x.db.{name} WHERE id IN (2, 4)")
    sql(f"UPDATE x.db.{name} SET name = 'ff' WHERE id = 6")
    sql(f"INSERT INTO x.db.{name} VALUES (7, TIMESTAMP'2024-03-03 07:00:00', 'g')")
    return {"name": name, "appends": ["fast", "rewrite-manifests", "fast"], "filters": {
        "ts_lt_mar2": {"op": "<", "col": "ts", "value": "2024-03-02T00:00:00.000000+00:00"},
        "name_eq_ff": {"op": "=", "col": "name", "value": "ff"},
        "id_in": {"op": "in", "col": "id", "values": [2, 4, 6, 7]}}}


def v2_compact(spark) -> dict:
    # five inserts of one row into `eu` and two into `us`, then a merge-on-read DELETE of one
    # row in `us` (a position delete):
    # our `compact` rewrites Java's five `eu` files into one (with the starting snapshot's
    # data sequence number) and leaves `us` alone (a position delete applies there)
    sql = spark.sql
    sql(f"""CREATE TABLE x.db.java_v2_compact (id BIGINT, region STRING, ts TIMESTAMP) USING iceberg
           PARTITIONED BY (region) TBLPROPERTIES ('format-version'='2', {MOR})""")
    for i in range(5):
        sql(f"""INSERT INTO x.db.java_v2_compact VALUES ({i}, 'eu', TIMESTAMP'2024-03-01 0{i}:00:00'),
               ({100 + i}, 'us', TIMESTAMP'2024-03-02 0{i}:00:00'),
               ({200 + i}, 'us', TIMESTAMP'2024-03-02 1{i}:00:00')""")
    sql("DELETE FROM x.db.java_v2_compact WHERE id = 102")
    return {"name": "java_v2_compact", "appends": ["fast", "compact", "fast"], "filters": {
        "region_eu": {"op": "=", "col": "region", "value": "eu"},
        "id_gt_2": {"op": ">", "col": "id", "value": 2},
        "ts_lt_mar2": {"op": "<", "col": "ts", "value": "2024-03-02T00:00:00.000000+00:00"}}}


def v2_rewrite(spark) -> dict:
    return _rewritten(spark, "java_v2_rewrite", 2)


def v3_rewrite(spark) -> dict:
    return _rewritten(spark, "java_v3_rewrite", 3)


def v2_expire(spark) -> dict:
    # copy-on-write DELETE and UPDATE (Java's default) rewrite data files: once the snapshots
    # before them expire, the old data files, manifests and lists are reachable from nothing
    # kept, so our expiry (retain-last 2, after our fast and merge appends) deletes them; the
    # states whose head it expired leave the run, the others must read as before
    sql = spark.sql
    sql("""CREATE TABLE x.db.java_v2_expire (id BIGINT, ts TIMESTAMP, name STRING) USING iceberg
           PARTITIONED BY (days(ts)) TBLPROPERTIES ('format-version'='2',
           'commit.manifest.min-count-to-merge'='2')""")
    sql("""INSERT INTO x.db.java_v2_expire VALUES (1, TIMESTAMP'2024-03-01 01:00:00', 'a'),
           (2, TIMESTAMP'2024-03-01 02:00:00', 'b'), (3, TIMESTAMP'2024-03-02 00:00:00', NULL)""")
    sql("""INSERT INTO x.db.java_v2_expire VALUES (4, TIMESTAMP'2024-03-02 05:00:00', 'd'),
           (5, NULL, 'e')""")
    sql("DELETE FROM x.db.java_v2_expire WHERE id = 2")
    sql("UPDATE x.db.java_v2_expire SET name = 'dd' WHERE id = 4")
    return {"name": "java_v2_expire", "appends": ["fast", "merge", "expire"], "filters": {
        "ts_lt_mar2": {"op": "<", "col": "ts", "value": "2024-03-02T00:00:00.000000+00:00"},
        "name_eq_dd": {"op": "=", "col": "name", "value": "dd"},
        "id_gt_3": {"op": ">", "col": "id", "value": 3}}}


def v2_widened(spark) -> dict:
    # identity(qty) with qty an int, widened to long by Java after three inserts: manifests
    # of int and of long partition values, then the field dropped (an unpartitioned spec 1).
    # Our merge folds the int and long manifests of spec 0 (written as longs), and our
    # `compact` takes the four small spec-0 files of four partitions as one group (Java's
    # bin-pack planner), written in the current spec
    sql = spark.sql
    sql("""CREATE TABLE x.db.java_v2_widened (id BIGINT, qty INT, name STRING) USING iceberg
           PARTITIONED BY (qty) TBLPROPERTIES ('format-version'='2',
           'commit.manifest-merge.enabled'='false')""")
    for i, name in ((1, "'a'"), (2, "NULL"), (3, "'c'")):
        sql(f"INSERT INTO x.db.java_v2_widened VALUES ({i}, {i}, {name})")
    sql("ALTER TABLE x.db.java_v2_widened ALTER COLUMN qty TYPE BIGINT")
    sql("INSERT INTO x.db.java_v2_widened VALUES (4, 8000000000, 'd')")
    sql("ALTER TABLE x.db.java_v2_widened DROP PARTITION FIELD qty")
    sql("INSERT INTO x.db.java_v2_widened VALUES (5, 5, 'e')")
    # Java's inserts kept a manifest each; ours merge from two on
    _props(sql, "java_v2_widened", "'commit.manifest-merge.enabled'='true', "
                                   "'commit.manifest.min-count-to-merge'='2'")
    return {"name": "java_v2_widened", "appends": ["merge", "compact", "fast"], "filters": {
        "qty_gt_2": {"op": ">", "col": "qty", "value": 2},
        "qty_eq_big": {"op": "=", "col": "qty", "value": 8000000000},
        "name_null": {"op": "is_null", "col": "name"}}}


def v2_dropped_source(spark) -> dict:
    # bucket(4, k) dropped from the spec, then its source column k dropped (Java keeps the
    # old spec): our manifest rewrite folds the old spec's two manifests, whose source is
    # only in an older schema (each header must still bind its spec), then our merge folds
    # the current spec's
    sql = spark.sql
    sql("""CREATE TABLE x.db.java_v2_dropped_source (id BIGINT, k INT, name STRING) USING iceberg
           PARTITIONED BY (bucket(4, k)) TBLPROPERTIES ('format-version'='2',
           'commit.manifest-merge.enabled'='false')""")
    sql("INSERT INTO x.db.java_v2_dropped_source VALUES (1, 10, 'a'), (2, 11, NULL)")
    sql("INSERT INTO x.db.java_v2_dropped_source VALUES (3, 12, 'c')")
    sql("ALTER TABLE x.db.java_v2_dropped_source DROP PARTITION FIELD bucket(4, k)")
    sql("ALTER TABLE x.db.java_v2_dropped_source DROP COLUMN k")
    sql("INSERT INTO x.db.java_v2_dropped_source VALUES (4, 'd')")
    _props(sql, "java_v2_dropped_source", "'commit.manifest-merge.enabled'='true', "
                                          "'commit.manifest.min-count-to-merge'='2'")
    return {"name": "java_v2_dropped_source", "appends": ["rewrite-manifests", "merge", "fast"],
            "filters": {
                "id_gt_2": {"op": ">", "col": "id", "value": 2},
                "name_null": {"op": "is_null", "col": "name"}}}


def v1_void_dropped(spark) -> dict:
    sql = spark.sql
    sql("""CREATE TABLE x.db.java_v1_void_dropped (id BIGINT, ts TIMESTAMP, name STRING) USING iceberg
           PARTITIONED BY (days(ts)) TBLPROPERTIES ('format-version'='1',
           'commit.manifest-merge.enabled'='false')""")
    sql("""INSERT INTO x.db.java_v1_void_dropped VALUES (1, TIMESTAMP'2024-03-01 01:00:00', 'a'),
           (2, TIMESTAMP'2024-03-02 02:00:00', NULL)""")
    sql("ALTER TABLE x.db.java_v1_void_dropped DROP PARTITION FIELD days(ts)")
    sql("ALTER TABLE x.db.java_v1_void_dropped ADD PARTITION FIELD bucket(2, id)")
    sql("INSERT INTO x.db.java_v1_void_dropped VALUES (3, TIMESTAMP'2024-03-01 03:00:00', 'c')")
    sql("ALTER TABLE x.db.java_v1_void_dropped DROP COLUMN ts")
    _props(sql, "java_v1_void_dropped", "'commit.manifest-merge.enabled'='true', "
                                        "'commit.manifest.min-count-to-merge'='2'")
    return {"name": "java_v1_void_dropped", "appends": MERGE_TWICE,
            "filters": {
                "id_gt_2": {"op": ">", "col": "id", "value": 2},
                "name_null": {"op": "is_null", "col": "name"}}}


def v2_bloom(spark) -> dict:
    sql = spark.sql
    sql("""CREATE TABLE x.db.java_v2_bloom (id BIGINT, name STRING, tags ARRAY<STRING>, qty INT)
           USING iceberg TBLPROPERTIES ('format-version'='2',
             'write.parquet.bloom-filter-enabled.column.id'='true',
             'write.parquet.bloom-filter-enabled.column.name'='true',
             'write.parquet.bloom-filter-fpp.column.name'='0.05',
             'write.parquet.bloom-filter-enabled.column.tags.element'='true',
             'write.parquet.stats-enabled.column.qty'='false',
             'commit.manifest.min-count-to-merge'='2')""")
    for i in range(5):
        sql(f"INSERT INTO x.db.java_v2_bloom VALUES ({i}, 'j{i}', array('t{i}'), {10 * i})")
    return {"name": "java_v2_bloom", "appends": ["fast", "compact", "merge"], "filters": {
        # ours (the fast append's, the merge's: rows 1001 and 3002 are the null rows), Java's
        # (in our compacted file after `compact`), and one no file holds
        "id_eq_1000": {"op": "=", "col": "id", "value": 1000},
        "id_eq_3000": {"op": "=", "col": "id", "value": 3000},
        "id_eq_3": {"op": "=", "col": "id", "value": 3},
        "id_eq_absent": {"op": "=", "col": "id", "value": 500},
        "name_eq_ours": {"op": "=", "col": "name", "value": "n1000-ü"},
        "name_eq_java": {"op": "=", "col": "name", "value": "j4"},
        "qty_eq_1002": {"op": "=", "col": "qty", "value": 1002}}}


ADDED_DDL = """(id BIGINT, region STRING, ts TIMESTAMP, amount DECIMAL(10,2), tags ARRAY<STRING>,
    attrs MAP<STRING, INT>, s STRUCT<a: INT, b: STRING>) USING iceberg PARTITIONED BY (region, days(ts))
    TBLPROPERTIES ('format-version'='2')"""


def v2_added(spark) -> dict:
    # the files to add: Spark's, for a table made by the same DDL (so the same field ids), one
    # file per partition (local[1], one task), a null region and a null ts among them
    sql = spark.sql
    for name in ("java_v2_added", "java_v2_added_src"):
        sql(f"DROP TABLE IF EXISTS x.db.{name} PURGE")
        sql(f"CREATE TABLE x.db.{name} {ADDED_DDL}")
    sql("""INSERT INTO x.db.java_v2_added VALUES
        (1, 'eu', TIMESTAMP'2024-03-01 01:00:00', 1.50, array('a'), map('k', 1), named_struct('a', 1, 'b', 'x'))""")
    sql("""INSERT INTO x.db.java_v2_added_src VALUES
        (101, 'eu', TIMESTAMP'2024-03-01 08:00:00', 10.25, array('b', NULL), map('k', 2, 'l', NULL), named_struct('a', 2, 'b', NULL)),
        (102, 'eu', TIMESTAMP'2024-03-01 09:30:00.000001', NULL, NULL, NULL, NULL),
        (103, 'us', TIMESTAMP'2024-03-02 23:59:59.999999', -3.00, array(), map(), named_struct('a', NULL, 'b', 'y')),
        (104, NULL, TIMESTAMP'2024-03-02 00:00:00', 0.01, array('c'), map('z', 3), named_struct('a', 4, 'b', 'z')),
        (105, 'us', NULL, 99999999.99, array('d', 'e'), map('q', 4), named_struct('a', 5, 'b', 'w'))""")
    sql("INSERT INTO x.db.java_v2_added_src VALUES (106, 'eu', TIMESTAMP'2024-03-01 12:00:00', 7.00, NULL, NULL, NULL)")
    return {"name": "java_v2_added", "appends": ["fast", "add-files"], "add_files_from": "java_v2_added_src",
            "filters": {
                "region_eq_us": {"op": "=", "col": "region", "value": "us"},
                "region_null": {"op": "is_null", "col": "region"},
                "ts_lt_mar2": {"op": "<", "col": "ts", "value": "2024-03-02T00:00:00.000000+00:00"},
                "id_gt_102": {"op": ">", "col": "id", "value": 102}}}


TABLES = (("java_v2_mor", v2_mor), ("java_v3_dv", v3_dv), ("java_v1_upgraded", v1_upgraded),
          ("java_v2_names", v2_names), ("java_v2_names_unicode", v2_names_unicode),
          ("java_v2_uuid", v2_uuid), ("java_v2_uuid_days", v2_uuid_days),
          ("java_v2_uuid_compact", v2_uuid_compact), ("java_v2_gzip", v2_gzip),
          ("java_v2_spill", v2_spill), ("java_v2_evolved", v2_evolved), ("java_v1_evolved", v1_evolved),
          ("java_v2_added", v2_added), ("java_v2_bloom", v2_bloom), ("java_v2_expire", v2_expire),
          ("java_v2_rewrite", v2_rewrite), ("java_v3_rewrite", v3_rewrite),
          ("java_v2_compact", v2_compact), ("java_v2_widened", v2_widened),
          ("java_v2_dropped_source", v2_dropped_source), ("java_v1_void_dropped", v1_void_dropped))
