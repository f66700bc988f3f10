//! `CREATE EXTERNAL TABLE ... STORED AS ICEBERG`: the table lands in the catalog with the
//! statement's columns, partitions (transforms in the `partitioning` option, identity ones
//! in `PARTITIONED BY`), sort order, format version and properties, and takes inserts; what
//! an Iceberg table cannot be made with is refused by name and creates nothing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeSet;

use iceberg_append::Catalog;
use iceberg_append::catalog::NamespaceIdent;
use iceberg_datafusion_writer::scan::plan_files;
use iceberg_spec::{FormatVersion, NullOrder, PrimitiveType, SortDirection, Transform, Type};

mod common;

use common::*;

#[tokio::test]
async fn a_table_with_transforms_an_order_and_properties_takes_inserts() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(dir.path()).await;
    let ctx = session(catalog.clone(), 2).await;
    sql(
        &ctx,
        "CREATE EXTERNAL TABLE iceberg.db.events \
         (id BIGINT NOT NULL, ts TIMESTAMP, region VARCHAR, amount DECIMAL(10, 2)) \
         STORED AS ICEBERG LOCATION '' \
         OPTIONS ('partitioning' 'day(ts), bucket(4, id)', 'sort-order' 'ts desc', \
                  'write.metadata.previous-versions-max' '7')",
    )
    .await;

    let table = catalog.load_table(&ident("events")).await.unwrap();
    let meta = &table.metadata;
    assert_eq!(meta.format_version, FormatVersion::V2);
    let schema = meta.current_schema().unwrap();
    let id = schema.field_by_name("id").unwrap();
    assert!(id.required);
    assert_eq!(id.field_type, Type::Primitive(PrimitiveType::Long));
    let ts = schema.field_by_name("ts").unwrap();
    assert!(!ts.required);
    // DataFusion's TIMESTAMP is nanoseconds: micros before v3.
    assert_eq!(ts.field_type, Type::Primitive(PrimitiveType::Timestamp));
    let amount = schema.field_by_name("amount").unwrap();
    assert_eq!(
        amount.field_type,
        Type::Primitive(PrimitiveType::Decimal {
            precision: 10,
            scale: 2
        })
    );
    let spec = meta.default_spec().unwrap();
    let fields: Vec<(&str, Transform, i32)> = spec
        .fields()
        .iter()
        .map(|f| (f.name.as_str(), f.transform.clone(), f.source_id))
        .collect();
    assert_eq!(
        fields,
        [
            ("ts_day", Transform::Day, ts.id),
            ("id_bucket", Transform::Bucket(4), id.id)
        ]
    );
    let order = meta.default_sort_order().unwrap();
    assert_eq!(order.fields.len(), 1);
    assert_eq!(order.fields[0].source_id, ts.id);
    assert_eq!(order.fields[0].direction, SortDirection::Desc);
    assert_eq!(
        meta.properties
            .get("write.metadata.previous-versions-max")
            .map(String::as_str),
        Some("7")
    );

    // The session knows the new table at once, and writes it by its spec.
    let inserted = scalar(
        &ctx,
        "INSERT INTO iceberg.db.events VALUES \
         (1, '2024-03-01T10:00:00', 'eu', 1.50), (2, '2024-03-02T10:00:00', NULL, NULL), \
         (3, '2024-03-02T11:00:00', 'us', -0.25)",
    )
    .await;
    assert_eq!(inserted, 3);
    assert_eq!(
        scalar(
            &ctx,
            "SELECT count(*) FROM iceberg.db.events WHERE amount < 0"
        )
        .await,
        1
    );
    let table = catalog.load_table(&ident("events")).await.unwrap();
    assert_eq!(table.metadata.snapshots.len(), 1);
    let io = catalog.table_io(&table);
    let scan = plan_files(&io, "db.events", &table.metadata, &columns(&table), &[])
        .await
        .unwrap();
    let files: Vec<&str> = scan.files.iter().map(|f| f.file_path.as_str()).collect();
    let days: BTreeSet<bool> = files
        .iter()
        .map(|f| f.contains("ts_day=2024-03-01"))
        .collect();
    assert_eq!(days.len(), 2, "files of both days: {files:?}");

    // The catalog holds its tables under their own names only: no aliases.
    let events = ctx.table_provider("iceberg.db.events").await.unwrap();
    let err = ctx
        .register_table("iceberg.db.alias", events)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("db.alias") && err.contains("STORED AS ICEBERG"),
        "{err}"
    );
    let db = NamespaceIdent::parse(DB).unwrap();
    assert_eq!(catalog.list_tables(&db).await.unwrap().len(), 1);
}

#[tokio::test]
async fn partitioned_by_columns_and_with_order_make_identity_partitions_and_the_order() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(dir.path()).await;
    let ctx = session(catalog.clone(), 2).await;
    let create = "CREATE EXTERNAL TABLE iceberg.db.r (id BIGINT, \"the region\" VARCHAR, Zone INT) \
                  STORED AS ICEBERG PARTITIONED BY (\"the region\", ZONE) \
                  WITH ORDER (id DESC NULLS LAST) LOCATION '' OPTIONS ('format-version' '1')";
    sql(&ctx, create).await;
    let table = catalog.load_table(&ident("r")).await.unwrap();
    let meta = &table.metadata;
    assert_eq!(meta.format_version, FormatVersion::V1);
    let spec = meta.default_spec().unwrap();
    let fields: Vec<(&str, Transform)> = spec
        .fields()
        .iter()
        .map(|f| (f.name.as_str(), f.transform.clone()))
        .collect();
    // Unquoted names are lowercased, as DataFusion does to the columns.
    assert_eq!(
        fields,
        [
            ("the region", Transform::Identity),
            ("zone", Transform::Identity)
        ]
    );
    let order = &meta.default_sort_order().unwrap().fields;
    assert_eq!(order.len(), 1);
    assert_eq!(order[0].direction, SortDirection::Desc);
    assert_eq!(order[0].null_order, NullOrder::NullsLast);

    // Again with IF NOT EXISTS: nothing changes; without it: refused.
    let again = create.replace(
        "CREATE EXTERNAL TABLE",
        "CREATE EXTERNAL TABLE IF NOT EXISTS",
    );
    sql(&ctx, &again).await;
    let after = catalog.load_table(&ident("r")).await.unwrap();
    assert_eq!(after.metadata_location, table.metadata_location);
    let err = ctx.sql(create).await.unwrap_err().to_string();
    assert!(err.contains("already exists"), "{err}");
}

#[tokio::test]
async fn what_a_table_cannot_be_made_with_is_refused_by_name_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(dir.path()).await;
    let ctx = session(catalog.clone(), 2).await;
    let cases = [
        (
            "(id BIGINT, r VARCHAR) STORED AS ICEBERG PARTITIONED BY (r) LOCATION '' \
             OPTIONS ('partitioning' 'bucket(2, id)')",
            "not both",
        ),
        (
            "(id BIGINT, name VARCHAR) STORED AS ICEBERG LOCATION '' \
             OPTIONS ('partitioning' 'day(name)')",
            "cannot be applied to column `name`",
        ),
        (
            "(id BIGINT) STORED AS ICEBERG LOCATION '' OPTIONS ('partitioning' 'bucket(x, id)')",
            "`x` is not an integer in 1..=2147483647",
        ),
        (
            "(id BIGINT) STORED AS ICEBERG LOCATION '' OPTIONS ('colour' 'red')",
            "unknown option `colour`",
        ),
        (
            "(id BIGINT) STORED AS ICEBERG LOCATION '' \
             OPTIONS ('s3.secret-access-key' 'hunter2')",
            "names a credential",
        ),
        (
            "(id BIGINT) STORED AS ICEBERG LOCATION '' OPTIONS ('format-version' '4')",
            "not 1, 2 or 3",
        ),
        (
            "(id BIGINT DEFAULT 7) STORED AS ICEBERG LOCATION ''",
            "DEFAULT values are not supported",
        ),
        (
            "(id BIGINT) STORED AS ICEBERG WITH ORDER (id + 1) LOCATION ''",
            "WITH ORDER takes columns only",
        ),
    ];
    for (i, (rest, expected)) in cases.iter().enumerate() {
        let statement = format!("CREATE EXTERNAL TABLE iceberg.db.bad{i} {rest}");
        let err = match ctx.sql(&statement).await {
            Ok(df) => df.collect().await.unwrap_err(),
            Err(e) => e,
        };
        let message = err.to_string();
        assert!(message.contains(expected), "{statement}: {message}");
        assert!(
            message.contains(&format!("db.bad{i}")),
            "names the table: {message}"
        );
    }
    let err = ctx
        .sql("CREATE TABLE iceberg.db.mem (id BIGINT)")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("STORED AS ICEBERG"), "{err}");
    let db = NamespaceIdent::parse(DB).unwrap();
    assert!(catalog.list_tables(&db).await.unwrap().is_empty());
}
