//! Which files the command line names, in what format and compression, and their bytes.
//!
//! An argument is a file, a glob (`data/*.csv`, matches sorted), a folder (every data file
//! under it, recursively, sorted; names starting with `.` or `_`, such as Spark's
//! `_SUCCESS`, are skipped) or `-` for standard input (with `--format`; it is copied to a
//! temporary file first, since a schema is inferred from one pass and rows read in
//! another). CSV and NDJSON may be gzip (`.gz`) or zstd (`.zst`) compressed; the format is
//! then told by the extension before it (`events.csv.gz`). The same file named twice is
//! refused: it would be appended twice.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use clap::ValueEnum;

use super::Counting;
use crate::cli::InputFormat;
use crate::error::{Error, Result};

/// How an input's bytes are compressed (Parquet and Arrow IPC compress inside the file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Compression {
    /// Not compressed.
    None,
    /// gzip (`.gz`).
    Gzip,
    /// zstd (`.zst`).
    Zstd,
}

/// One input file.
#[derive(Debug, Clone)]
pub(crate) struct Input {
    /// Its path (for standard input, the temporary copy).
    pub(crate) path: PathBuf,
    /// Its format.
    pub(crate) format: InputFormat,
    /// Its compression.
    pub(crate) compression: Compression,
    /// Its size in bytes (compressed).
    pub(crate) size: u64,
    /// The copy of standard input, removed when the last clone is dropped.
    stdin: Option<Arc<tempfile::TempPath>>,
}

impl Input {
    /// The input as the user named it, for messages.
    pub(crate) fn name(&self) -> String {
        if self.stdin.is_some() {
            "<stdin>".into()
        } else {
            self.path.display().to_string()
        }
    }
}

fn compression_of(path: &Path) -> Compression {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("gz" | "gzip") => Compression::Gzip,
        Some("zst" | "zstd") => Compression::Zstd,
        _ => Compression::None,
    }
}

/// The extension that says the format: the last one, or the one before `.gz` / `.zst`.
pub(crate) fn stem_extension(path: &Path) -> Option<&str> {
    if compression_of(path) == Compression::None {
        path.extension()?.to_str()
    } else {
        Path::new(path.file_stem()?).extension()?.to_str()
    }
}

/// The format `path` has by its extension.
pub(crate) fn format_of(path: &Path) -> Option<InputFormat> {
    Some(match stem_extension(path)?.to_ascii_lowercase().as_str() {
        "parquet" | "pq" | "parq" => InputFormat::Parquet,
        "csv" | "tsv" | "txt" => InputFormat::Csv,
        "json" | "ndjson" | "jsonl" => InputFormat::Json,
        "arrow" | "arrows" | "ipc" | "feather" => InputFormat::Ipc,
        _ => return None,
    })
}

const KNOWN: &str = "use .parquet, .csv, .tsv, .json/.ndjson/.jsonl, .arrow/.arrows/.feather, \
                     optionally .gz or .zst for CSV and JSON, or pass --format";

/// The files `patterns` name, in order.
///
/// # Errors
/// A bad pattern, a pattern, path or folder that names no data file, a file of unknown
/// format, a compressed Parquet or IPC file, standard input without `--format`, or a file
/// named twice.
pub(crate) fn expand(
    patterns: &[String],
    forced: Option<InputFormat>,
    forced_compression: Option<Compression>,
) -> Result<Vec<Input>> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for pattern in patterns {
        if pattern == "-" {
            let format = forced.ok_or_else(|| {
                Error::Usage("standard input (`-`) needs --format to say what it holds".into())
            })?;
            out.push(stdin(
                format,
                forced_compression.unwrap_or(Compression::None),
            )?);
            continue;
        }
        let paths = paths_of(pattern)?;
        let folder = Path::new(pattern).is_dir();
        for path in paths {
            let meta = std::fs::metadata(&path)
                .map_err(|e| Error::input(path.display(), format!("cannot read: {e}")))?;
            let format = match forced.or_else(|| format_of(&path)) {
                Some(f) => f,
                // A folder may hold other files (logs, checksums); a named file must be data.
                None if folder => continue,
                None => {
                    return Err(Error::input(
                        path.display(),
                        format!("unknown format ({KNOWN})"),
                    ));
                }
            };
            let compression = forced_compression.unwrap_or_else(|| compression_of(&path));
            if compression != Compression::None
                && matches!(format, InputFormat::Parquet | InputFormat::Ipc)
            {
                return Err(Error::input(
                    path.display(),
                    "Parquet and Arrow IPC files compress their own pages and buffers: give \
                     the file uncompressed",
                ));
            }
            let canonical = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            if !seen.insert(canonical) {
                return Err(Error::Usage(format!(
                    "`{}` is named twice (directly, by a glob or inside a folder): its rows \
                     would be appended twice",
                    path.display()
                )));
            }
            out.push(Input {
                path,
                format,
                compression,
                size: meta.len(),
                stdin: None,
            });
        }
    }
    Ok(out)
}

/// The paths one argument names: a glob's matches, a folder's files, or the path itself.
fn paths_of(pattern: &str) -> Result<Vec<PathBuf>> {
    if pattern.contains(['*', '?', '[']) {
        let mut found: Vec<PathBuf> = glob::glob(pattern)
            .map_err(|e| Error::Usage(format!("bad glob `{pattern}`: {e}")))?
            .filter_map(std::result::Result::ok)
            .filter(|p| p.is_file())
            .collect();
        found.sort();
        if found.is_empty() {
            return Err(Error::input(pattern, "matches no file"));
        }
        return Ok(found);
    }
    let path = PathBuf::from(pattern);
    if !path.is_dir() {
        return Ok(vec![path]);
    }
    let mut found = Vec::new();
    walk(&path, &mut found)?;
    found.sort();
    if !found.iter().any(|p| format_of(p).is_some()) {
        return Err(Error::input(
            pattern,
            format!("folder holds no data file ({KNOWN})"),
        ));
    }
    Ok(found)
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) -> Result<()> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Error::input(dir.display(), format!("cannot list: {e}")))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::input(dir.display(), format!("cannot list: {e}")))?;
        let name = entry.file_name();
        if name.to_string_lossy().starts_with(['.', '_']) {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            walk(&path, found)?;
        } else {
            found.push(path);
        }
    }
    Ok(())
}

/// Standard input, copied to a temporary file.
fn stdin(format: InputFormat, compression: Compression) -> Result<Input> {
    let mut file = tempfile::NamedTempFile::new()
        .map_err(|e| Error::input("<stdin>", format!("cannot make a temporary copy: {e}")))?;
    let size = std::io::copy(&mut std::io::stdin().lock(), file.as_file_mut())
        .map_err(|e| Error::input("<stdin>", format!("cannot read: {e}")))?;
    let path = file.into_temp_path();
    Ok(Input {
        path: path.to_path_buf(),
        format,
        compression,
        size,
        stdin: Some(Arc::new(path)),
    })
}

/// The bytes of a CSV or JSON `input`, decompressed; `progress` counts them as stored.
pub(crate) fn bytes(
    input: &Input,
    progress: Arc<AtomicU64>,
) -> std::result::Result<BufReader<Box<dyn std::io::Read + Send>>, String> {
    let file = File::open(&input.path).map_err(|e| format!("cannot open: {e}"))?;
    let counted = BufReader::new(Counting::new(file, progress));
    let read: Box<dyn std::io::Read + Send> = match input.compression {
        Compression::None => Box::new(counted),
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(counted)),
        Compression::Zstd => Box::new(
            zstd::stream::read::Decoder::with_buffer(counted)
                .map_err(|e| format!("not zstd: {e}"))?,
        ),
    };
    Ok(BufReader::with_capacity(1 << 16, read))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::io::{Read, Write};

    use super::*;

    #[test]
    fn formats_by_the_extension_before_the_compression() {
        assert_eq!(format_of(Path::new("a.csv.gz")), Some(InputFormat::Csv));
        assert_eq!(
            format_of(Path::new("a.ndjson.zst")),
            Some(InputFormat::Json)
        );
        assert_eq!(format_of(Path::new("a.gz")), None);
        assert_eq!(compression_of(Path::new("a.CSV.GZ")), Compression::Gzip);
        assert_eq!(stem_extension(Path::new("a.tsv.zst")), Some("tsv"));
    }

    #[test]
    fn folders_compressions_and_twice_named_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("d/sub")).unwrap();
        std::fs::write(root.join("d/b.csv"), "a\n1\n").unwrap();
        std::fs::write(root.join("d/_SUCCESS"), "").unwrap();
        std::fs::write(root.join("d/.hidden.csv"), "x").unwrap();
        std::fs::write(root.join("d/notes.md"), "x").unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(b"a\n2\n").unwrap();
        std::fs::write(root.join("d/sub/a.csv.gz"), gz.finish().unwrap()).unwrap();
        std::fs::write(
            root.join("d/sub/c.csv.zst"),
            zstd::encode_all(&b"a\n3\n"[..], 3).unwrap(),
        )
        .unwrap();
        let d = root.join("d").display().to_string();
        let inputs = expand(std::slice::from_ref(&d), None, None).unwrap();
        let names: Vec<_> = inputs
            .iter()
            .map(|i| i.path.strip_prefix(root).unwrap().display().to_string())
            .collect();
        assert_eq!(names, ["d/b.csv", "d/sub/a.csv.gz", "d/sub/c.csv.zst"]);
        let mut texts = Vec::new();
        for i in &inputs {
            let mut r = bytes(i, Arc::default()).unwrap();
            let mut s = String::new();
            r.read_to_string(&mut s).unwrap();
            texts.push(s);
        }
        assert_eq!(texts, ["a\n1\n", "a\n2\n", "a\n3\n"]);
        let twice = [d.clone(), root.join("d/b.csv").display().to_string()];
        let e = expand(&twice, None, None).unwrap_err().to_string();
        assert!(e.contains("named twice"), "{e}");
        std::fs::create_dir(root.join("empty")).unwrap();
        let e = expand(&[root.join("empty").display().to_string()], None, None).unwrap_err();
        assert!(e.to_string().contains("no data file"), "{e}");
        let e = expand(&["-".into()], None, None).unwrap_err();
        assert!(e.to_string().contains("--format"), "{e}");
    }
}
