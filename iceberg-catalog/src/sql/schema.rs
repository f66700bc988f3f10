//! The catalog tables, exactly as PyIceberg 0.12's `SqlCatalog` (and Java's `JdbcCatalog`,
//! schema V1) create them, and the probe for older (V0) catalogs without `iceberg_type`.

use super::Pool;
use super::pool::{execute, fetch, is_missing_column};

/// `iceberg_type` of a table row (views are `VIEW`; they are not tables).
pub const ICEBERG_TYPE_TABLE: &str = "TABLE";

/// The DDL of `iceberg_tables` (SQLAlchemy's output for PyIceberg 0.12, plus `IF NOT EXISTS`).
pub const CREATE_TABLES: &str = "CREATE TABLE IF NOT EXISTS iceberg_tables (
	catalog_name VARCHAR(255) NOT NULL, 
	table_namespace VARCHAR(255) NOT NULL, 
	table_name VARCHAR(255) NOT NULL, 
	metadata_location VARCHAR(1000), 
	previous_metadata_location VARCHAR(1000), 
	iceberg_type VARCHAR(5), 
	PRIMARY KEY (catalog_name, table_namespace, table_name)
)";

/// The DDL of `iceberg_namespace_properties`.
pub const CREATE_NAMESPACE_PROPERTIES: &str =
    "CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (
	catalog_name VARCHAR(255) NOT NULL, 
	namespace VARCHAR(255) NOT NULL, 
	property_key VARCHAR(255) NOT NULL, 
	property_value VARCHAR(1000) NOT NULL, 
	PRIMARY KEY (catalog_name, namespace, property_key)
)";

/// Creates the catalog tables when absent; returns whether `iceberg_type` exists (schema V1).
///
/// Several processes may open one catalog at once: a failed `CREATE` (PostgreSQL races on
/// its type catalog) is forgiven when the tables are there afterwards.
pub(super) async fn init(pool: &Pool) -> Result<bool, sqlx::Error> {
    for ddl in [CREATE_TABLES, CREATE_NAMESPACE_PROPERTIES] {
        if let Err(e) = execute(pool, ddl, &[]).await {
            let probe = fetch(pool, "SELECT catalog_name FROM iceberg_tables LIMIT 0", &[]).await;
            let probe_ns = fetch(
                pool,
                "SELECT catalog_name FROM iceberg_namespace_properties LIMIT 0",
                &[],
            )
            .await;
            if probe.is_err() || probe_ns.is_err() {
                return Err(e);
            }
        }
    }
    // Only a missing column means the V0 layout: any other failure (a lost connection) is
    // the error, not a reason to treat Java's views as tables for the life of the process.
    match fetch(pool, "SELECT iceberg_type FROM iceberg_tables LIMIT 0", &[]).await {
        Ok(_) => Ok(true),
        Err(e) if is_missing_column(&e) => Ok(false),
        Err(e) => Err(e),
    }
}
