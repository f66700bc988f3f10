//! The partition tuple of an existing data file: given, inferred from its column statistics,
//! or read from Hive-style `name=value` folders, and always checked against the statistics
//! where they tell.

use std::collections::{BTreeMap, HashSet};

use iceberg_spec::types::PrimitiveType;
use iceberg_spec::{Datum, PartitionField, PartitionSpec, Schema, Transform};

use crate::error::{Error, Result};
use crate::metrics::ColumnFooter;

/// Hive's folder name for a null partition value.
pub const HIVE_NULL: &str = "__HIVE_DEFAULT_PARTITION__";

/// Where an existing data file's partition tuple comes from.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum PartitionSource {
    /// From the file's column statistics: each partition source's transformed lower and
    /// upper bounds must be equal (an all-null column gives null).
    #[default]
    Infer,
    /// Given by the caller, one value per field of the spec, in spec order.
    Given(Vec<Option<Datum>>),
    /// From `name=value` folders of the file's path (the partition field's name, or the
    /// source column's for identity fields), `%XX`-unescaped, [`HIVE_NULL`] for null.
    HivePath,
}

/// What a file's statistics say about one partition field.
enum Told {
    Value(Option<Datum>),
    /// The column is not in the file: every row reads it as null, or as an identity
    /// partition's value where readers fill those in.
    Absent,
    Spans(String),
    Unknown(String),
}

/// Inputs the tuple is decided from.
pub(super) struct FileFacts<'a> {
    pub(super) path: &'a str,
    pub(super) columns: &'a BTreeMap<i32, ColumnFooter>,
    pub(super) present: &'a HashSet<i32>,
}

/// The partition tuple of the file described by `facts`.
///
/// # Errors
/// [`Error::Partition`] naming the field: the file spans partitions, the statistics cannot
/// tell a value (with [`PartitionSource::Infer`]), a given or path value of the wrong type or
/// disagreeing with the statistics, a missing or unreadable folder.
pub(super) fn partition_of(
    facts: &FileFacts<'_>,
    spec: &PartitionSpec,
    schema: &Schema,
    source: &PartitionSource,
) -> Result<Vec<Option<Datum>>> {
    let refuse = |field: &PartitionField, reason: String| Error::Partition {
        path: facts.path.into(),
        field: field.name.clone(),
        reason,
    };
    if let PartitionSource::Given(values) = source
        && values.len() != spec.fields().len()
    {
        return Err(Error::Partition {
            path: facts.path.into(),
            field: spec
                .fields()
                .first()
                .map(|f| f.name.clone())
                .unwrap_or_default(),
            reason: format!(
                "{} value(s) given for a spec of {} field(s)",
                values.len(),
                spec.fields().len()
            ),
        });
    }
    let folders = hive_folders(facts.path);
    let mut out = Vec::with_capacity(spec.fields().len());
    for (i, field) in spec.fields().iter().enumerate() {
        let source_type = schema.primitive_type(field.source_id)?;
        let result_type = field.transform.result_type(source_type)?;
        let told = from_stats(facts, field, schema);
        let claimed = match source {
            PartitionSource::Infer => match told {
                Told::Value(v) => {
                    out.push(v);
                    continue;
                }
                Told::Absent => {
                    out.push(None);
                    continue;
                }
                Told::Spans(why) | Told::Unknown(why) => return Err(refuse(field, why)),
            },
            PartitionSource::Given(values) => values[i].clone(),
            PartitionSource::HivePath => {
                let source_name = schema.field_name(field.source_id).unwrap_or_default();
                let text = folders
                    .iter()
                    .find(|(k, _)| {
                        k == &field.name
                            || (field.transform == Transform::Identity && k == source_name)
                    })
                    .map(|(_, v)| v.as_str())
                    .ok_or_else(|| {
                        refuse(field, format!("the path has no `{}=` folder", field.name))
                    })?;
                if text == HIVE_NULL {
                    None
                } else {
                    let v = field
                        .transform
                        .from_human_string(source_type, text)
                        .map_err(|e| refuse(field, format!("`{text}` in the path: {e}")))?;
                    Some(v)
                }
            }
        };
        if let Some(v) = &claimed
            && v.primitive_type() != result_type
        {
            return Err(refuse(
                field,
                format!("the value {v:?} is not a {result_type}"),
            ));
        }
        match told {
            Told::Value(v) if v != claimed => {
                let human =
                    |d: &Option<Datum>| field.transform.to_human_string(source_type, d.as_ref());
                return Err(refuse(
                    field,
                    format!(
                        "the value {} disagrees with the file's statistics, which say {}",
                        human(&claimed),
                        human(&v)
                    ),
                ));
            }
            Told::Spans(why) => return Err(refuse(field, why)),
            _ => {}
        }
        out.push(claimed);
    }
    Ok(out)
}

/// What the statistics of the field's source column say.
fn from_stats(facts: &FileFacts<'_>, field: &PartitionField, schema: &Schema) -> Told {
    let column = schema
        .field_name(field.source_id)
        .unwrap_or("?")
        .to_string();
    if field.transform == Transform::Void {
        return Told::Value(None);
    }
    if !facts.present.contains(&field.source_id) {
        return Told::Absent;
    }
    let Some(col) = facts.columns.get(&field.source_id) else {
        return Told::Unknown(format!("no statistics for column `{column}`"));
    };
    if !col.stats_complete {
        return Told::Unknown(format!(
            "the file has no null counts for column `{column}` in every row group"
        ));
    }
    if col.nulls == col.values {
        return Told::Value(None);
    }
    if col.nulls > 0 {
        return Told::Spans(format!(
            "column `{column}` holds nulls and values, so the file spans partitions"
        ));
    }
    // pyarrow, parquet-rs and DataFusion leave NaN out of a float column's min and max:
    // bounds of one value do not show that the file holds no NaN beside it.
    if matches!(
        schema.primitive_type(field.source_id),
        Ok(PrimitiveType::Float | PrimitiveType::Double)
    ) {
        return Told::Unknown(format!(
            "column `{column}` is a float, whose bounds leave NaN values out"
        ));
    }
    let (Some(min), Some(max)) = (&col.min, &col.max) else {
        return Told::Unknown(format!("the file has no bounds for column `{column}`"));
    };
    if !field.transform.preserves_order() && min != max {
        return Told::Unknown(format!(
            "`{}` of column `{column}` cannot be told from its range of values",
            field.transform
        ));
    }
    let (Ok(lo), Ok(hi)) = (
        field.transform.apply(Some(min)),
        field.transform.apply(Some(max)),
    ) else {
        return Told::Unknown(format!("column `{column}`'s bounds do not transform"));
    };
    if lo == hi {
        return Told::Value(lo);
    }
    let Ok(source_type) = schema.primitive_type(field.source_id) else {
        return Told::Unknown(format!("column `{column}` is not a primitive"));
    };
    let human = |d: &Option<Datum>| field.transform.to_human_string(source_type, d.as_ref());
    Told::Spans(format!(
        "column `{column}` runs from partition {} to {}, so the file spans partitions",
        human(&lo),
        human(&hi)
    ))
}

/// The Hive-style `name=value` folders of a file's path, unescaped (`%XX`), outermost
/// first; [`HIVE_NULL`] stands for a null value.
pub fn hive_folders(path: &str) -> Vec<(String, String)> {
    let without_file = path.rsplit_once('/').map_or("", |(dir, _)| dir);
    without_file
        .split('/')
        .filter_map(|segment| {
            let (k, v) = segment.split_once('=')?;
            Some((percent_decode(k)?, percent_decode(v)?))
        })
        .collect()
}

/// Hive's escaping: `%XX` is a byte, everything else (`+` included) stands for itself.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn folders_are_unescaped_hive_style() {
        let f =
            hive_folders("s3://b/t/data/day=2024-01-02/city=New%20York/a+b=c%2Fd/part-0.parquet");
        assert_eq!(
            f,
            vec![
                ("day".into(), "2024-01-02".into()),
                ("city".into(), "New York".into()),
                ("a+b".into(), "c/d".into()),
            ]
        );
        assert!(hive_folders("file:///x/k=%zz/f.parquet").is_empty());
    }
}
