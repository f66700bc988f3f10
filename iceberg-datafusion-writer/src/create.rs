//! `CREATE EXTERNAL TABLE ... STORED AS ICEBERG`: a new table in one of our catalogs.
//!
//! ```sql
//! CREATE EXTERNAL TABLE iceberg.db.events (id BIGINT NOT NULL, ts TIMESTAMP, region VARCHAR)
//! STORED AS ICEBERG
//! PARTITIONED BY (region)              -- identity partitions
//! WITH ORDER (ts ASC)                  -- the sort order (columns only)
//! LOCATION ''                          -- '' for the catalog's default location
//! OPTIONS ('format-version' '2', 'write.target-file-size-bytes' '268435456');
//!
//! CREATE EXTERNAL TABLE iceberg.db.clicks (id BIGINT, ts TIMESTAMP) STORED AS ICEBERG
//! LOCATION '' OPTIONS ('partitioning' 'day(ts), bucket(16, id)', 'sort-order' 'ts desc');
//! ```
//!
//! DataFusion's parser takes only column names in `PARTITIONED BY`, so transforms go in the
//! `partitioning` option, written as Spark writes them ([`iceberg_spec::partition_expr`]);
//! each of partitions and sort order is given one way, not both.
//! Every option with a dot in its name is a table property; credentials are refused (they
//! belong to the catalog's file IO, not to metadata every reader sees).

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::{Session, TableProviderFactory};
use datafusion::common::Result as DfResult;
use datafusion::datasource::TableProvider;
use datafusion::logical_expr::{CreateExternalTable, Expr, SortExpr};
use iceberg_append::catalog::NamespaceIdent;
use iceberg_append::{TableCreation, TableIdent};
use iceberg_spec::partition_expr::{partition_spec, sort_order};
use iceberg_spec::properties::is_secret_key;
use iceberg_spec::{FormatVersion, PartitionSpec};

use crate::codec::CatalogRegistry;
use crate::error::{Error, Result};
use crate::provider::IcebergTableProvider;

/// The file type to register [`IcebergTableFactory`] under (`STORED AS ICEBERG`).
pub const STORED_AS: &str = "ICEBERG";

/// Options of `CREATE EXTERNAL TABLE` that are not table properties (DataFusion prefixes an
/// option name without a dot with `format.`).
const PARTITIONING: &str = "format.partitioning";
const SORT_ORDER: &str = "format.sort-order";
const FORMAT_VERSION: &str = "format.format-version";
const KNOWN: &str = "partitioning, sort-order, format-version, or a table property with a dot";

/// Makes Iceberg tables for `CREATE EXTERNAL TABLE ... STORED AS ICEBERG` in the catalogs of
/// a [`CatalogRegistry`], by the name the statement gives the catalog.
#[derive(Debug, Clone)]
pub struct IcebergTableFactory {
    registry: CatalogRegistry,
}

impl IcebergTableFactory {
    /// A factory creating tables in `registry`'s catalogs.
    pub fn new(registry: CatalogRegistry) -> Self {
        Self { registry }
    }
}

#[async_trait]
impl TableProviderFactory for IcebergTableFactory {
    async fn create(
        &self,
        state: &dyn Session,
        cmd: &CreateExternalTable,
    ) -> DfResult<Arc<dyn TableProvider>> {
        let defaults = &state.config().options().catalog;
        let name = cmd
            .name
            .clone()
            .resolve(&defaults.default_catalog, &defaults.default_schema);
        let catalog = self.registry.get(&name.catalog)?;
        let namespace = NamespaceIdent::parse(&name.schema).ok_or_else(|| Error::CreateTable {
            table: name.to_string(),
            reason: format!("`{}` is not a namespace name", name.schema),
        })?;
        let ident = TableIdent::new(namespace, name.table.as_ref());
        let normalize = state
            .config()
            .options()
            .sql_parser
            .enable_ident_normalization;
        let creation = table_creation(cmd, &ident.to_string(), normalize)?;
        match catalog.create_table(&ident, creation).await {
            Ok(table) => Ok(Arc::new(IcebergTableProvider::from_table(
                catalog, ident, &table,
            )?)),
            // Made meanwhile by another session: IF NOT EXISTS takes it as it is.
            Err(e) if cmd.if_not_exists && e.is_already_exists() => Ok(Arc::new(
                IcebergTableProvider::try_new(catalog, ident).await?,
            )),
            Err(e) => Err(Error::from(e).into()),
        }
    }
}

/// The table `cmd` describes: its columns (fresh field ids), partition spec, sort order,
/// format version, properties and location (`''`: the catalog's default). `normalize` is
/// whether the session lowercases unquoted identifiers, as `PARTITIONED BY` names come
/// unnormalized.
///
/// # Errors
/// [`Error::CreateTable`] naming `table` and what it cannot take; a bad partition or sort
/// expression as [`Error::TableDefinition`], quoting it.
pub fn table_creation(
    cmd: &CreateExternalTable,
    table: &str,
    normalize: bool,
) -> Result<TableCreation> {
    let refuse = |reason: String| Error::CreateTable {
        table: table.to_string(),
        reason,
    };
    let definition = |source| Error::TableDefinition {
        table: table.to_string(),
        source,
    };
    if cmd.schema.fields().is_empty() {
        return Err(refuse("an Iceberg table needs its columns listed".into()));
    }
    if !cmd.column_defaults.is_empty() {
        return Err(refuse("column DEFAULT values are not supported".into()));
    }
    if !cmd.constraints.is_empty() {
        return Err(refuse(
            "constraints (PRIMARY KEY, UNIQUE) are not supported".into(),
        ));
    }
    if cmd.locations.len() > 1 {
        return Err(refuse("a table has one LOCATION".into()));
    }
    let mut options: BTreeMap<&str, &str> = cmd
        .options
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let format_version = match options.remove(FORMAT_VERSION) {
        None => FormatVersion::V2,
        Some(v) => v
            .trim()
            .parse::<i64>()
            .ok()
            .and_then(|n| FormatVersion::from_number(n).ok())
            .ok_or_else(|| refuse(format!("format-version `{v}` is not 1, 2 or 3")))?,
    };
    let schema = iceberg_write::iceberg_schema(cmd.schema.as_arrow(), format_version)?;
    let spec = match (options.remove(PARTITIONING), &cmd.table_partition_cols[..]) {
        (Some(_), [_, ..]) => {
            return Err(refuse(
                "give partitions in PARTITIONED BY or in the `partitioning` option, not both"
                    .into(),
            ));
        }
        (Some(terms), []) => partition_spec(&[terms.to_string()], &schema).map_err(definition)?,
        (None, []) => PartitionSpec::unpartitioned(),
        (None, columns) => {
            let terms: Vec<String> = columns
                .iter()
                .map(|c| quoted(&identifier(c, normalize)))
                .collect();
            partition_spec(&terms, &schema).map_err(definition)?
        }
    };
    let keys = match (options.remove(SORT_ORDER), &cmd.order_exprs[..]) {
        (Some(_), [_, ..]) => {
            return Err(refuse(
                "give the sort order in WITH ORDER or in the `sort-order` option, not both".into(),
            ));
        }
        (Some(keys), []) => vec![keys.to_string()],
        (None, orders) => match orders {
            [] => Vec::new(),
            [order] => order
                .iter()
                .map(sort_key)
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| refuse("WITH ORDER takes columns only".into()))?,
            _ => return Err(refuse("a table has one sort order".into())),
        },
    };
    let sort_order = sort_order(&keys, &schema).map_err(definition)?;
    let mut properties = BTreeMap::new();
    for (key, value) in options {
        if !key.contains('.') || key.starts_with("format.") {
            let name = key.strip_prefix("format.").unwrap_or(key);
            return Err(refuse(format!(
                "unknown option `{name}` (expected {KNOWN})"
            )));
        }
        if is_secret_key(key) {
            return Err(refuse(format!(
                "`{key}` names a credential, which is never stored as a table property \
                 (give it to the catalog's file IO)"
            )));
        }
        properties.insert(key.to_string(), value.to_string());
    }
    let location = cmd.locations.first().map_or("", |l| l.trim());
    let mut creation = TableCreation::new(location, schema);
    creation.spec = spec;
    creation.sort_order = sort_order;
    creation.properties = properties;
    creation.format_version = format_version;
    Ok(creation)
}

/// The column an identifier of `PARTITIONED BY` names: as SQL reads it, quoted (`"a b"`,
/// a doubled quote inside) or unquoted (lowercased when the session normalizes names).
fn identifier(raw: &str, normalize: bool) -> String {
    match raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(inner) => inner.replace("\"\"", "\""),
        None if normalize => raw.to_lowercase(),
        None => raw.to_string(),
    }
}

/// A column name as a partition or sort term (backticks, so any name is one column).
fn quoted(column: &str) -> String {
    format!("`{}`", column.replace('`', "``"))
}

/// `column asc|desc nulls first|last`, when the sort expression is a column.
fn sort_key(sort: &SortExpr) -> Option<String> {
    let Expr::Column(column) = &sort.expr else {
        return None;
    };
    let direction = if sort.asc { "asc" } else { "desc" };
    let nulls = if sort.nulls_first { "first" } else { "last" };
    Some(format!(
        "{} {direction} nulls {nulls}",
        quoted(&column.name)
    ))
}
