//! `iceberg add-files`: register existing Parquet files in a table where they are, without
//! rewriting them (`iceberg_append::add_files`). Every file's footer is read and checked
//! before the one commit; nothing is copied, moved or deleted.
//!
//! Local arguments are files, folders or globs (as `append` takes them); object-store
//! arguments (`s3://bucket/path/file.parquet`) are files, read through the table's IO.
//! `--create` makes the table first from the files' columns (and `--partition`; with
//! `--hive-partitioning`, the folders' keys, see `hive`); when the files are then refused,
//! the new table is dropped again.

mod hive;

use std::sync::Arc;

use iceberg_append::{AddFilesOutcome, AddPartition, SystemEnvironment, TableHandle, TableIdent};
use serde_json::json;

use crate::catalog::{OpenCatalog, parse_table_name};
use crate::cli::{AddFilesArgs, Cli, InputFormat, TableDefArgs};
use crate::commands::create;
use crate::error::{Error, Result};
use crate::input;

/// Runs `iceberg add-files`.
///
/// # Errors
/// A bad argument, a missing table (without `--create`), a file refused (named, with its
/// column), or the commit's failure; the table is unchanged after every one.
pub(crate) async fn run(cli: &Cli, args: &AddFilesArgs) -> Result<()> {
    let ident = parse_table_name(&args.table)?;
    let paths = file_uris(&args.inputs)?;
    let open = OpenCatalog::open(cli, true).await?;
    let result = add(cli, args, &open, &ident, &paths).await;
    open.close().await;
    result
}

/// The files the arguments name, as URIs the table's IO reads.
fn file_uris(args: &[String]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut local = Vec::new();
    for a in args {
        if a.contains("://") && !a.starts_with("file://") {
            out.push(a.clone());
        } else {
            local.push(a.trim_start_matches("file://").to_string());
        }
    }
    if !local.is_empty() {
        for i in input::expand(&local, Some(InputFormat::Parquet), None)? {
            let abs = std::path::absolute(&i.path)
                .map_err(|e| Error::input(i.path.display(), e.to_string()))?;
            out.push(format!("file://{}", abs.display()));
        }
    }
    Ok(out)
}

async fn add(
    cli: &Cli,
    args: &AddFilesArgs,
    open: &OpenCatalog,
    ident: &TableIdent,
    paths: &[String],
) -> Result<()> {
    let partition = if args.hive_partitioning {
        AddPartition::HivePath
    } else {
        AddPartition::Infer
    };
    let mut created = false;
    let env = Arc::new(SystemEnvironment);
    let handle = match TableHandle::load(open.catalog.clone(), ident.clone(), env.clone()).await {
        Ok(h) => {
            let given = args.def.given();
            if !given.is_empty() {
                return Err(Error::Usage(format!(
                    "table `{ident}` exists, and {} only shape a new table",
                    given.join(", ")
                )));
            }
            h
        }
        Err(e) if e.is_not_found() && args.create => {
            let local = local_paths(paths);
            let first = local.first().ok_or_else(|| {
                Error::Usage("--create infers the schema from local files only".into())
            })?;
            let inputs = input::expand(&local, Some(InputFormat::Parquet), None)?;
            let schema = create::schema_of(first.as_ref(), &inputs, &args.def, &args.read)?;
            let creation = if args.hive_partitioning {
                let (schema, partition) =
                    hive::with_hive_columns(schema, paths, &args.def.partition)?;
                let def = TableDefArgs {
                    partition,
                    ..args.def.clone()
                };
                create::creation(&def, schema)?
            } else {
                create::creation(&args.def, schema)?
            };
            if args.dry_run {
                return create::report_definition(cli.json, ident, &creation, "would create");
            }
            create::create(open, ident, creation).await?;
            created = true;
            TableHandle::load(open.catalog.clone(), ident.clone(), env).await?
        }
        Err(e) if e.is_not_found() => {
            return Err(Error::Table(format!(
                "{}; pass --create to make it from the files' columns",
                open.missing_table(ident).await
            )));
        }
        Err(e) => return Err(e.into()),
    };
    let quiet = cli.json;
    let total = paths.len();
    let mut seen = 0usize;
    let on_file = |f: &iceberg_write::import::ImportedFile| {
        seen += 1;
        if !quiet {
            eprintln!(
                "[{seen}/{total}] {} ({} rows)",
                f.data_file.file_path, f.data_file.record_count
            );
        }
    };
    if args.dry_run {
        let files = iceberg_append::describe_files(
            handle.io(),
            handle.metadata(),
            paths,
            partition,
            on_file,
        )
        .await?;
        let rows: i64 = files.iter().map(|f| f.data_file.record_count).sum();
        outln!(
            "would add {} file(s), {rows} rows, to {ident}; nothing committed",
            files.len()
        );
        return Ok(());
    }
    match handle.add_files(paths, partition, on_file).await {
        Ok(outcome) => report(cli.json, ident, &outcome, created),
        // The files may be in the table: it stays, and nothing claims the table unchanged.
        Err(e) if e.is_commit_state_unknown() => Err(e.into()),
        Err(e) => {
            if created {
                // The table did not exist before this command: leave it so.
                let _ = open.catalog.drop_table(ident, false).await;
            }
            Err(Error::Aborted {
                cause: Box::new(e.into()),
            })
        }
    }
}

/// The local files among `uris`, as paths.
fn local_paths(uris: &[String]) -> Vec<String> {
    uris.iter()
        .filter_map(|u| u.strip_prefix("file://").map(str::to_string))
        .collect()
}

fn report(
    as_json: bool,
    ident: &TableIdent,
    outcome: &AddFilesOutcome,
    created: bool,
) -> Result<()> {
    let rows: i64 = outcome.files.iter().map(|f| f.record_count).sum();
    let bytes: i64 = outcome.files.iter().map(|f| f.file_size_in_bytes).sum();
    if as_json {
        let out = json!({
            "table": ident.to_string(),
            "created": created,
            "snapshot_id": outcome.outcome.snapshot_id,
            "metadata_location": outcome.outcome.metadata_location,
            "added_data_files": outcome.files.len(),
            "added_records": rows,
            "added_files_size_bytes": bytes,
            "name_mapping_added": outcome.name_mapping_added,
            "data_files": outcome.files.iter().map(|f| &f.file_path).collect::<Vec<_>>(),
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    if created {
        outln!("created {ident}");
    }
    outln!(
        "snapshot {}: added {} existing file(s), {rows} rows ({bytes} bytes), to {ident} in place{}",
        outcome
            .outcome
            .snapshot_id
            .map_or_else(|| "-".to_string(), |id| id.to_string()),
        outcome.files.len(),
        if outcome.name_mapping_added {
            "; the table now has a name mapping (the files have no field ids)"
        } else {
            ""
        }
    );
    Ok(())
}
