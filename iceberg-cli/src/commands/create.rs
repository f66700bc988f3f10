//! `iceberg create`: a table from a schema source, partition and sort expressions, a format
//! version and properties; the namespace is created when missing.

use std::path::Path;

use iceberg_append::{Table, TableCreation, TableIdent};
use iceberg_spec::properties::is_secret_key;
use iceberg_spec::{FormatVersion, Schema};
use serde_json::json;

use crate::catalog::{OpenCatalog, parse_table_name};
use crate::cli::{Cli, CreateArgs, TableDefArgs};
use crate::describe;
use crate::error::{Error, Result};
use crate::input::{self, Input, ReadOptions};
use crate::partition_expr;
use crate::schema_infer;

/// Runs `iceberg create`.
///
/// # Errors
/// A bad definition (named), an existing table, or a catalog failure.
pub(crate) async fn run(cli: &Cli, args: &CreateArgs) -> Result<()> {
    let ident = parse_table_name(&args.table)?;
    let source = args
        .def
        .schema_from
        .as_deref()
        .ok_or_else(|| Error::Usage("--schema-from <file> is required".into()))?;
    let schema = schema_from_file(source, args.def.format_version(), None)?;
    let creation = creation(&args.def, schema)?;
    let open = OpenCatalog::open(cli, true).await?;
    let result = create(&open, &ident, creation).await;
    open.close().await;
    let (table, _) = result?;
    report(cli.json, &ident, &table)
}

/// What `create` made, so a failed `append --create` can undo it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Created {
    /// True when the namespace was created too.
    pub(crate) namespace: bool,
}

/// Creates the table (and its namespace when missing).
///
/// # Errors
/// An existing table, or a catalog failure.
pub(crate) async fn create(
    open: &OpenCatalog,
    ident: &TableIdent,
    creation: TableCreation,
) -> Result<(Table, Created)> {
    let namespace = open.ensure_namespace(&ident.namespace_ident()).await?;
    match open.catalog.create_table(ident, creation).await {
        Ok(t) => Ok((t, Created { namespace })),
        Err(e) => {
            if namespace {
                let _ = open.catalog.drop_namespace(&ident.namespace_ident()).await;
            }
            if e.is_already_exists() {
                return Err(Error::Table(format!("table `{ident}` already exists")));
            }
            Err(e.into())
        }
    }
}

/// The schema of `path`: an Iceberg schema JSON document (ids kept as written), or the
/// Arrow schema of a data file with fresh ids (see [`schema_infer`]).
///
/// # Errors
/// An unreadable file, or a type Iceberg cannot hold, naming the file and column.
pub(crate) fn schema_from_file(
    path: &Path,
    format_version: u8,
    delimiter: Option<&str>,
) -> Result<Schema> {
    if let Some(schema) = iceberg_schema_json(path)? {
        return Ok(schema);
    }
    let inputs = input::expand(&[path.display().to_string()], None)?;
    let Some(first) = inputs.first() else {
        return Err(Error::input(path.display(), "no such file"));
    };
    let arrow = input::file_schema(first, &read_options(first, delimiter.unwrap_or(","))?)?;
    schema_infer::iceberg_schema(&arrow, format_version)
        .map_err(|e| Error::input(path.display(), e.to_string()))
}

/// Read options for schema inference of `input`.
pub(crate) fn read_options(input: &Input, delimiter: &str) -> Result<ReadOptions> {
    Ok(ReadOptions {
        batch_size: 8192,
        delimiter: input::delimiter_for(&input.path, delimiter)?,
    })
}

/// `Some` when `path` is a `.json` file holding one Iceberg schema object.
fn iceberg_schema_json(path: &Path) -> Result<Option<Schema>> {
    let is_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let small = std::fs::metadata(path)
        .map_err(|e| Error::input(path.display(), format!("cannot read: {e}")))?
        .len()
        < 16 << 20;
    if !is_json || !small {
        return Ok(None);
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::input(path.display(), format!("cannot read: {e}")))?;
    let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Ok(None); // several lines: NDJSON data
    };
    if value.get("fields").is_none() {
        return Ok(None);
    }
    Schema::from_json(&value)
        .map(Some)
        .map_err(|e| Error::input(path.display(), format!("not an Iceberg schema: {e}")))
}

/// The table definition of `def` over `schema` (location left to the catalog).
///
/// # Errors
/// A bad format version, partition or sort expression, named.
pub(crate) fn creation(def: &TableDefArgs, schema: Schema) -> Result<TableCreation> {
    let format_version = FormatVersion::from_number(i64::from(def.format_version()))
        .map_err(|e| Error::Usage(format!("--format-version: {e}")))?;
    let spec = partition_expr::partition_spec(&def.partition, &schema).map_err(Error::Usage)?;
    let sort_order = partition_expr::sort_order(&def.sort, &schema).map_err(Error::Usage)?;
    let mut creation = TableCreation::new("", schema);
    creation.spec = spec;
    creation.sort_order = sort_order;
    creation.format_version = format_version;
    if let Some((key, _)) = def.properties.iter().find(|(k, _)| is_secret_key(k)) {
        // A table property is in `metadata.json` for every reader of the table to see.
        return Err(Error::Usage(format!(
            "--property {key}=... after the subcommand would be a table property, written into \
             the table's metadata for every reader to see; a credential is a file IO setting: \
             give it before the subcommand (`iceberg --io {key}=... append ...`) or in the \
             environment"
        )));
    }
    creation.properties = def.properties.iter().cloned().collect();
    Ok(creation)
}

fn report(as_json: bool, ident: &TableIdent, table: &Table) -> Result<()> {
    let meta = &table.metadata;
    let schema = meta.current_schema()?;
    let spec = meta.default_spec()?;
    if as_json {
        let out = json!({
            "table": ident.to_string(),
            "location": meta.location,
            "metadata_location": table.metadata_location,
            "format_version": meta.format_version.number(),
            "schema": schema.to_json(),
            "partition_spec": describe::spec_json(spec, schema),
            "sort_order": describe::sort_json(meta.default_sort_order()),
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    outln!(
        "created table {ident} (format v{}) at {}",
        meta.format_version.number(),
        meta.location
    );
    outln!("schema:");
    for line in describe::schema_lines(schema) {
        outln!("  {line}");
    }
    outln!("partitioned by: {}", describe::spec_text(spec, schema));
    outln!(
        "sorted by: {}",
        describe::sort_text(meta.default_sort_order(), schema)
    );
    Ok(())
}
