//! File IO for the Iceberg writer: the layer that reads, writes, lists and deletes objects.
//!
//! This crate is the IO layer. It knows nothing of Iceberg (no metadata, manifests or
//! Parquet): it moves bytes to and from object stores named by full URIs, on top of the
//! [`object_store`] crate. Higher layers (`iceberg-write`, `iceberg-append`) depend on it;
//! it depends on no other crate of the workspace.
//!
//! Paths are full URIs and each is routed by its scheme and bucket, so one [`FileIo`] serves
//! a table whose files live in several places:
//!
//! | scheme                                   | store                 | cargo feature |
//! |------------------------------------------|-----------------------|---------------|
//! | `/abs/path`, `file:///abs/path`, `file:/abs/path` | local disk   | (always)      |
//! | `memory://bucket/key`                    | in memory             | (always)      |
//! | `s3://bucket/key`, `s3a://bucket/key`    | Amazon S3 and clones  | `s3`          |
//! | `gs://bucket/key`                        | Google Cloud Storage  | `gcs`         |
//! | `abfss://container@account.dfs.core.windows.net/key`, `az://container/key` | Azure | `azure` |
//!
//! Stores are configured by Iceberg property names (`s3.endpoint`, `s3.region`, ...; see
//! [`config`]), on top of the usual environment variables (`AWS_*`, `GOOGLE_*`, `AZURE_*`).
//!
//! # Module map
//!
//! - [`file_io`]: [`FileIo`], the entry point: read, range read, put, atomic
//!   create ([`FileIo::put_if_absent`]), streaming writes, delete, list.
//! - [`writer`]: [`FileWriter`], a streaming (multipart) upload that is visible only once
//!   closed; implements `tokio::io::AsyncWrite` for parquet's `AsyncArrowWriter`.
//! - [`config`]: property keys and their typed, parsed form.
//! - [`error`]: [`Error`] and the [`Result`] alias.
//! - `testing` (feature `testing`): a fault-injecting, operation-recording store wrapper.
//! - `location` and `store` (private): URI parsing, and building a store per scheme.
//!
//! # Example
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use iceberg_io::FileIo;
//! use tokio::io::AsyncWriteExt;
//!
//! let io = FileIo::memory();
//! io.put_if_absent("memory://wh/t/metadata/v1.json", "{}".into()).await?;
//! let again = io.put_if_absent("memory://wh/t/metadata/v1.json", "{}".into()).await;
//! assert!(again.unwrap_err().is_already_exists());
//!
//! let mut writer = io.writer("memory://wh/t/data/a.bin").await?;
//! writer.write_all(b"hello ").await?;
//! writer.write_all(b"world").await?;
//! assert_eq!(writer.close().await?, 11);
//!
//! assert_eq!(io.read_range("memory://wh/t/data/a.bin", 6..11).await?, "world");
//! assert_eq!(
//!     io.list("memory://wh/t").await?,
//!     ["memory://wh/t/data/a.bin", "memory://wh/t/metadata/v1.json"]
//! );
//! assert!(io.read("memory://wh/t/nope").await.unwrap_err().is_not_found());
//! # Ok(())
//! # }
//! ```

pub mod config;
pub mod error;
pub mod file_io;
mod location;
mod store;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod writer;

pub use object_store;

pub use crate::config::{FileIoConfig, WriteConfig};
pub use crate::error::{Error, Result};
pub use crate::file_io::{DirListing, FileIo, ObjectIdentity, ObjectInfo};
pub use crate::location::{Family as StoreFamily, canonical_location};
pub use crate::writer::FileWriter;
