//! Reading manifests and manifest lists back: apache-avro's decoded values to our records,
//! by field name, for any version's schema (ours or another writer's).

use std::collections::BTreeMap;

use apache_avro::types::Value;
use iceberg_spec::{
    DataContentType, DataFile, Datum, FieldSummary, FileFormat, ManifestContent, ManifestEntry,
    ManifestFile, ManifestStatus, PrimitiveType, StructType,
};

use crate::error::{Error, Result};

/// A partition value read back from Avro.
fn avro_to_datum(v: &Value, ty: &PrimitiveType, path: &str) -> Result<Option<Datum>> {
    let bad = || Error::invalid_manifest(path, format!("partition value {v:?} is not a {ty}"));
    let v = match v {
        Value::Union(_, inner) => inner.as_ref(),
        other => other,
    };
    Ok(Some(match (v, ty) {
        (Value::Null, _) => return Ok(None),
        (Value::Boolean(b), PrimitiveType::Boolean) => Datum::Boolean(*b),
        (Value::Int(i), PrimitiveType::Int) => Datum::Int(*i),
        (Value::Long(i), PrimitiveType::Long) => Datum::Long(*i),
        (Value::Float(f), PrimitiveType::Float) => Datum::Float(*f),
        (Value::Double(f), PrimitiveType::Double) => Datum::Double(*f),
        (Value::Date(d) | Value::Int(d), PrimitiveType::Date) => Datum::Date(*d),
        (Value::TimeMicros(t) | Value::Long(t), PrimitiveType::Time) => Datum::Time(*t),
        (
            Value::TimestampMicros(t) | Value::LocalTimestampMicros(t) | Value::Long(t),
            PrimitiveType::Timestamp,
        ) => Datum::Timestamp(*t),
        (
            Value::TimestampMicros(t) | Value::LocalTimestampMicros(t) | Value::Long(t),
            PrimitiveType::Timestamptz,
        ) => Datum::Timestamptz(*t),
        (
            Value::TimestampNanos(t) | Value::LocalTimestampNanos(t) | Value::Long(t),
            PrimitiveType::TimestampNs,
        ) => Datum::TimestampNs(*t),
        (
            Value::TimestampNanos(t) | Value::LocalTimestampNanos(t) | Value::Long(t),
            PrimitiveType::TimestamptzNs,
        ) => Datum::TimestamptzNs(*t),
        (Value::String(s), PrimitiveType::String) => Datum::String(s.clone()),
        (Value::Uuid(u), PrimitiveType::Uuid) => Datum::Uuid(*u),
        (Value::Fixed(_, b), PrimitiveType::Uuid) => {
            Datum::Uuid(uuid::Uuid::from_slice(b).map_err(|_| bad())?)
        }
        (Value::Fixed(_, b), PrimitiveType::Fixed(_)) => Datum::Fixed(b.clone()),
        (Value::Bytes(b), PrimitiveType::Binary) => Datum::Binary(b.clone()),
        (Value::Decimal(d), PrimitiveType::Decimal { precision, scale }) => {
            let bytes: Vec<u8> = d.try_into().map_err(|_| bad())?;
            Datum::Decimal {
                unscaled: be_to_i128(&bytes).ok_or_else(bad)?,
                precision: *precision,
                scale: *scale,
            }
        }
        (Value::Fixed(_, b), PrimitiveType::Decimal { precision, scale }) => Datum::Decimal {
            unscaled: be_to_i128(b).ok_or_else(bad)?,
            precision: *precision,
            scale: *scale,
        },
        _ => return Err(bad()),
    }))
}

fn be_to_i128(b: &[u8]) -> Option<i128> {
    if b.is_empty() || b.len() > 16 {
        return None;
    }
    let fill = if b[0] & 0x80 != 0 { 0xFF } else { 0 };
    let mut buf = [fill; 16];
    buf[16 - b.len()..].copy_from_slice(b);
    Some(i128::from_be_bytes(buf))
}

/// Named fields of a record value, unions unwrapped, for reading.
pub(crate) struct Fields<'a> {
    path: &'a str,
    fields: BTreeMap<&'a str, &'a Value>,
}

impl<'a> Fields<'a> {
    pub(crate) fn of(v: &'a Value, path: &'a str) -> Result<Self> {
        match v {
            Value::Record(fs) => Ok(Self {
                path,
                fields: fs
                    .iter()
                    .map(|(k, v)| {
                        let v = match v {
                            Value::Union(_, inner) => inner.as_ref(),
                            other => other,
                        };
                        (k.as_str(), v)
                    })
                    .collect(),
            }),
            _ => Err(Error::invalid_manifest(path, "expected a record")),
        }
    }

    fn get(&self, name: &str) -> Option<&'a Value> {
        self.fields
            .get(name)
            .copied()
            .filter(|v| !matches!(v, Value::Null))
    }

    fn missing(&self, name: &str) -> Error {
        Error::invalid_manifest(
            self.path,
            format!("field `{name}` is missing or has the wrong type"),
        )
    }

    pub(crate) fn long(&self, name: &str) -> Result<i64> {
        self.opt_long(name)?.ok_or_else(|| self.missing(name))
    }

    pub(crate) fn opt_long(&self, name: &str) -> Result<Option<i64>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Long(v)) => Ok(Some(*v)),
            Some(Value::Int(v)) => Ok(Some(i64::from(*v))),
            Some(_) => Err(self.missing(name)),
        }
    }

    pub(crate) fn int(&self, name: &str) -> Result<i32> {
        self.opt_int(name)?.ok_or_else(|| self.missing(name))
    }

    pub(crate) fn opt_int(&self, name: &str) -> Result<Option<i32>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Int(v)) => Ok(Some(*v)),
            Some(_) => Err(self.missing(name)),
        }
    }

    /// [`Self::opt_int`] of the field `name`, or of `old` (an earlier writer's name for it).
    pub(crate) fn opt_int_either(&self, name: &str, old: &str) -> Result<Option<i32>> {
        match self.opt_int(name)? {
            Some(v) => Ok(Some(v)),
            None => self.opt_int(old),
        }
    }

    pub(crate) fn string(&self, name: &str) -> Result<String> {
        match self.get(name) {
            Some(Value::String(s)) => Ok(s.clone()),
            _ => Err(self.missing(name)),
        }
    }

    pub(crate) fn opt_bytes(&self, name: &str) -> Result<Option<Vec<u8>>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Bytes(b)) => Ok(Some(b.clone())),
            Some(_) => Err(self.missing(name)),
        }
    }

    fn array(&self, name: &str) -> Result<Option<&'a Vec<Value>>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Array(a)) => Ok(Some(a)),
            Some(_) => Err(self.missing(name)),
        }
    }

    fn int_map<T>(&self, name: &str, f: impl Fn(&Value) -> Option<T>) -> Result<BTreeMap<i32, T>> {
        let mut out = BTreeMap::new();
        for item in self.array(name)?.into_iter().flatten() {
            let kv = Fields::of(item, self.path)?;
            let k = kv.int("key")?;
            let v = kv
                .get("value")
                .and_then(&f)
                .ok_or_else(|| self.missing(name))?;
            out.insert(k, v);
        }
        Ok(out)
    }
}

/// A manifest entry read from an Avro record; `spec_id` and `pt` come from the manifest.
/// `partition_names` are the Avro names of the partition fields in the writer schema
/// ([`super::names::partition_field_names`]).
pub(crate) fn avro_to_entry(
    v: &Value,
    spec_id: i32,
    pt: &StructType,
    partition_names: &[String],
    path: &str,
) -> Result<ManifestEntry> {
    let e = Fields::of(v, path)?;
    let df_value = e.get("data_file").ok_or_else(|| e.missing("data_file"))?;
    let df = Fields::of(df_value, path)?;
    let part_value = df.get("partition").ok_or_else(|| df.missing("partition"))?;
    let part = match part_value {
        Value::Record(fs) => fs,
        _ => return Err(df.missing("partition")),
    };
    let types = super::encode::partition_types(pt);
    let mut partition = Vec::with_capacity(types.len());
    for ((field, ty), avro_name) in pt.fields.iter().zip(&types).zip(partition_names) {
        let value = part
            .iter()
            .find(|(name, _)| name == avro_name)
            .map(|(_, v)| v)
            .ok_or_else(|| {
                Error::invalid_manifest(
                    path,
                    format!("partition field `{}` is missing", field.name),
                )
            })?;
        partition.push(avro_to_datum(value, ty, path)?);
    }
    let long = |v: &Value| match v {
        Value::Long(l) => Some(*l),
        _ => None,
    };
    let bytes = |v: &Value| match v {
        Value::Bytes(b) => Some(b.clone()),
        _ => None,
    };
    let list = |name: &str, f: &dyn Fn(&Value) -> Option<i64>| -> Result<Option<Vec<i64>>> {
        df.array(name)?
            .map(|a| {
                a.iter()
                    .map(|x| f(x).ok_or_else(|| df.missing(name)))
                    .collect()
            })
            .transpose()
    };
    let data_file = DataFile {
        content: match df.opt_int("content")? {
            Some(c) => DataContentType::from_code(c)?,
            None => DataContentType::Data,
        },
        file_path: df.string("file_path")?,
        file_format: FileFormat::parse(&df.string("file_format")?)?,
        spec_id,
        partition,
        record_count: df.long("record_count")?,
        file_size_in_bytes: df.long("file_size_in_bytes")?,
        column_sizes: df.int_map("column_sizes", long)?,
        value_counts: df.int_map("value_counts", long)?,
        null_value_counts: df.int_map("null_value_counts", long)?,
        nan_value_counts: df.int_map("nan_value_counts", long)?,
        lower_bounds: df.int_map("lower_bounds", bytes)?,
        upper_bounds: df.int_map("upper_bounds", bytes)?,
        key_metadata: df.opt_bytes("key_metadata")?,
        split_offsets: list("split_offsets", &long)?,
        equality_ids: list("equality_ids", &|v| match v {
            Value::Int(i) => Some(i64::from(*i)),
            _ => None,
        })?
        .map(|ids| ids.into_iter().map(|i| i as i32).collect()),
        sort_order_id: df.opt_int("sort_order_id")?,
        first_row_id: df.opt_long("first_row_id")?,
        referenced_data_file: match df.get("referenced_data_file") {
            Some(Value::String(s)) => Some(s.clone()),
            _ => None,
        },
        content_offset: df.opt_long("content_offset")?,
        content_size_in_bytes: df.opt_long("content_size_in_bytes")?,
    };
    Ok(ManifestEntry {
        status: ManifestStatus::from_code(e.int("status")?)?,
        snapshot_id: e.opt_long("snapshot_id")?,
        sequence_number: e.opt_long("sequence_number")?,
        file_sequence_number: e.opt_long("file_sequence_number")?,
        data_file,
    })
}

/// A manifest-list row read from an Avro record (v1 rows get sequence numbers 0).
pub(crate) fn avro_to_manifest_file(v: &Value, path: &str) -> Result<ManifestFile> {
    let m = Fields::of(v, path)?;
    let partitions = m
        .array("partitions")?
        .map(|a| {
            a.iter()
                .map(|s| {
                    let s = Fields::of(s, path)?;
                    Ok(FieldSummary {
                        contains_null: match s.get("contains_null") {
                            Some(Value::Boolean(b)) => *b,
                            _ => return Err(s.missing("contains_null")),
                        },
                        contains_nan: match s.get("contains_nan") {
                            Some(Value::Boolean(b)) => Some(*b),
                            _ => None,
                        },
                        lower_bound: s.opt_bytes("lower_bound")?,
                        upper_bound: s.opt_bytes("upper_bound")?,
                    })
                })
                .collect::<Result<Vec<_>>>()
        })
        .transpose()?;
    Ok(ManifestFile {
        manifest_path: m.string("manifest_path")?,
        manifest_length: m.long("manifest_length")?,
        partition_spec_id: m.int("partition_spec_id")?,
        content: match m.opt_int("content")? {
            Some(c) => ManifestContent::from_code(c)?,
            None => ManifestContent::Data,
        },
        sequence_number: m.opt_long("sequence_number")?.unwrap_or(0),
        min_sequence_number: m.opt_long("min_sequence_number")?.unwrap_or(0),
        added_snapshot_id: m.long("added_snapshot_id")?,
        // Java before 1.5 named fields 504-506 `*_data_files_count` (read by id there).
        added_files_count: m.opt_int_either("added_files_count", "added_data_files_count")?,
        existing_files_count: m
            .opt_int_either("existing_files_count", "existing_data_files_count")?,
        deleted_files_count: m.opt_int_either("deleted_files_count", "deleted_data_files_count")?,
        added_rows_count: m.opt_long("added_rows_count")?,
        existing_rows_count: m.opt_long("existing_rows_count")?,
        deleted_rows_count: m.opt_long("deleted_rows_count")?,
        partitions,
        key_metadata: m.opt_bytes("key_metadata")?,
        first_row_id: m.opt_long("first_row_id")?,
    })
}
