//! Helpers the test modules share.

use iceberg_spec::DataFile;

/// A data file record of `rows` rows under the test table `memory://wh/db/t`.
pub(crate) fn data_file(name: &str, rows: i64) -> DataFile {
    DataFile {
        file_path: format!("memory://wh/db/t/data/{name}.parquet"),
        record_count: rows,
        file_size_in_bytes: 100 + rows,
        ..Default::default()
    }
}
