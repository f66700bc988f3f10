//! Writers: one Parquet file (`file`), and the streaming, partitioned, rolling
//! [`DataFileWriter`] built on it (`partitioned`).

mod dictionary;
mod encode;
mod file;
mod partitioned;

pub use partitioned::DataFileWriter;
