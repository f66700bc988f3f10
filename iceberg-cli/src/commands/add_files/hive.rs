//! `add-files --create --hive-partitioning`: the table's partition columns and spec read off
//! the files' `name=value` folders, as Spark and pyarrow discover a Hive-partitioned dataset.
//!
//! Every file must sit under the same keys in the same order. A key that is a column of the
//! files becomes an identity partition of it (its folder values are then checked against the
//! files' statistics on add). A key the files leave out (`write_dataset` drops partition
//! columns) becomes a new optional column, typed from its folder values: `int` or `long`
//! when every value is the canonical text of one (`007` stays a string, so codes keep their
//! zeros), `date` for `YYYY-MM-DD`, else `string`. Readers fill such a column in from the
//! identity partition's value, so it must be partitioned by identity.

use iceberg_spec::{NestedField, PrimitiveType, Schema, Transform};
use iceberg_write::import::{HIVE_NULL, hive_folders};

use crate::error::{Error, Result};
use iceberg_spec::partition_expr;

/// The Hive keys of `paths` (the same for every file, outermost first).
///
/// # Errors
/// A file without `name=value` folders, or whose keys differ from the first file's, named.
pub(crate) fn hive_keys(paths: &[String]) -> Result<Vec<String>> {
    let mut keys: Option<(Vec<String>, &str)> = None;
    for path in paths {
        let here: Vec<String> = hive_folders(path).into_iter().map(|(k, _)| k).collect();
        if here.is_empty() {
            return Err(Error::input(
                path,
                "--hive-partitioning: the path has no `name=value` folders",
            ));
        }
        match &keys {
            None => keys = Some((here, path)),
            Some((first, first_path)) if *first != here => {
                return Err(Error::input(
                    path,
                    format!(
                        "--hive-partitioning: its folders name {} where {first_path} has {}",
                        here.join("/"),
                        first.join("/")
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    Ok(keys.map(|(k, _)| k).unwrap_or_default())
}

/// `schema` (the files' columns) with a column for every Hive key the files leave out, and
/// the partition expressions: `given` when any, else identity on every key.
///
/// # Errors
/// A key whose values do not fit a column's type, or a new column `given` does not
/// partition by identity (its rows would read as null).
pub(crate) fn with_hive_columns(
    schema: Schema,
    paths: &[String],
    given: &[String],
) -> Result<(Schema, Vec<String>)> {
    let keys = hive_keys(paths)?;
    let mut fields = schema.fields().to_vec();
    let mut next_id = schema.highest_field_id();
    let mut added = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        if schema.field_by_name(key).is_some() {
            continue;
        }
        let values: Vec<String> = paths
            .iter()
            .filter_map(|p| hive_folders(p).into_iter().nth(i).map(|(_, v)| v))
            .collect();
        next_id += 1;
        fields.push(NestedField::optional(
            next_id,
            key.clone(),
            value_type(&values),
        ));
        added.push(key.clone());
    }
    let schema = Schema::new(schema.schema_id(), fields)
        .map_err(|e| Error::Usage(format!("--hive-partitioning: {e}")))?;
    if given.is_empty() {
        return Ok((schema, keys.iter().map(|k| quoted(k)).collect()));
    }
    let spec =
        partition_expr::partition_spec(given, &schema).map_err(|e| Error::Usage(e.to_string()))?;
    for key in &added {
        let id = schema.field_id_by_name(key);
        let identity = spec
            .fields()
            .iter()
            .any(|f| Some(f.source_id) == id && f.transform == Transform::Identity);
        if !identity {
            return Err(Error::Usage(format!(
                "--partition: the files hold no column `{key}`, only its folders do; partition \
                 by identity({key}) too, or its rows would read as null"
            )));
        }
    }
    Ok((schema, given.to_vec()))
}

/// The narrowest type every non-null folder value is the canonical text of.
fn value_type(values: &[String]) -> PrimitiveType {
    let present: Vec<&str> = values
        .iter()
        .map(String::as_str)
        .filter(|v| *v != HIVE_NULL)
        .collect();
    let all = |t: &PrimitiveType| {
        !present.is_empty()
            && present.iter().all(|v| {
                Transform::Identity
                    .from_human_string(t, v)
                    .is_ok_and(|d| Transform::Identity.to_human_string(t, Some(&d)) == *v)
            })
    };
    [PrimitiveType::Int, PrimitiveType::Long, PrimitiveType::Date]
        .into_iter()
        .find(|t| all(t))
        .unwrap_or(PrimitiveType::String)
}

/// `key` as a partition expression naming it (backticks, as Spark quotes names).
fn quoted(key: &str) -> String {
    format!("identity(`{}`)", key.replace('`', "``"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn paths(list: &[&str]) -> Vec<String> {
        list.iter()
            .map(|p| format!("file:///d/{p}/f.parquet"))
            .collect()
    }

    #[test]
    fn folder_values_type_new_columns_by_their_canonical_text() {
        let t = |vals: &[&str]| value_type(&vals.iter().map(|v| v.to_string()).collect::<Vec<_>>());
        assert_eq!(t(&["0", "-3", HIVE_NULL]), PrimitiveType::Int);
        assert_eq!(t(&["1", "3000000000"]), PrimitiveType::Long);
        assert_eq!(t(&["2024-01-02", "1969-12-31"]), PrimitiveType::Date);
        assert_eq!(t(&["007", "1"]), PrimitiveType::String);
        assert_eq!(t(&["+1"]), PrimitiveType::String);
        assert_eq!(t(&["2024-1-2"]), PrimitiveType::String);
        assert_eq!(t(&[HIVE_NULL]), PrimitiveType::String);
    }

    #[test]
    fn keys_absent_from_the_files_become_identity_partitioned_columns() {
        let schema = Schema::new(
            0,
            vec![
                NestedField::required(1, "id", PrimitiveType::Long),
                NestedField::optional(2, "region", PrimitiveType::String),
            ],
        )
        .unwrap();
        let files = paths(&[
            "region=eu/day=2024-01-02",
            "region=us/day=__HIVE_DEFAULT_PARTITION__",
        ]);
        let (out, exprs) = with_hive_columns(schema.clone(), &files, &[]).unwrap();
        assert_eq!(out.field_by_name("day").unwrap().id, 3);
        assert_eq!(out.primitive_type(3).unwrap(), &PrimitiveType::Date);
        assert_eq!(exprs, vec!["identity(`region`)", "identity(`day`)"]);
        // a given spec must keep the folder-only column as an identity partition
        let err = with_hive_columns(schema.clone(), &files, &["region".into()]).unwrap_err();
        assert!(err.to_string().contains("`day`"), "{err}");
        let (_, exprs) =
            with_hive_columns(schema, &files, &["day".into(), "bucket(4, id)".into()]).unwrap();
        assert_eq!(exprs, vec!["day", "bucket(4, id)"]);
    }

    #[test]
    fn files_under_other_keys_are_refused_by_name() {
        let files = paths(&["a=1/b=2", "b=2/a=1"]);
        let err = hive_keys(&files).unwrap_err();
        assert!(err.to_string().contains("b=2/a=1"), "{err}");
        let err = hive_keys(&["file:///d/plain.parquet".to_string()]).unwrap_err();
        assert!(err.to_string().contains("plain.parquet"), "{err}");
    }
}
