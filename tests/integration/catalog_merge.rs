//! Merge append through a real catalog: the manifests a commit lists must survive it.

use std::collections::BTreeMap;

use iceberg_append::catalog::NamespaceIdent;
use iceberg_append::{Catalog, SystemEnvironment, TableCreation, TableIdent};
use iceberg_catalog::{SqlCatalog, SqlCatalogConfig};
use iceberg_spec::properties::MANIFEST_MIN_MERGE_COUNT;

use crate::catalog_common::{append_ids, schema};

#[tokio::test]
async fn catalog_merged_manifests_survive_their_commit() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = SqlCatalog::connect(SqlCatalogConfig::local(dir.path()))
        .await
        .unwrap();
    let db = NamespaceIdent::parse("db").unwrap();
    catalog
        .create_namespace(&db, BTreeMap::new())
        .await
        .unwrap();
    let ident = TableIdent::new(db, "merged");
    let mut creation = TableCreation::new("", schema());
    creation
        .properties
        .insert(MANIFEST_MIN_MERGE_COUNT.into(), "2".into());
    catalog.create_table(&ident, creation).await.unwrap();
    for i in 0..4 {
        append_ids(&catalog, &ident, i * 10..i * 10 + 2, &SystemEnvironment).await;
    }
    let table = catalog.load_table(&ident).await.unwrap();
    let list = table
        .metadata
        .current_snapshot()
        .unwrap()
        .manifest_list
        .clone();
    for m in iceberg_append::read_manifest_list(catalog.io(), list.as_deref())
        .await
        .unwrap()
    {
        assert!(
            catalog.io().exists(&m.manifest_path).await.unwrap(),
            "{} is listed but was deleted",
            m.manifest_path
        );
    }
}
