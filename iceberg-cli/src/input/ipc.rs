//! Arrow IPC inputs: the file format (`.arrow`, `.feather`, read batch by batch as written)
//! and, when a file does not start with the file magic, the stream format (`.arrows`).

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use arrow_ipc::reader::{FileReader, StreamReader};
use arrow_schema::Schema as ArrowSchema;

use super::{Batches, Counting};

const FILE_MAGIC: &[u8; 6] = b"ARROW1";

fn is_file_format(path: &Path) -> Result<bool, String> {
    let mut head = [0u8; 6];
    let mut f = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let n = f.read(&mut head).map_err(|e| format!("cannot read: {e}"))?;
    Ok(n == 6 && &head == FILE_MAGIC)
}

/// The file's Arrow schema.
pub(crate) fn schema(path: &Path) -> Result<ArrowSchema, String> {
    let batches_schema = if is_file_format(path)? {
        let f = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
        FileReader::try_new(BufReader::new(f), None)
            .map_err(|e| format!("not an Arrow IPC file: {e}"))?
            .schema()
    } else {
        let f = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
        StreamReader::try_new(BufReader::new(f), None)
            .map_err(|e| format!("not an Arrow IPC stream: {e}"))?
            .schema()
    };
    Ok(batches_schema.as_ref().clone())
}

/// The file's batches, as they were written.
pub(crate) fn open(path: &Path, progress: Arc<AtomicU64>) -> Result<Batches, String> {
    let f = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let counted = BufReader::new(Counting::new(f, progress));
    let err = |e: arrow_schema::ArrowError| format!("cannot read Arrow IPC: {e}");
    if is_file_format(path)? {
        let reader = FileReader::try_new(counted, None)
            .map_err(|e| format!("not an Arrow IPC file: {e}"))?;
        Ok(Box::new(reader.map(move |b| b.map_err(err))))
    } else {
        let reader = StreamReader::try_new(counted, None)
            .map_err(|e| format!("not an Arrow IPC stream: {e}"))?;
        Ok(Box::new(reader.map(move |b| b.map_err(err))))
    }
}
