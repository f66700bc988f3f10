//! `iceberg inspect`: schema, spec, sort order, properties and snapshots; with `--files`
//! every live data file of the current snapshot with its decoded column stats.

use iceberg_io::FileIo;
use iceberg_spec::{DataFile, Schema, TableMetadata};
use serde_json::{Value, json};

use super::{format_ms, short};
use crate::catalog::OpenCatalog;
use crate::cli::Cli;
use crate::describe;
use crate::error::Result;

/// Runs `iceberg inspect`.
///
/// # Errors
/// A missing table, or metadata that cannot be read.
pub(crate) async fn run(cli: &Cli, name: &str, with_files: bool) -> Result<()> {
    let open = OpenCatalog::open(cli, false).await?;
    let result = async {
        let (ident, table) = open.load(name).await?;
        let files = if with_files {
            Some(live_files(&open.catalog.table_io(&table), &table.metadata).await?)
        } else {
            None
        };
        Ok::<_, crate::error::Error>((ident, table, files))
    }
    .await;
    open.close().await;
    let (ident, table, files) = result?;
    let meta = &table.metadata;
    let schema = meta.current_schema()?;
    let spec = meta.default_spec()?;
    if cli.json {
        let mut out = json!({
            "table": ident.to_string(),
            "location": meta.location,
            "metadata_location": table.metadata_location,
            "format_version": meta.format_version.number(),
            "table_uuid": meta.table_uuid.map(|u| u.to_string()),
            "current_snapshot_id": meta.current_snapshot_id,
            "schema": schema.to_json(),
            "schemas": meta.schemas.iter().map(Schema::to_json).collect::<Vec<_>>(),
            "partition_spec": describe::spec_json(spec, schema),
            "partition_specs": meta.partition_specs.iter().map(|p| json!({
                "spec_id": p.spec_id(),
                "fields": describe::spec_json(p, schema),
            })).collect::<Vec<_>>(),
            "sort_order": describe::sort_json(meta.default_sort_order()),
            "properties": meta.properties,
            "snapshots": meta.snapshots.iter().map(|s| json!({
                "snapshot_id": s.snapshot_id,
                "parent_snapshot_id": s.parent_snapshot_id,
                "sequence_number": s.sequence_number,
                "timestamp_ms": s.timestamp_ms,
                "operation": s.operation().map(|o| o.as_str()),
                "manifest_list": s.manifest_list,
                "summary": s.summary.as_ref().map(|x| &x.properties),
            })).collect::<Vec<_>>(),
        });
        if let (Some(files), Some(obj)) = (&files, out.as_object_mut()) {
            let list = files.iter().map(|f| file_json(f, schema)).collect();
            obj.insert("data_files".into(), Value::Array(list));
        }
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    outln!("table {ident}");
    outln!("  location: {}", meta.location);
    outln!(
        "  metadata: {}",
        table.metadata_location.as_deref().unwrap_or("?")
    );
    outln!("  format version: {}", meta.format_version.number());
    outln!("schema (id {}):", schema.schema_id());
    for line in describe::schema_lines(schema) {
        outln!("  {line}");
    }
    // Older schemas, one line each: files written with them are read by field id.
    for older in meta
        .schemas
        .iter()
        .filter(|s| s.schema_id() != schema.schema_id())
    {
        let names: Vec<&str> = older.fields().iter().map(|f| f.name.as_str()).collect();
        outln!(
            "older schema (id {}): {}",
            older.schema_id(),
            names.join(", ")
        );
    }
    outln!(
        "partitioned by: {} (spec id {})",
        describe::spec_text(spec, schema),
        spec.spec_id()
    );
    for older in meta
        .partition_specs
        .iter()
        .filter(|p| p.spec_id() != spec.spec_id())
    {
        outln!(
            "older spec (id {}): {}",
            older.spec_id(),
            describe::spec_text(older, schema)
        );
    }
    outln!(
        "sorted by: {}",
        describe::sort_text(meta.default_sort_order(), schema)
    );
    outln!("properties:");
    for (k, v) in &meta.properties {
        outln!("  {k} = {v}");
    }
    outln!("snapshots: {}", meta.snapshots.len());
    for s in &meta.snapshots {
        let current = meta.current_snapshot_id == Some(s.snapshot_id);
        let sum = |k: &str| {
            s.summary
                .as_ref()
                .and_then(|x| x.get_i64(k))
                .map_or("-".into(), |v| v.to_string())
        };
        outln!(
            "  {} {} {} {} +{} rows, {} total",
            if current { "*" } else { " " },
            s.snapshot_id,
            format_ms(s.timestamp_ms),
            s.operation().map_or("?", |o| o.as_str()),
            sum("added-records"),
            sum("total-records"),
        );
    }
    if let Some(files) = files {
        outln!("data files: {}", files.len());
        for f in &files {
            print_file(f, meta, schema)?;
        }
    }
    Ok(())
}

/// The live data files of the current snapshot (none without one).
///
/// # Errors
/// When a manifest list or manifest cannot be read.
pub(crate) async fn live_files(io: &FileIo, meta: &TableMetadata) -> Result<Vec<DataFile>> {
    Ok(iceberg_append::live_data_files(io, meta).await?)
}

/// Every column id with stats in `f`, in id order.
fn stat_ids(f: &DataFile) -> Vec<i32> {
    let mut ids: Vec<i32> = f
        .value_counts
        .keys()
        .chain(f.null_value_counts.keys())
        .chain(f.lower_bounds.keys())
        .chain(f.upper_bounds.keys())
        .copied()
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

fn bound_text(r: iceberg_spec::Result<Option<iceberg_spec::Datum>>) -> String {
    match r {
        Ok(Some(d)) => d.to_string(),
        Ok(None) => "-".into(),
        Err(e) => format!("<{e}>"),
    }
}

fn partition_text(f: &DataFile, meta: &TableMetadata, schema: &Schema) -> String {
    match meta.spec_by_id(f.spec_id) {
        Some(spec) if !spec.is_unpartitioned() => spec
            .partition_to_path(schema, &f.partition)
            .unwrap_or_else(|e| format!("<{e}>")),
        _ => "unpartitioned".into(),
    }
}

fn print_file(f: &DataFile, meta: &TableMetadata, schema: &Schema) -> Result<()> {
    outln!(
        "  {}  [{}] {} rows, {} bytes",
        short(&f.file_path, &meta.location),
        partition_text(f, meta, schema),
        f.record_count,
        f.file_size_in_bytes
    );
    for id in stat_ids(f) {
        let count = |m: &std::collections::BTreeMap<i32, i64>| {
            m.get(&id).map_or("-".into(), ToString::to_string)
        };
        outln!(
            "      {:<16} values {:>8}  nulls {:>6}  nans {:>4}  lower {}  upper {}",
            schema.field_name(id).unwrap_or("?"),
            count(&f.value_counts),
            count(&f.null_value_counts),
            count(&f.nan_value_counts),
            bound_text(f.lower_bound(schema, id)),
            bound_text(f.upper_bound(schema, id)),
        );
    }
    Ok(())
}

fn file_json(f: &DataFile, schema: &Schema) -> Value {
    let columns: Vec<Value> = stat_ids(f)
        .into_iter()
        .map(|id| {
            let datum = |r: iceberg_spec::Result<Option<iceberg_spec::Datum>>| {
                r.ok().flatten().map(|d| d.to_json())
            };
            json!({
                "field_id": id,
                "name": schema.field_name(id),
                "value_count": f.value_counts.get(&id),
                "null_value_count": f.null_value_counts.get(&id),
                "nan_value_count": f.nan_value_counts.get(&id),
                "lower_bound": datum(f.lower_bound(schema, id)),
                "upper_bound": datum(f.upper_bound(schema, id)),
            })
        })
        .collect();
    json!({
        "file_path": f.file_path,
        "file_format": f.file_format.as_str(),
        "spec_id": f.spec_id,
        "sort_order_id": f.sort_order_id,
        "partition": f.partition.iter().map(|d| d.as_ref().map(|d| d.to_json())).collect::<Vec<_>>(),
        "record_count": f.record_count,
        "file_size_in_bytes": f.file_size_in_bytes,
        "columns": columns,
    })
}
