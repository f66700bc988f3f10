//! `iceberg create`: a table from a schema source, partition and sort expressions, a format
//! version and properties; the namespace is created when missing.

use std::path::Path;

use arrow_schema::{DataType, Field, Schema as ArrowSchema};
use iceberg_append::{Table, TableCreation, TableIdent};
use iceberg_spec::properties::is_secret_key;
use iceberg_spec::{PrimitiveType, Schema, Type};
use serde_json::json;

use crate::catalog::{OpenCatalog, parse_table_name};
use crate::cli::{Cli, CreateArgs, InputFormat, ReadArgs, TableDefArgs};
use crate::describe;
use crate::error::{Error, Result};
use crate::input::{self, Input, ReadOptions, text};
use iceberg_spec::partition_expr;

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
    let inputs = input::expand(
        &[source.display().to_string()],
        args.read.format,
        args.read.compression,
    )?;
    let schema = schema_of(source, &inputs, &args.def, &args.read)?;
    let creation = creation(&args.def, schema)?;
    if args.dry_run {
        return report_definition(cli.json, &ident, &creation, "would create");
    }
    let open = OpenCatalog::open(cli, true).await?;
    let result = create(&open, &ident, creation).await;
    open.close().await;
    report(cli.json, &ident, &result?)
}

/// Creates the table (and its namespace when missing; dropped again when the create fails).
///
/// # Errors
/// An existing table, or a catalog failure.
pub(crate) async fn create(
    open: &OpenCatalog,
    ident: &TableIdent,
    creation: TableCreation,
) -> Result<Table> {
    let namespace = open.ensure_namespace(&ident.namespace_ident()).await?;
    match open.catalog.create_table(ident, creation).await {
        Ok(t) => Ok(t),
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

/// The schema of a new table: `source` as an Iceberg schema JSON document (ids kept as
/// written), or the Arrow schema of the data files `inputs` with fresh ids (see
/// `iceberg_write::iceberg_schema`), CSV and JSON types inferred over every input, with the `--column`
/// types of `def` applied.
///
/// # Errors
/// An unreadable file, a type Iceberg cannot hold, or a bad `--column`, naming the file
/// and column.
pub(crate) fn schema_of(
    source: &Path,
    inputs: &[Input],
    def: &TableDefArgs,
    read: &ReadArgs,
) -> Result<Schema> {
    if let Some(schema) = iceberg_schema_json(source)? {
        if !def.columns.is_empty() || def.infer_rows.is_some() {
            return Err(Error::Usage(
                "--column and --infer-rows shape inferred schemas; an Iceberg schema JSON \
                 says its types itself"
                    .into(),
            ));
        }
        return Ok(schema);
    }
    let Some(first) = inputs.first() else {
        return Err(Error::input(source.display(), "no input file"));
    };
    let options = ReadOptions {
        batch_size: 8192,
        delimiter: read.delimiter.clone(),
        nulls: read.nulls(),
        rules: text::Rules::default(),
    };
    let mut arrow = input::file_schema(first, &options, def.infer_rows)?;
    // Text formats infer from every input; Parquet and IPC say their types.
    if matches!(first.format, InputFormat::Csv | InputFormat::Json) {
        for other in inputs.iter().skip(1).filter(|i| i.format == first.format) {
            let more = input::file_schema(other, &options, def.infer_rows)?;
            arrow = merge_inferred(&arrow, &more);
        }
    }
    let schema = iceberg_write::iceberg_schema(&arrow, def.format_version()?)
        .map_err(|e| Error::input(first.name(), e.to_string()))?;
    with_column_types(schema, &def.columns)
}

/// The columns of both inferred schemas, in order of first appearance; a column typed
/// differently in two files is a double when both are numbers, else a string.
fn merge_inferred(a: &ArrowSchema, b: &ArrowSchema) -> ArrowSchema {
    let mut fields: Vec<Field> = a.fields().iter().map(|f| f.as_ref().clone()).collect();
    for f in b.fields() {
        match fields.iter_mut().find(|x| x.name() == f.name()) {
            Some(x) if x.data_type() == f.data_type() => {}
            Some(x) => {
                let numbers = [DataType::Int64, DataType::Float64];
                let dt = if numbers.contains(x.data_type()) && numbers.contains(f.data_type()) {
                    DataType::Float64
                } else {
                    DataType::Utf8
                };
                *x = x.clone().with_data_type(dt).with_nullable(true);
            }
            None => fields.push(f.as_ref().clone().with_nullable(true)),
        }
    }
    ArrowSchema::new(fields)
}

/// `schema` with the top-level columns of `columns` (`NAME`, Iceberg type text) retyped.
fn with_column_types(schema: Schema, columns: &[(String, String)]) -> Result<Schema> {
    if columns.is_empty() {
        return Ok(schema);
    }
    let mut fields = schema.fields().to_vec();
    for (name, ty) in columns {
        let p: PrimitiveType = ty
            .parse()
            .map_err(|e| Error::Usage(format!("--column {name}={ty}: {e}")))?;
        let Some(f) = fields.iter_mut().find(|f| &f.name == name) else {
            let names: Vec<&str> = schema.fields().iter().map(|f| f.name.as_str()).collect();
            return Err(Error::Usage(format!(
                "--column {name}={ty}: the input has no column `{name}` (it has {})",
                names.join(", ")
            )));
        };
        if !matches!(f.field_type, Type::Primitive(_)) {
            return Err(Error::Usage(format!(
                "--column {name}={ty}: `{name}` is nested; --column retypes primitive columns"
            )));
        }
        f.field_type = p.into();
    }
    Schema::new(schema.schema_id(), fields).map_err(|e| Error::Usage(format!("--column: {e}")))
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
    let format_version = def.format_version()?;
    let spec = partition_expr::partition_spec(&def.partition, &schema)
        .map_err(|e| Error::Usage(e.to_string()))?;
    let sort_order =
        partition_expr::sort_order(&def.sort, &schema).map_err(|e| Error::Usage(e.to_string()))?;
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

/// Prints the table a creation would make (`verb`: "would create", "creating").
pub(crate) fn report_definition(
    as_json: bool,
    ident: &TableIdent,
    creation: &TableCreation,
    verb: &str,
) -> Result<()> {
    let schema = &creation.schema;
    if as_json {
        let out = json!({
            "table": ident.to_string(),
            "dry_run": true,
            "format_version": creation.format_version.number(),
            "schema": schema.to_json(),
            "partition_spec": describe::spec_json(&creation.spec, schema),
            "sort_order": describe::sort_json(Some(&creation.sort_order)),
            "properties": creation.properties,
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    outln!(
        "{verb} table {ident} (format v{})",
        creation.format_version.number()
    );
    definition_lines(schema, &creation.spec, Some(&creation.sort_order))
}

fn definition_lines(
    schema: &Schema,
    spec: &iceberg_spec::PartitionSpec,
    order: Option<&iceberg_spec::SortOrder>,
) -> Result<()> {
    outln!("schema:");
    for line in describe::schema_lines(schema) {
        outln!("  {line}");
    }
    outln!("partitioned by: {}", describe::spec_text(spec, schema));
    outln!("sorted by: {}", describe::sort_text(order, schema));
    Ok(())
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
    definition_lines(schema, spec, meta.default_sort_order())
}
