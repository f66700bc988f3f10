//! Avro binary encoding of manifest entries and manifest-list rows, straight to bytes.
//!
//! The writer schemas are ours ([`super::schema`]), so each record is encoded field by field
//! in schema order without building generic Avro values: building and validating
//! `apache_avro::types::Value`s cost tens of microseconds per entry, which made a commit of
//! 100,000 files take half a minute. The decoder stays apache-avro's, and the tests decode
//! what is encoded here with it (and with fastavro and PyIceberg in the integration tests).
//!
//! Spec: Avro 1.11 "Binary Encoding"; optional fields are `["null", T]` unions.

use std::collections::BTreeMap;

use iceberg_spec::{
    Datum, FieldSummary, FormatVersion, ManifestEntry, ManifestFile, PrimitiveType, StructType,
    Type,
};

use super::container::{put_bytes, put_long};
use crate::error::{Error, Result};

/// Java's `block_size_in_bytes` for v1 manifests.
const V1_BLOCK_SIZE_BYTES: i64 = 64 * 1024 * 1024;

fn put_int(out: &mut Vec<u8>, v: i32) {
    put_long(out, i64::from(v));
}

fn put_bool(out: &mut Vec<u8>, v: bool) {
    out.push(u8::from(v));
}

fn put_null(out: &mut Vec<u8>) {
    put_long(out, 0);
}

fn put_opt_long(out: &mut Vec<u8>, v: Option<i64>) {
    if let Some(v) = v {
        put_long(out, 1);
        put_long(out, v);
    } else {
        put_null(out);
    }
}

fn put_opt_int(out: &mut Vec<u8>, v: Option<i32>) {
    // Avro ints and longs share the zig-zag varint encoding.
    put_opt_long(out, v.map(i64::from));
}

fn put_opt_bool(out: &mut Vec<u8>, v: Option<bool>) {
    if let Some(v) = v {
        put_long(out, 1);
        put_bool(out, v);
    } else {
        put_null(out);
    }
}

fn put_opt_bytes(out: &mut Vec<u8>, v: Option<&[u8]>) {
    if let Some(v) = v {
        put_long(out, 1);
        put_bytes(out, v);
    } else {
        put_null(out);
    }
}

/// An optional array: `null`, or one block of `items` then the end marker.
fn put_opt_array<T>(out: &mut Vec<u8>, items: Option<&[T]>, mut put: impl FnMut(&mut Vec<u8>, &T)) {
    let Some(items) = items else {
        put_null(out);
        return;
    };
    put_long(out, 1);
    if !items.is_empty() {
        put_long(out, items.len() as i64);
        for item in items {
            put(out, item);
        }
    }
    put_long(out, 0);
}

/// An optional int-keyed map, which Iceberg writes as an array of key/value records.
fn put_int_map<V>(out: &mut Vec<u8>, m: &BTreeMap<i32, V>, mut put: impl FnMut(&mut Vec<u8>, &V)) {
    put_long(out, 1);
    if !m.is_empty() {
        put_long(out, m.len() as i64);
        for (k, v) in m {
            put_int(out, *k);
            put(out, v);
        }
    }
    put_long(out, 0);
}

/// The partition tuple's primitive types, in spec order (partition results are primitive).
pub(crate) fn partition_types(pt: &StructType) -> Vec<PrimitiveType> {
    pt.fields
        .iter()
        .map(|f| match &f.field_type {
            Type::Primitive(p) => p.clone(),
            _ => PrimitiveType::Binary,
        })
        .collect()
}

/// Encodes a partition value in the Avro type [`super::schema`] declares for `ty`, or says
/// why it does not fit.
fn put_datum(out: &mut Vec<u8>, d: &Datum, ty: &PrimitiveType) -> std::result::Result<(), String> {
    use PrimitiveType as P;
    match (d, ty) {
        (Datum::Boolean(v), P::Boolean) => put_bool(out, *v),
        (Datum::Int(v), P::Int) | (Datum::Date(v), P::Date) => put_int(out, *v),
        (Datum::Long(v), P::Long)
        | (Datum::Time(v), P::Time)
        | (Datum::Timestamp(v), P::Timestamp)
        | (Datum::Timestamptz(v), P::Timestamptz)
        | (Datum::TimestampNs(v), P::TimestampNs)
        | (Datum::TimestamptzNs(v), P::TimestamptzNs) => put_long(out, *v),
        (Datum::Float(v), P::Float) => out.extend_from_slice(&v.to_le_bytes()),
        (Datum::Double(v), P::Double) => out.extend_from_slice(&v.to_le_bytes()),
        (Datum::String(v), P::String) => put_bytes(out, v.as_bytes()),
        (Datum::Uuid(v), P::Uuid) => out.extend_from_slice(v.as_bytes()),
        (Datum::Fixed(v), P::Fixed(len)) if v.len() as u64 == *len => out.extend_from_slice(v),
        (Datum::Fixed(v), P::Fixed(len)) => {
            return Err(format!("{} bytes for a fixed[{len}]", v.len()));
        }
        (Datum::Binary(v), P::Binary) => put_bytes(out, v),
        (
            Datum::Decimal { unscaled, .. },
            P::Decimal {
                precision,
                scale: _,
            },
        ) => {
            // A fixed of the precision's minimum size, big-endian two's complement; the bytes
            // dropped must be pure sign extension or the value does not fit the precision.
            let size = PrimitiveType::decimal_required_bytes(*precision);
            let full = unscaled.to_be_bytes();
            let (dropped, kept) = full.split_at(16 - size);
            let sign = if *unscaled < 0 { 0xFF } else { 0 };
            if dropped.iter().any(|b| *b != sign) || (kept[0] & 0x80 != 0) != (*unscaled < 0) {
                return Err(format!("{unscaled} does not fit {ty}"));
            }
            out.extend_from_slice(kept);
        }
        (d, ty) => return Err(format!("{d:?} is not a {ty}")),
    }
    Ok(())
}

/// Appends a manifest entry in the version's `manifest_entry` schema.
///
/// # Errors
/// [`Error::InvalidDataFile`] when the partition tuple does not fit the partition type.
pub(crate) fn put_entry(
    out: &mut Vec<u8>,
    e: &ManifestEntry,
    version: FormatVersion,
    pt: &StructType,
    types: &[PrimitiveType],
) -> Result<()> {
    let v1 = version == FormatVersion::V1;
    let v3 = version == FormatVersion::V3;
    let f = &e.data_file;
    let invalid = |reason: String| Error::InvalidDataFile {
        path: f.file_path.clone(),
        reason,
    };
    if f.partition.len() != types.len() {
        return Err(invalid(format!(
            "partition tuple has {} values but spec {} has {} fields",
            f.partition.len(),
            f.spec_id,
            types.len()
        )));
    }

    put_int(out, e.status.code());
    put_opt_long(out, e.snapshot_id);
    if !v1 {
        put_opt_long(out, e.sequence_number);
        put_opt_long(out, e.file_sequence_number);
    }
    // data_file
    if !v1 {
        put_int(out, f.content.code());
    }
    put_bytes(out, f.file_path.as_bytes());
    put_bytes(out, f.file_format.as_str().as_bytes());
    for ((field, value), ty) in pt.fields.iter().zip(&f.partition).zip(types) {
        match value {
            // The Avro `null` type (no union): nothing to write.
            None if *ty == PrimitiveType::Unknown => {}
            Some(_) if *ty == PrimitiveType::Unknown => {
                return Err(invalid(format!(
                    "partition field `{}` is always null (its source column was dropped)",
                    field.name
                )));
            }
            None => put_null(out),
            Some(d) => {
                put_long(out, 1);
                put_datum(out, d, ty).map_err(|why| {
                    invalid(format!("partition field `{}` value: {why}", field.name))
                })?;
            }
        }
    }
    put_long(out, f.record_count);
    put_long(out, f.file_size_in_bytes);
    if v1 {
        put_long(out, V1_BLOCK_SIZE_BYTES);
    }
    let long = |out: &mut Vec<u8>, v: &i64| put_long(out, *v);
    let bytes = |out: &mut Vec<u8>, v: &Vec<u8>| put_bytes(out, v);
    put_int_map(out, &f.column_sizes, long);
    put_int_map(out, &f.value_counts, long);
    put_int_map(out, &f.null_value_counts, long);
    put_int_map(out, &f.nan_value_counts, long);
    put_int_map(out, &f.lower_bounds, bytes);
    put_int_map(out, &f.upper_bounds, bytes);
    put_opt_bytes(out, f.key_metadata.as_deref());
    put_opt_array(out, f.split_offsets.as_deref(), long);
    if !v1 {
        put_opt_array(out, f.equality_ids.as_deref(), |out, v| put_int(out, *v));
    }
    put_opt_int(out, f.sort_order_id);
    if v3 {
        put_opt_long(out, f.first_row_id);
    }
    if !v1 {
        put_opt_bytes(out, f.referenced_data_file.as_deref().map(str::as_bytes));
    }
    if v3 {
        put_opt_long(out, f.content_offset);
        put_opt_long(out, f.content_size_in_bytes);
    }
    Ok(())
}

fn put_summary(out: &mut Vec<u8>, s: &FieldSummary) {
    put_bool(out, s.contains_null);
    put_opt_bool(out, s.contains_nan);
    put_opt_bytes(out, s.lower_bound.as_deref());
    put_opt_bytes(out, s.upper_bound.as_deref());
}

/// Appends a manifest-list row in the version's `manifest_file` schema.
///
/// # Errors
/// [`Error::InvalidManifest`] when a v2 or v3 row has unknown file or row counts: those
/// fields are required there, and a 0 would tell readers the manifest holds no files.
pub(crate) fn put_manifest_file(
    out: &mut Vec<u8>,
    m: &ManifestFile,
    version: FormatVersion,
) -> Result<()> {
    put_bytes(out, m.manifest_path.as_bytes());
    put_long(out, m.manifest_length);
    put_int(out, m.partition_spec_id);
    let partitions = m.partitions.as_deref();
    if version == FormatVersion::V1 {
        put_long(out, m.added_snapshot_id);
        put_opt_int(out, m.added_files_count);
        put_opt_int(out, m.existing_files_count);
        put_opt_int(out, m.deleted_files_count);
        put_opt_array(out, partitions, put_summary);
        put_opt_long(out, m.added_rows_count);
        put_opt_long(out, m.existing_rows_count);
        put_opt_long(out, m.deleted_rows_count);
        put_opt_bytes(out, m.key_metadata.as_deref());
        return Ok(());
    }
    let unknown = || {
        Error::invalid_manifest(
            &m.manifest_path,
            "file and row counts are unknown; a v2 manifest list needs them",
        )
    };
    put_int(out, m.content.code());
    put_long(out, m.sequence_number);
    put_long(out, m.min_sequence_number);
    put_long(out, m.added_snapshot_id);
    for count in [
        m.added_files_count,
        m.existing_files_count,
        m.deleted_files_count,
    ] {
        put_int(out, count.ok_or_else(unknown)?);
    }
    for count in [
        m.added_rows_count,
        m.existing_rows_count,
        m.deleted_rows_count,
    ] {
        put_long(out, count.ok_or_else(unknown)?);
    }
    put_opt_array(out, partitions, put_summary);
    put_opt_bytes(out, m.key_metadata.as_deref());
    if version == FormatVersion::V3 {
        put_opt_long(out, m.first_row_id);
    }
    Ok(())
}
