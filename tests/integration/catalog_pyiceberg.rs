//! PyIceberg and we share one SQLite catalog file: each reads and appends to the other's
//! tables.

use std::collections::BTreeMap;
use std::path::Path;

use iceberg_append::catalog::NamespaceIdent;
use iceberg_append::{Catalog, SystemEnvironment, TableCreation, TableIdent};
use iceberg_catalog::{SqlCatalog, SqlCatalogConfig};

use crate::catalog_common::{append_ids, schema};
use crate::external;

/// Opens the catalog of `argv[1]` (warehouse dir) as PyIceberg users would.
const OPEN: &str = r#"
import json, sys
from pyiceberg.catalog.sql import SqlCatalog
wh = sys.argv[1]
cat = SqlCatalog("default", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
"#;

const LIST_AND_SCAN: &str = r#"
out = {"namespaces": [list(n) for n in cat.list_namespaces()],
       "tables": [list(t) for t in cat.list_tables("db")]}
t = cat.load_table("db.events")
rows = t.scan().to_arrow().sort_by("id").to_pylist()
out["rows"] = rows
out["snapshots"] = len(t.snapshots())
out["total"] = t.current_snapshot().summary["total-records"]
print(json.dumps(out))
"#;

const CREATE_AND_APPEND: &str = r#"
import pyarrow as pa
cat.create_namespace("py")
arrow = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])
t = cat.create_table("py.made", schema=arrow)
t.append(pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"]}, schema=arrow))
print(json.dumps({"location": t.metadata_location}))
"#;

const SCAN_MADE: &str = r#"
t = cat.load_table("py.made")
rows = t.scan().to_arrow().sort_by("id").to_pylist()
print(json.dumps({"rows": rows, "snapshots": len(t.snapshots()),
                  "total": t.current_snapshot().summary["total-records"]}))
"#;

fn py(python: &std::path::PathBuf, body: &str, warehouse: &Path) -> serde_json::Value {
    let script = format!("{OPEN}{body}");
    external::run_json(python, &script, &[&warehouse.display().to_string()])
}

#[tokio::test]
async fn catalog_pyiceberg_lists_and_scans_our_sqlite_tables() {
    let Some(python) = external::python("catalog_pyiceberg_lists_and_scans_our_sqlite_tables")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let catalog = SqlCatalog::connect(SqlCatalogConfig::local(dir.path()))
        .await
        .unwrap();
    let db = NamespaceIdent::parse("db").unwrap();
    catalog
        .create_namespace(&db, BTreeMap::new())
        .await
        .unwrap();
    let ident = TableIdent::new(db, "events");
    catalog
        .create_table(&ident, TableCreation::new("", schema()))
        .await
        .unwrap();
    let env = SystemEnvironment;
    append_ids(&catalog, &ident, 0..5, &env).await;
    append_ids(&catalog, &ident, 5..12, &env).await;
    catalog.close().await;

    let out = py(&python, LIST_AND_SCAN, dir.path());
    assert_eq!(out["namespaces"], serde_json::json!([["db"]]));
    assert_eq!(out["tables"], serde_json::json!([["db", "events"]]));
    let rows = out["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 12);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row["id"], i as i64);
        assert_eq!(row["name"], format!("n{i}"));
    }
    assert_eq!(out["snapshots"], 2);
    assert_eq!(out["total"], "12");
}

#[tokio::test]
async fn catalog_we_append_to_a_pyiceberg_table_and_pyiceberg_reads_it() {
    let Some(python) =
        external::python("catalog_we_append_to_a_pyiceberg_table_and_pyiceberg_reads_it")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // PyIceberg makes the catalog file, the namespace and the table, and appends 3 rows.
    let made = py(&python, CREATE_AND_APPEND, dir.path());
    let py_location = made["location"].as_str().unwrap().to_string();

    let catalog = SqlCatalog::connect(SqlCatalogConfig::local(dir.path()))
        .await
        .unwrap();
    let py_ns = NamespaceIdent::parse("py").unwrap();
    let ident = TableIdent::new(py_ns.clone(), "made");
    assert_eq!(
        catalog.list_tables(&py_ns).await.unwrap(),
        std::slice::from_ref(&ident)
    );
    let table = catalog.load_table(&ident).await.unwrap();
    assert_eq!(
        table.metadata_location.as_deref(),
        Some(py_location.as_str())
    );
    let done = append_ids(&catalog, &ident, 10..14, &SystemEnvironment).await;
    assert_eq!(done.attempts, 1);
    catalog.close().await;

    let out = py(&python, SCAN_MADE, dir.path());
    let ids: Vec<i64> = out["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [1, 2, 3, 10, 11, 12, 13]);
    assert_eq!(out["rows"][3]["name"], "n10");
    assert_eq!(out["snapshots"], 2);
    assert_eq!(out["total"], "7");
}
