//! `iceberg append`: stream input files through one `DataFileWriter` and commit once.
//!
//! ```text
//! reader thread: file -> batches ──(bounded channel, 2 batches)──> writer.write (async)
//!                                                                      │ all inputs done
//!                                            writer.close -> data files -> one commit
//! ```
//! Any failure (unreadable input, schema mismatch, null in a required column, a refused
//! commit) aborts the writer, which deletes every file it wrote, so nothing is committed
//! and nothing is left behind; a table this command created is dropped again.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow_array::RecordBatch;
use iceberg_append::{AppendMode, SystemEnvironment, Table, TableIdent, commit_append_with_mode};
use iceberg_spec::DataFile;
use iceberg_write::{DataFileWriter, WriteOptions};
use serde_json::json;
use tokio::sync::mpsc;

use super::create::{self, Created};
use crate::catalog::{OpenCatalog, parse_table_name};
use crate::cli::{AppendArgs, Cli};
use crate::error::{Error, Result};
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
    created: bool,
}

/// Runs `iceberg append`.
///
/// # Errors
/// A bad input (named with its file and column), a missing table without `--create`, or a
/// failed commit; the table is then unchanged.
pub(crate) async fn run(cli: &Cli, args: &AppendArgs) -> Result<()> {
    let ident = parse_table_name(&args.table)?;
    let inputs = input::expand(&args.inputs, args.format)?;
    for i in &inputs {
        input::delimiter_for(&i.path, &args.delimiter)?;
    }
    if args.batch_size == 0 {
        return Err(Error::Usage("--batch-size must be positive".into()));
    }
    let open = OpenCatalog::open(cli, true).await?;
    let progress = Progress::new(inputs.iter().map(|i| i.size).sum(), !cli.json);
    let result = append(args, &open, &ident, &inputs, &progress).await;
    progress.clear();
    open.close().await;
    let outcome = result?;
    report(cli.json, &ident, &inputs, &outcome, &progress)
}

async fn append(
    args: &AppendArgs,
    open: &OpenCatalog,
    ident: &TableIdent,
    inputs: &[Input],
    progress: &Progress,
) -> Result<Outcome> {
    let (table, created) = match open.catalog.load_table(ident).await {
        Ok(_) if !args.def.given().is_empty() => {
            // Accepted and ignored, they would leave the user believing the table changed.
            return Err(Error::Usage(format!(
                "table `{ident}` exists, and {} only shape a new table: the table keeps its \
                 own schema, partition spec, sort order, format version and properties \
                 (`iceberg inspect {ident}` shows them); drop the option(s) to append",
                args.def.given().join(", ")
            )));
        }
        Ok(t) => (t, None),
        Err(e) if e.is_not_found() => {
            if !args.create {
                return Err(Error::Table(format!(
                    "table `{ident}` does not exist (pass --create to create it from the inputs' schema)"
                )));
            }
            let source = match &args.def.schema_from {
                Some(p) => p.clone(),
                None => inputs
                    .first()
                    .map(|i| i.path.clone())
                    .ok_or_else(|| Error::Usage("no input files".into()))?,
            };
            let schema = create::schema_from_file(
                &source,
                args.def.format_version(),
                Some(&args.delimiter),
            )?;
            let creation = create::creation(&args.def, schema)?;
            let (t, c) = create::create(open, ident, creation).await?;
            (t, Some(c))
        }
        Err(e) => return Err(e.into()),
    };
    let result = write_and_commit(args, open, ident, &table, inputs, progress).await;
    match (result, created) {
        (Ok(mut outcome), created) => {
            outcome.created = created.is_some();
            Ok(outcome)
        }
        (Err(e), Some(c)) => {
            undo_create(open, ident, c).await;
            Err(e)
        }
        (Err(e), None) => Err(e),
    }
}

/// Drops a table (and namespace) this command created, so a failed run leaves no trace.
async fn undo_create(open: &OpenCatalog, ident: &TableIdent, created: Created) {
    let _ = open.catalog.drop_table(ident, true).await;
    if created.namespace {
        let _ = open.catalog.drop_namespace(&ident.namespace_ident()).await;
    }
}

async fn write_and_commit(
    args: &AppendArgs,
    open: &OpenCatalog,
    ident: &TableIdent,
    table: &Table,
    inputs: &[Input],
    progress: &Progress,
) -> Result<Outcome> {
    let meta = &table.metadata;
    let schema = meta.current_schema()?.clone();
    let spec = meta.default_spec()?;
    let mut options = WriteOptions::from_table_properties(&meta.properties)?;
    if let Some(order) = meta.default_sort_order().filter(|o| !o.is_unsorted()) {
        options = options.with_sort_order(order);
    }
    let io = open.catalog.table_io(table);
    let mut writer = DataFileWriter::new(&io, &meta.location, &schema, spec, None, &options)?;
    let target = Target {
        arrow: writer.arrow_schema().clone(),
        schema,
    };
    let bytes = Arc::new(AtomicU64::new(0));
    let (tx, mut rx) = mpsc::channel::<Msg>(2);
    let reader = {
        let (inputs, bytes) = (inputs.to_vec(), bytes.clone());
        let (batch_size, delimiter) = (args.batch_size, args.delimiter.clone());
        std::thread::spawn(move || read_all(&inputs, &target, batch_size, &delimiter, &bytes, &tx))
    };
    let mut rows = 0u64;
    let name = |i: usize| {
        inputs
            .get(i)
            .map_or_else(String::new, |x| x.path.display().to_string())
    };
    let failure = loop {
        match rx.recv().await {
            None => break None,
            Some(Msg::Failed(e)) => break Some(e),
            Some(Msg::Batch(i, batch)) => {
                if let Err(e) = writer.write(&batch).await {
                    // Data that does not fit the table is the input's fault; the rest is not.
                    break Some(if e.is_invalid_data() {
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
    let _ = reader.join();
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
    let input_bytes = inputs.iter().map(|i| i.size).sum();
    if files.is_empty() {
        return Ok(Outcome {
            snapshot_id: None,
            metadata_location: None,
            files,
            rows,
            input_bytes,
            created: false,
        });
    }
    let mode = match (args.merge, args.fast) {
        (true, _) => Some(AppendMode::Merge),
        (_, true) => Some(AppendMode::Fast),
        _ => None,
    };
    let committed = commit_append_with_mode(
        open.catalog.as_ref(),
        ident,
        files.clone(),
        BTreeMap::new(),
        mode,
        &SystemEnvironment,
    )
    .await;
    match committed {
        Ok(done) => Ok(Outcome {
            snapshot_id: Some(done.snapshot_id),
            metadata_location: Some(done.metadata_location),
            files,
            rows,
            input_bytes,
            created: false,
        }),
        Err(e) => {
            if !e.is_commit_state_unknown() {
                let paths = files.iter().map(|f| f.file_path.clone()).collect();
                let _ = io.delete_many(paths).await;
            }
            Err(e.into())
        }
    }
}

/// The reader thread: every input in order, batch by batch, until done or the receiver
/// is gone.
fn read_all(
    inputs: &[Input],
    target: &Target,
    batch_size: usize,
    delimiter: &str,
    bytes: &Arc<AtomicU64>,
    tx: &mpsc::Sender<Msg>,
) {
    for (i, input) in inputs.iter().enumerate() {
        let options = match input::delimiter_for(&input.path, delimiter) {
            Ok(delimiter) => ReadOptions {
                batch_size,
                delimiter,
            },
            Err(e) => {
                let _ = tx.blocking_send(Msg::Failed(e));
                return;
            }
        };
        let file = || input.path.display();
        let batches = match input::open(input, target, &options, bytes.clone()) {
            Ok(b) => b,
            Err(e) => {
                let _ = tx.blocking_send(Msg::Failed(Error::input(file(), e)));
                return;
            }
        };
        for batch in batches {
            let msg = match batch {
                Ok(b) if b.num_rows() == 0 => continue,
                Ok(b) => Msg::Batch(i, b),
                Err(e) => Msg::Failed(Error::input(file(), e)),
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
            "created": outcome.created,
            "snapshot_id": outcome.snapshot_id,
            "metadata_location": outcome.metadata_location,
            "added_data_files": outcome.files.len(),
            "added_records": outcome.rows,
            "added_files_size_bytes": file_bytes,
            "input_files": inputs.len(),
            "input_bytes": outcome.input_bytes,
            "elapsed_ms": (secs * 1000.0).round() as u64,
            "data_files": outcome.files.iter().map(|f| &f.file_path).collect::<Vec<_>>(),
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    if outcome.created {
        outln!("created table {ident}");
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
