//! `iceberg append`: stream input files through one `DataFileWriter` and commit once.
//!
//! ```text
//! reader thread: file -> batches ──(bounded channel, 2 batches)──> writer.write (async)
//!                                                                      │ all inputs done
//!                                            writer.close -> data files -> one commit
//! ```
//! Any failure (unreadable input, schema mismatch, null in a required column, a refused
//! commit) aborts the writer, which deletes every file it wrote, so nothing is committed
//! and nothing is left behind. With `--create`, the table and its first snapshot are one
//! catalog step (`iceberg_append::create`; a REST catalog's staged create): a failed or
//! killed run leaves no table. A catalog that supports neither gets a plain create first,
//! dropped again when the append fails.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow_array::RecordBatch;
use iceberg_append::{
    AppendMode, SchemaEvolution, SystemEnvironment, Table, TableCreation, TableIdent,
    commit_append_with_mode, commit_create_append, commit_evolving_append, stage_create,
};
use iceberg_spec::{DataFile, Schema};
use iceberg_write::{DataFileWriter, WriteOptions};
use serde_json::json;
use tokio::sync::mpsc;

use super::{create, evolve};
use crate::catalog::{OpenCatalog, parse_table_name};
use crate::cli::{AppendArgs, Cli, InputFormat};
use crate::error::{Error, Result};
use crate::input::text::Rules;
use crate::input::{self, Input, ReadOptions, Target};
use crate::progress::Progress;

/// What the reader thread sends.
enum Msg {
    /// A batch of input `.0`.
    Batch(usize, RecordBatch),
    /// An input could not be read (the error names it).
    Failed(Error),
}

/// What one `append` did.
#[derive(Debug)]
struct Outcome {
    snapshot_id: Option<i64>,
    metadata_location: Option<String>,
    files: Vec<DataFile>,
    rows: u64,
    input_bytes: u64,
    /// The definition of the table this run created.
    created: Option<TableCreation>,
    /// What `--evolve` changed in the table's schema.
    schema_changes: Vec<String>,
}

/// Runs `iceberg append`.
///
/// # Errors
/// A bad input (named with its file and column), a missing table without `--create`, or a
/// failed commit; the table is then unchanged.
pub(crate) async fn run(cli: &Cli, args: &AppendArgs) -> Result<()> {
    let ident = parse_table_name(&args.table)?;
    let inputs = input::expand(&args.inputs, args.read.format, args.read.compression)?;
    for i in &inputs {
        input::delimiter_for(&i.path, &args.read.delimiter)?;
    }
    if args.batch_size == 0 {
        return Err(Error::Usage("--batch-size must be positive".into()));
    }
    let open = OpenCatalog::open(cli, true).await?;
    let progress = Progress::new(
        inputs.iter().map(|i| i.size).sum(),
        !cli.json && !args.dry_run,
    );
    let result = Box::pin(append(cli, args, &open, &ident, &inputs, &progress)).await;
    progress.clear();
    open.close().await;
    match result? {
        Some(outcome) => report(cli.json, &ident, &inputs, &outcome, &progress),
        None => Ok(()),
    }
}

/// Where the rows go: a table that exists, or one this command creates with them.
enum Destination {
    /// The table exists (and its schema evolves with the rows when given).
    Existing(Table, Option<Box<SchemaEvolution>>),
    /// Created in the same catalog step as the first snapshot.
    Staged(Table, Box<TableCreation>),
}

/// `None` for a dry run (the definition was printed).
async fn append(
    cli: &Cli,
    args: &AppendArgs,
    open: &OpenCatalog,
    ident: &TableIdent,
    inputs: &[Input],
    progress: &Progress,
) -> Result<Option<Outcome>> {
    // With --evolve, --column and --infer-rows shape the evolution.
    let shaping = |o: &&str| !(args.evolve && matches!(*o, "--column" | "--infer-rows"));
    let given: Vec<&str> = args.def.given().into_iter().filter(shaping).collect();
    let creation = match open.catalog.load_table(ident).await {
        Ok(_) if !given.is_empty() || args.dry_run => {
            let mut given = given;
            if args.dry_run {
                given.push("--dry-run");
            }
            // Accepted and ignored, they would leave the user believing the table changed.
            return Err(Error::Usage(format!(
                "table `{ident}` exists, and {} only shape a new table: the table keeps its \
                 own schema, partition spec, sort order, format version and properties \
                 (`iceberg inspect {ident}` shows them); drop the option(s) to append",
                given.join(", ")
            )));
        }
        Ok(t) => {
            let evolution = if args.evolve {
                evolve::plan(args, inputs, &t.metadata)?.map(Box::new)
            } else {
                None
            };
            let destination = Destination::Existing(t, evolution);
            return Box::pin(write_and_commit(
                args,
                open,
                ident,
                destination,
                inputs,
                progress,
            ))
            .await
            .map(Some);
        }
        Err(e) if e.is_not_found() => {
            if !args.create {
                return Err(Error::Table(format!(
                    "{} (pass --create to create it from the inputs' schema)",
                    open.missing_table(ident).await
                )));
            }
            let (source, sources) = match &args.def.schema_from {
                Some(p) => (
                    p.clone(),
                    input::expand(
                        &[p.display().to_string()],
                        args.read.format,
                        args.read.compression,
                    )?,
                ),
                None => (
                    inputs
                        .first()
                        .map(|i| i.path.clone())
                        .ok_or_else(|| Error::Usage("no input files".into()))?,
                    inputs.to_vec(),
                ),
            };
            let schema = create::schema_of(&source, &sources, &args.def, &args.read)?;
            if schema.fields().is_empty() {
                return Err(Error::input(
                    source.display(),
                    "has no columns to create a table from (give --schema-from a typed file)",
                ));
            }
            create::creation(&args.def, schema)?
        }
        Err(e) => return Err(e.into()),
    };
    if args.dry_run {
        create::report_definition(cli.json, ident, &creation, "would create")?;
        return Ok(None);
    }
    let namespace = open.ensure_namespace(&ident.namespace_ident()).await?;
    let staged = match stage_create(
        open.catalog.as_ref(),
        ident,
        creation.clone(),
        &SystemEnvironment,
    )
    .await
    {
        Ok(staged) => Ok(Destination::Staged(staged, Box::new(creation))),
        // A catalog that cannot stage a table: create, then append, and drop the table
        // again when the append fails.
        Err(iceberg_append::Error::Unsupported { .. }) => Err(creation),
        Err(e) => {
            drop_namespace(open, ident, namespace).await;
            return Err(e.into());
        }
    };
    let result = match staged {
        Ok(destination) => {
            Box::pin(write_and_commit(
                args,
                open,
                ident,
                destination,
                inputs,
                progress,
            ))
            .await
        }
        Err(creation) => match create::create(open, ident, creation.clone()).await {
            Ok(table) => {
                let result = Box::pin(write_and_commit(
                    args,
                    open,
                    ident,
                    Destination::Existing(table, None),
                    inputs,
                    progress,
                ))
                .await;
                // Unless the append may have landed: then its rows may be in the table.
                if result.as_ref().is_err_and(|e| !e.outcome_unknown()) {
                    let _ = open.catalog.drop_table(ident, true).await;
                }
                result.map(|mut o| {
                    o.created = Some(creation);
                    o
                })
            }
            Err(e) => Err(e),
        },
    };
    if result.as_ref().is_err_and(|e| !e.outcome_unknown()) {
        drop_namespace(open, ident, namespace).await;
    }
    result.map(Some)
}

/// Drops the namespace this command created for a table it did not create after all.
async fn drop_namespace(open: &OpenCatalog, ident: &TableIdent, created: bool) {
    if created {
        let _ = open.catalog.drop_namespace(&ident.namespace_ident()).await;
    }
}

async fn write_and_commit(
    args: &AppendArgs,
    open: &OpenCatalog,
    ident: &TableIdent,
    destination: Destination,
    inputs: &[Input],
    progress: &Progress,
) -> Result<Outcome> {
    let (table, evolution) = match &destination {
        Destination::Existing(t, e) => (t, e.as_deref()),
        Destination::Staged(t, _) => (t, None),
    };
    let io = open.catalog.table_io(table);
    let schema = match evolution {
        Some(e) => e.schema().clone(),
        None => table.metadata.current_schema()?.clone(),
    };
    let (files, rows) = write_files(args, &io, table, &schema, inputs, progress).await?;
    let input_bytes = inputs.iter().map(|i| i.size).sum();
    let mut outcome = Outcome {
        snapshot_id: None,
        metadata_location: None,
        files,
        rows,
        input_bytes,
        created: None,
        schema_changes: Vec::new(),
    };
    let mode = match (args.merge, args.fast) {
        (true, _) => Some(AppendMode::Merge),
        (_, true) => Some(AppendMode::Fast),
        _ => None,
    };
    let committed = match (&destination, outcome.files.is_empty()) {
        (Destination::Existing(..), true) => return Ok(outcome),
        (Destination::Staged(_, creation), true) => {
            // No rows: a typed definition still makes a table (empty, as Java's create does).
            let typed = args
                .def
                .schema_from
                .as_deref()
                .is_some_and(|p| input::source::format_of(p) != Some(InputFormat::Csv))
                || inputs
                    .iter()
                    .all(|i| matches!(i.format, InputFormat::Parquet | InputFormat::Ipc));
            if !typed {
                return Err(Error::input(
                    inputs.first().map(Input::name).unwrap_or_default(),
                    "no rows: column types cannot be inferred from an empty text input, so no \
                     table was created (give --schema-from a Parquet file or an Iceberg schema \
                     JSON)",
                ));
            }
            create::create(open, ident, creation.as_ref().clone()).await?;
            outcome.created = Some(creation.as_ref().clone());
            return Ok(outcome);
        }
        (Destination::Existing(_, Some(evolution)), false) => {
            commit_evolving_append(
                open.catalog.as_ref(),
                ident,
                outcome.files.clone(),
                evolution.as_ref().clone(),
                BTreeMap::new(),
                mode,
                &SystemEnvironment,
            )
            .await
        }
        (Destination::Existing(_, None), false) => {
            commit_append_with_mode(
                open.catalog.as_ref(),
                ident,
                outcome.files.clone(),
                BTreeMap::new(),
                mode,
                &SystemEnvironment,
            )
            .await
        }
        (Destination::Staged(staged, _), false) => {
            commit_create_append(
                open.catalog.as_ref(),
                ident,
                staged,
                outcome.files.clone(),
                mode,
                &SystemEnvironment,
            )
            .await
        }
    };
    match committed {
        Ok(done) => {
            if let Some(e) = evolution {
                outcome.schema_changes = e.changes().iter().map(ToString::to_string).collect();
            }
            outcome.snapshot_id = Some(done.snapshot_id);
            outcome.metadata_location = Some(done.metadata_location);
            if let Destination::Staged(_, creation) = destination {
                outcome.created = Some(*creation);
            }
            Ok(outcome)
        }
        Err(e) => {
            if !e.is_commit_state_unknown() {
                let paths = outcome.files.iter().map(|f| f.file_path.clone()).collect();
                let _ = io.delete_many(paths).await;
            }
            if e.is_already_exists() {
                return Err(Error::Table(format!(
                    "table `{ident}` was created by another writer meanwhile; nothing was \
                     committed (append to it without --create)"
                )));
            }
            Err(e.into())
        }
    }
}

/// Streams every input through one writer into data files of `table`; nothing is left
/// behind when it fails.
async fn write_files(
    args: &AppendArgs,
    io: &iceberg_io::FileIo,
    table: &Table,
    schema: &Schema,
    inputs: &[Input],
    progress: &Progress,
) -> Result<(Vec<DataFile>, u64)> {
    let meta = &table.metadata;
    let schema = schema.clone();
    let spec = meta.default_spec()?;
    // The input check below refuses sub-microsecond digits first, naming the input's row.
    let mut options = WriteOptions::from_table_properties(&meta.properties)?
        .with_floor_nanoseconds(args.allow_rounding);
    if let Some(order) = meta.default_sort_order().filter(|o| !o.is_unsorted()) {
        options = options.with_sort_order(order);
    }
    let mut writer = DataFileWriter::new(io, &meta.location, &schema, spec, None, &options)?;
    let target = Target {
        arrow: writer.arrow_schema().clone(),
        schema,
    };
    let bytes = Arc::new(AtomicU64::new(0));
    let (tx, mut rx) = mpsc::channel::<Msg>(2);
    let read = ReadOptions {
        batch_size: args.batch_size,
        delimiter: args.read.delimiter.clone(),
        nulls: args.read.nulls(),
        rules: Rules {
            allow_rounding: args.allow_rounding,
        },
    };
    let reader = {
        let (inputs, bytes) = (inputs.to_vec(), bytes.clone());
        std::thread::spawn(move || read_all(&inputs, &target, &read, &bytes, &tx))
    };
    let mut rows = 0u64;
    let name = |i: usize| inputs.get(i).map_or_else(String::new, Input::name);
    let failure = loop {
        match rx.recv().await {
            None => break None,
            Some(Msg::Failed(e)) => break Some(e),
            Some(Msg::Batch(i, batch)) => {
                if let Err(e) = writer.write(&batch).await {
                    // Data that does not fit the table is the input's fault; the rest is not.
                    break Some(if let iceberg_write::Error::UnexpectedColumn { .. } = &e {
                        Error::input(
                            name(i),
                            format!("{e} (pass --evolve to add it to the table's schema)"),
                        )
                    } else if e.is_invalid_data() {
                        Error::input(name(i), e.to_string())
                    } else {
                        e.into()
                    });
                }
                rows += batch.num_rows() as u64;
                progress.update(rows, bytes.load(Ordering::Relaxed), &name(i));
            }
        }
    };
    drop(rx); // the reader stops at its next send
    let failure = with_reader_panic(failure, reader.join(), inputs);
    if let Some(cause) = failure {
        let _ = writer.abort().await;
        return Err(Error::Aborted {
            cause: Box::new(cause),
        });
    }
    // A failed close has already deleted what the writer wrote.
    let files = writer.close().await.map_err(|e| Error::Aborted {
        cause: Box::new(e.into()),
    })?;
    Ok((files, rows))
}

/// `failure`, or the reader's panic as the failure: a reader that panicked ended the channel
/// as if every input were read, and what it read before must not be committed as the
/// whole input.
fn with_reader_panic<T>(
    failure: Option<Error>,
    joined: std::thread::Result<T>,
    inputs: &[Input],
) -> Option<Error> {
    match (failure, joined) {
        (Some(e), _) => Some(e),
        (None, Err(panic)) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".into());
            Some(Error::input(
                inputs
                    .iter()
                    .map(Input::name)
                    .collect::<Vec<_>>()
                    .join(", "),
                format!("reading the input failed unexpectedly (a panic: {what})"),
            ))
        }
        (None, Ok(_)) => None,
    }
}

/// The reader thread: every input in order, batch by batch, until done or the receiver
/// is gone.
fn read_all(
    inputs: &[Input],
    target: &Target,
    options: &ReadOptions,
    bytes: &Arc<AtomicU64>,
    tx: &mpsc::Sender<Msg>,
) {
    for (i, input) in inputs.iter().enumerate() {
        let batches = match input::open(input, target, options, bytes.clone()) {
            Ok(b) => b,
            Err(e) => {
                let _ = tx.blocking_send(Msg::Failed(Error::input(input.name(), e)));
                return;
            }
        };
        for batch in batches {
            let msg = match batch {
                Ok(b) if b.num_rows() == 0 => continue,
                Ok(b) => Msg::Batch(i, b),
                Err(e) => Msg::Failed(Error::input(input.name(), e)),
            };
            let failed = matches!(msg, Msg::Failed(_));
            if tx.blocking_send(msg).is_err() || failed {
                return;
            }
        }
    }
}

fn report(
    as_json: bool,
    ident: &TableIdent,
    inputs: &[Input],
    outcome: &Outcome,
    progress: &Progress,
) -> Result<()> {
    let secs = progress.elapsed().as_secs_f64();
    let file_bytes: i64 = outcome.files.iter().map(|f| f.file_size_in_bytes).sum();
    if as_json {
        let out = json!({
            "table": ident.to_string(),
            "created": outcome.created.is_some(),
            "schema": outcome.created.as_ref().map(|c| c.schema.to_json()),
            "snapshot_id": outcome.snapshot_id,
            "metadata_location": outcome.metadata_location,
            "added_data_files": outcome.files.len(),
            "added_records": outcome.rows,
            "added_files_size_bytes": file_bytes,
            "input_files": inputs.len(),
            "input_bytes": outcome.input_bytes,
            "schema_changes": outcome.schema_changes,
            "elapsed_ms": (secs * 1000.0).round() as u64,
            "data_files": outcome.files.iter().map(|f| &f.file_path).collect::<Vec<_>>(),
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    if let Some(creation) = &outcome.created {
        create::report_definition(false, ident, creation, "created")?;
    }
    if !outcome.schema_changes.is_empty() {
        outln!("schema evolved: {}", outcome.schema_changes.join(", "));
    }
    match outcome.snapshot_id {
        None => outln!(
            "no rows in {} input file(s); nothing committed",
            inputs.len()
        ),
        Some(id) => outln!(
            "snapshot {id}: added {} rows in {} data files ({} bytes) from {} input file(s), \
             {:.1} s, {:.0} rows/s",
            outcome.rows,
            outcome.files.len(),
            file_bytes,
            inputs.len(),
            secs,
            outcome.rows as f64 / secs.max(1e-3)
        ),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    /// A reader thread that panics (a corrupt page some decoder indexes past) ends the
    /// channel as a finished reader would: the append must fail, not commit what was read.
    #[test]
    fn a_reader_that_panicked_fails_the_append() {
        let joined = std::thread::spawn(|| -> u8 { panic!("page out of range") }).join();
        let e = with_reader_panic(None, joined, &[]).unwrap();
        assert!(e.to_string().contains("page out of range"), "{e}");
        assert!(with_reader_panic(None, Ok(()), &[]).is_none());
    }
}
