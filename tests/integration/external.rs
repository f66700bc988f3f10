//! The external Python readers (PyIceberg, pyarrow, fastavro): `iceberg_testing::external`.

pub(crate) use iceberg_testing::external::{python, run_json};
