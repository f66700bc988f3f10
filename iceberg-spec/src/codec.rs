//! Compression codecs by the names table properties give them: the one parse of
//! `write.parquet.compression-codec` and `write.avro.compression-codec` (and Java's
//! `write.manifest.compression-codec`). An unknown name is an error naming it, never a silent
//! default; the crates that encode map these enums exhaustively.

use std::fmt;
use std::str::FromStr;

/// The codec of Avro files (manifests and manifest lists).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AvroCodec {
    /// Deflate: the property's `gzip` (Java's default) or `deflate`.
    Deflate,
    /// Snappy.
    Snappy,
    /// Zstandard.
    Zstd,
    /// No compression (`uncompressed` or `none`).
    Uncompressed,
}

impl AvroCodec {
    /// The names a property may give, as Java accepts them.
    pub const NAMES: &'static [&'static str] =
        &["gzip", "deflate", "snappy", "zstd", "uncompressed", "none"];

    /// The property value naming this codec.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Deflate => "gzip",
            Self::Snappy => "snappy",
            Self::Zstd => "zstd",
            Self::Uncompressed => "uncompressed",
        }
    }
}

impl FromStr for AvroCodec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "gzip" | "deflate" => Ok(Self::Deflate),
            "snappy" => Ok(Self::Snappy),
            "zstd" => Ok(Self::Zstd),
            "uncompressed" | "none" => Ok(Self::Uncompressed),
            _ => Err(format!("expected one of {}", Self::NAMES.join(", "))),
        }
    }
}

impl fmt::Display for AvroCodec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The codec of Parquet data files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParquetCodec {
    /// Zstandard (Java's default).
    Zstd,
    /// Snappy.
    Snappy,
    /// Gzip.
    Gzip,
    /// LZ4 (written as Parquet's `LZ4_RAW`).
    Lz4,
    /// Brotli.
    Brotli,
    /// No compression (`uncompressed` or `none`).
    Uncompressed,
}

impl ParquetCodec {
    /// The names a property may give.
    pub const NAMES: &'static [&'static str] = &[
        "zstd",
        "snappy",
        "gzip",
        "lz4",
        "lz4_raw",
        "brotli",
        "uncompressed",
        "none",
    ];

    /// The property value naming this codec.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Zstd => "zstd",
            Self::Snappy => "snappy",
            Self::Gzip => "gzip",
            Self::Lz4 => "lz4",
            Self::Brotli => "brotli",
            Self::Uncompressed => "uncompressed",
        }
    }
}

impl FromStr for ParquetCodec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "zstd" => Ok(Self::Zstd),
            "snappy" => Ok(Self::Snappy),
            "gzip" => Ok(Self::Gzip),
            // Java's `lz4` is Hadoop's framing; both are written as `LZ4_RAW`, which every
            // reader decodes.
            "lz4" | "lz4_raw" => Ok(Self::Lz4),
            "brotli" => Ok(Self::Brotli),
            "uncompressed" | "none" => Ok(Self::Uncompressed),
            _ => Err(format!("expected one of {}", Self::NAMES.join(", "))),
        }
    }
}

impl fmt::Display for ParquetCodec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn every_name_parses_and_renders_back_to_an_accepted_name() {
        for name in AvroCodec::NAMES {
            let codec: AvroCodec = name.parse().unwrap();
            assert!(AvroCodec::NAMES.contains(&codec.as_str()));
            assert_eq!(codec.as_str().parse::<AvroCodec>().unwrap(), codec);
        }
        for name in ParquetCodec::NAMES {
            let codec: ParquetCodec = name.parse().unwrap();
            assert_eq!(codec.as_str().parse::<ParquetCodec>().unwrap(), codec);
        }
        assert_eq!("GZIP ".parse::<AvroCodec>().unwrap(), AvroCodec::Deflate);
    }

    #[test]
    fn unknown_names_are_refused() {
        assert!("lz4".parse::<AvroCodec>().is_err(), "not an Avro codec");
        assert!("lzo".parse::<ParquetCodec>().is_err());
        assert!("".parse::<ParquetCodec>().is_err());
    }
}
