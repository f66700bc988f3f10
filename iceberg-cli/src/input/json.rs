//! Newline-delimited JSON inputs, decoded straight into the table's Arrow types (fields
//! nullable, so a missing required value is reported by the writer against its column);
//! a key the table does not have is refused.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use arrow_json::ReaderBuilder;
use arrow_schema::Schema as ArrowSchema;

use super::{Batches, Counting, INFER_SCHEMA_RECORDS, ReadOptions, Target, all_nullable};

/// The schema inferred from the first records.
pub(crate) fn infer_schema(path: &Path) -> Result<ArrowSchema, String> {
    let f = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let (schema, _) =
        arrow_json::reader::infer_json_schema(BufReader::new(f), Some(INFER_SCHEMA_RECORDS))
            .map_err(|e| format!("not newline-delimited JSON: {e}"))?;
    Ok(schema)
}

/// The file's batches in the table's types.
pub(crate) fn open(
    path: &Path,
    target: &Target,
    options: &ReadOptions,
    progress: Arc<AtomicU64>,
) -> Result<Batches, String> {
    let f = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let reader = ReaderBuilder::new(all_nullable(&target.arrow))
        .with_batch_size(options.batch_size)
        .with_strict_mode(true)
        .build(BufReader::new(Counting::new(f, progress)))
        .map_err(|e| format!("cannot read JSON: {e}"))?;
    Ok(Box::new(reader.map(|b| {
        b.map_err(|e| {
            let text = e.to_string();
            if text.contains("missing from schema") {
                format!("{text} (the table has no such column)")
            } else {
                format!("cannot read JSON: {text}")
            }
        })
    })))
}
