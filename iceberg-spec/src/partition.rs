//! Partition specs: which transforms of which columns make a row's partition tuple.
//!
//! Spec: "Partitioning", "Partition Specs" and Appendix C (partition spec JSON).

use serde::{Deserialize, Serialize};

use crate::datum::Datum;
use crate::error::{Error, Result};
use crate::schema::Schema;
use crate::transform::Transform;
use crate::types::{NestedField, PrimitiveType, StructType};

/// The first partition field id; `last-partition-id` of an unpartitioned table is one less.
pub const PARTITION_DATA_ID_START: i32 = 1000;
/// `last-partition-id` when no partition field was ever assigned.
pub const UNPARTITIONED_LAST_ASSIGNED_ID: i32 = 999;

/// One field of a partition spec.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct PartitionField {
    /// Partition field name (unique in the spec).
    pub name: String,
    /// The transform applied to the source column.
    pub transform: Transform,
    /// Id of the source column in the table schema.
    pub source_id: i32,
    /// Partition field id (from 1000 up; unique across specs in v2+).
    pub field_id: i32,
}

/// A partition spec: an id and its fields, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct PartitionSpec {
    spec_id: i32,
    fields: Vec<PartitionField>,
}

/// The JSON form, accepting v3's `source-ids` as well as `source-id`.
#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
struct PartitionSpecJson {
    spec_id: i32,
    fields: Vec<PartitionFieldJson>,
}

/// A partition field as JSON; `field-id` may be absent in very old v1 metadata.
#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) struct PartitionFieldJson {
    name: String,
    transform: Transform,
    source_id: Option<i32>,
    source_ids: Option<Vec<i32>>,
    field_id: Option<i32>,
}

impl PartitionFieldJson {
    fn into_field(self, fallback_id: i32) -> Result<PartitionField> {
        let source_id = match (self.source_id, self.source_ids.as_deref()) {
            (Some(id), _) => id,
            (None, Some([id])) => *id,
            (None, Some(_)) => {
                return Err(Error::InvalidPartitionSpec {
                    reason: format!(
                        "field `{}` has several source-ids; multi-argument transforms are not supported",
                        self.name
                    ),
                });
            }
            (None, None) => {
                return Err(Error::InvalidPartitionSpec {
                    reason: format!("field `{}` has no source-id", self.name),
                });
            }
        };
        Ok(PartitionField {
            name: self.name,
            transform: self.transform,
            source_id,
            field_id: self.field_id.unwrap_or(fallback_id),
        })
    }
}

/// Parses a bare list of partition fields (v1's `partition-spec`, a manifest's key-value metadata).
pub(crate) fn fields_from_json(fields: Vec<PartitionFieldJson>) -> Result<Vec<PartitionField>> {
    fields
        .into_iter()
        .enumerate()
        .map(|(i, f)| f.into_field(PARTITION_DATA_ID_START + i as i32))
        .collect()
}

impl<'de> Deserialize<'de> for PartitionSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let json = PartitionSpecJson::deserialize(d)?;
        let fields = fields_from_json(json.fields).map_err(serde::de::Error::custom)?;
        Ok(PartitionSpec {
            spec_id: json.spec_id,
            fields,
        })
    }
}

impl PartitionSpec {
    /// The unpartitioned spec with id 0.
    pub fn unpartitioned() -> Self {
        Self {
            spec_id: 0,
            fields: Vec::new(),
        }
    }

    /// A builder that names fields as Java's `PartitionSpec.builderFor` does.
    pub fn builder(schema: &Schema) -> PartitionSpecBuilder<'_> {
        PartitionSpecBuilder {
            schema,
            spec_id: 0,
            next_field_id: PARTITION_DATA_ID_START,
            fields: Vec::new(),
        }
    }

    /// A spec from already-id'd fields, checked against `schema`.
    ///
    /// # Errors
    /// [`Error::InvalidPartitionSpec`] when a source is missing or not primitive, a transform
    /// does not accept its source type, or names collide.
    pub fn new(spec_id: i32, fields: Vec<PartitionField>, schema: &Schema) -> Result<Self> {
        let spec = Self { spec_id, fields };
        spec.validate(schema)?;
        Ok(spec)
    }

    /// A spec from fields without checking it against a schema (used when parsing metadata).
    pub fn new_unchecked(spec_id: i32, fields: Vec<PartitionField>) -> Self {
        Self { spec_id, fields }
    }

    /// The spec id.
    pub fn spec_id(&self) -> i32 {
        self.spec_id
    }

    /// The partition fields, in order.
    pub fn fields(&self) -> &[PartitionField] {
        &self.fields
    }

    /// True when the spec has no fields (or only void fields).
    pub fn is_unpartitioned(&self) -> bool {
        self.fields.iter().all(|f| f.transform == Transform::Void)
    }

    /// True when a field uses a transform this library does not know: the spec's manifests
    /// are read and carried, never written again.
    pub fn has_unknown_transform(&self) -> bool {
        self.fields.iter().any(|f| f.transform.is_unknown())
    }

    /// The highest partition field id, if any.
    pub fn highest_field_id(&self) -> Option<i32> {
        self.fields.iter().map(|f| f.field_id).max()
    }

    /// Checks every field against `schema`, for writing: a [`Transform::Unknown`] field is
    /// refused.
    ///
    /// # Errors
    /// [`Error::InvalidPartitionSpec`] naming the field at fault, [`Error::InvalidTransform`]
    /// for an unknown transform.
    pub fn validate(&self, schema: &Schema) -> Result<()> {
        self.check(schema, false)
    }

    /// Checks every field against `schema` as a reader must: an unknown transform's field
    /// passes when its source exists (Java's `checkCompatibility`).
    pub(crate) fn validate_loaded(&self, schema: &Schema) -> Result<()> {
        self.check(schema, true)
    }

    fn check(&self, schema: &Schema, allow_unknown: bool) -> Result<()> {
        let mut names = std::collections::HashSet::new();
        for f in &self.fields {
            if !names.insert(f.name.as_str()) {
                return Err(Error::InvalidPartitionSpec {
                    reason: format!("duplicate partition field name `{}`", f.name),
                });
            }
            // A v1 table's removed field stays as `void`; its source may have been dropped
            // since (Spark's REPLACE PARTITION FIELD, then DROP COLUMN). Java's
            // `checkCompatibility` skips void fields.
            if f.transform == Transform::Void && schema.field_info(f.source_id).is_none() {
                continue;
            }
            let source =
                schema
                    .field_info(f.source_id)
                    .ok_or_else(|| Error::InvalidPartitionSpec {
                        reason: format!(
                            "partition field `{}` has source id {} which is not in the schema",
                            f.name, f.source_id
                        ),
                    })?;
            if source.in_list_or_map {
                return Err(Error::InvalidPartitionSpec {
                    reason: format!(
                        "partition field `{}`: source `{}` is inside a list or map",
                        f.name, source.full_name
                    ),
                });
            }
            let ty = source.field.field_type.as_primitive().ok_or_else(|| {
                Error::InvalidPartitionSpec {
                    reason: format!(
                        "partition field `{}`: source `{}` is not a primitive column",
                        f.name, source.full_name
                    ),
                }
            })?;
            if !(allow_unknown && f.transform.is_unknown()) {
                f.transform.result_type(ty)?;
            }
            // Java's `checkAndAddPartitionName`: a partition field may share a name only with
            // its own source. A spec made here (not one loaded) is held to it for identity
            // fields too: Java refuses to bind such a spec, so the table would not load.
            let checked = f.transform != Transform::Identity || !allow_unknown;
            if checked
                && schema.field_by_name(&f.name).is_some()
                && schema.field_id_by_name(&f.name) != Some(f.source_id)
            {
                return Err(Error::InvalidPartitionSpec {
                    reason: format!(
                        "partition field name `{}` collides with a schema column",
                        f.name
                    ),
                });
            }
        }
        Ok(())
    }

    /// The partition tuple's struct type: one optional field per partition field.
    ///
    /// # Errors
    /// [`Error::InvalidPartitionSpec`] when a source is missing (and the transform's type
    /// depends on it) or not primitive; [`Error::InvalidTransform`] for a
    /// [`Transform::Unknown`] field, whose type only a manifest's own schema tells.
    pub fn partition_type(&self, schema: &Schema) -> Result<StructType> {
        let fields = self
            .fields
            .iter()
            .map(|f| {
                let ty = self.field_type(f, schema)?;
                Ok(NestedField::optional(f.field_id, f.name.clone(), ty))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(StructType::new(fields))
    }

    /// The type of one partition field's values under `schema`.
    ///
    /// # Errors
    /// As [`PartitionSpec::partition_type`].
    pub fn field_type(&self, field: &PartitionField, schema: &Schema) -> Result<PrimitiveType> {
        // A source no schema given here has (a spec whose column was dropped since) still
        // has a type where the transform fixes it; Java uses `unknown` there. Manifests are
        // written with a schema that binds the spec where one does
        // (`TableMetadata::schema_for_spec`).
        match (
            schema.field_by_id(field.source_id),
            field.transform.fixed_result_type(),
        ) {
            (None, Some(fixed)) => Ok(fixed),
            _ if field.transform.is_unknown() => {
                field.transform.result_type(&PrimitiveType::Unknown)
            }
            _ => field
                .transform
                .result_type(&self.input_type(field, schema)?),
        }
    }

    /// The type of the values one partition field's transform takes: its source column's,
    /// or `unknown` for a v1 void field whose source was dropped since (always null, as
    /// Java's `partitionType` types it: an Avro `null` in manifests).
    ///
    /// # Errors
    /// As [`PartitionSpec::source_type`].
    pub fn input_type(&self, field: &PartitionField, schema: &Schema) -> Result<PrimitiveType> {
        if field.transform == Transform::Void && schema.field_by_id(field.source_id).is_none() {
            return Ok(PrimitiveType::Unknown);
        }
        self.source_type(field, schema).cloned()
    }

    /// The source column type of one partition field.
    ///
    /// # Errors
    /// [`Error::InvalidPartitionSpec`] when the source is missing or not primitive.
    pub fn source_type<'s>(
        &self,
        field: &PartitionField,
        schema: &'s Schema,
    ) -> Result<&'s PrimitiveType> {
        schema
            .field_by_id(field.source_id)
            .and_then(|f| f.field_type.as_primitive())
            .ok_or_else(|| Error::InvalidPartitionSpec {
                reason: format!(
                    "partition field `{}` has no primitive source column with id {}",
                    field.name, field.source_id
                ),
            })
    }

    /// The Hive-style path of a partition tuple (`ts_day=2017-11-16/id_bucket=3`), as Java renders it.
    ///
    /// # Errors
    /// [`Error::InvalidPartitionSpec`] when `values` does not match the spec's arity or a source
    /// is missing.
    pub fn partition_to_path(&self, schema: &Schema, values: &[Option<Datum>]) -> Result<String> {
        if values.len() != self.fields.len() {
            return Err(Error::InvalidPartitionSpec {
                reason: format!(
                    "partition tuple has {} values, spec {} has {} fields",
                    values.len(),
                    self.spec_id,
                    self.fields.len()
                ),
            });
        }
        let mut out = String::new();
        for (i, (f, v)) in self.fields.iter().zip(values).enumerate() {
            if i > 0 {
                out.push('/');
            }
            let human = f
                .transform
                .to_human_string(&self.input_type(f, schema)?, v.as_ref());
            out.push_str(&crate::transform::partition_path_segment(&f.name, &human));
        }
        Ok(out)
    }

    /// The JSON list of fields alone, as manifests store it in their `partition-spec` metadata.
    pub fn fields_json(&self) -> serde_json::Value {
        serde_json::to_value(&self.fields).unwrap_or(serde_json::Value::Null)
    }
}

/// Builds a partition spec with Java's default field names and ids from 1000.
#[derive(Debug)]
pub struct PartitionSpecBuilder<'a> {
    schema: &'a Schema,
    spec_id: i32,
    next_field_id: i32,
    fields: Vec<PartitionField>,
}

impl PartitionSpecBuilder<'_> {
    /// Sets the spec id (default 0).
    pub fn with_spec_id(mut self, spec_id: i32) -> Self {
        self.spec_id = spec_id;
        self
    }

    /// Adds `transform(source)` named as Java names it (`id`, `id_bucket`, `ts_day`).
    ///
    /// # Errors
    /// [`Error::ColumnNotFound`] for an unknown source, or a transform/type mismatch.
    pub fn add(self, source: &str, transform: Transform) -> Result<Self> {
        let name = match transform.default_name_suffix() {
            None => source.to_string(),
            Some(suffix) => format!("{source}_{suffix}"),
        };
        self.add_named(source, transform, name)
    }

    /// Adds `transform(source)` under an explicit name.
    ///
    /// # Errors
    /// [`Error::ColumnNotFound`] for an unknown source, or a transform/type mismatch.
    pub fn add_named(
        mut self,
        source: &str,
        transform: Transform,
        name: impl Into<String>,
    ) -> Result<Self> {
        let source_id =
            self.schema
                .field_id_by_name(source)
                .ok_or_else(|| Error::ColumnNotFound {
                    name: source.to_string(),
                })?;
        // Java's builder refuses a second identity, or a second time transform (year, month,
        // day, hour: one "time" class), of one source.
        let class = |t: &Transform| match t {
            Transform::Identity => Some("identity"),
            Transform::Year | Transform::Month | Transform::Day | Transform::Hour => Some("time"),
            _ => None,
        };
        if let Some(redundant) = class(&transform).and_then(|c| {
            self.fields
                .iter()
                .find(|f| f.source_id == source_id && class(&f.transform) == Some(c))
        }) {
            return Err(Error::InvalidPartitionSpec {
                reason: format!(
                    "cannot add redundant partition {transform}({source}): it conflicts with `{}` \
                     ({}({source}))",
                    redundant.name, redundant.transform
                ),
            });
        }
        self.fields.push(PartitionField {
            name: name.into(),
            transform,
            source_id,
            field_id: self.next_field_id,
        });
        self.next_field_id += 1;
        Ok(self)
    }

    /// The validated spec.
    ///
    /// # Errors
    /// [`Error::InvalidPartitionSpec`] when the fields break a partition rule.
    pub fn build(self) -> Result<PartitionSpec> {
        PartitionSpec::new(self.spec_id, self.fields, self.schema)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn schema() -> Schema {
        Schema::new(
            0,
            vec![
                NestedField::required(1, "id", PrimitiveType::Long),
                NestedField::optional(2, "ts", PrimitiveType::Timestamptz),
                NestedField::optional(3, "data", PrimitiveType::String),
            ],
        )
        .unwrap()
    }

    #[test]
    fn builder_names_and_ids_as_java() {
        let s = schema();
        let spec = PartitionSpec::builder(&s)
            .add("ts", Transform::Day)
            .unwrap()
            .add("id", Transform::Bucket(16))
            .unwrap()
            .add("data", Transform::Identity)
            .unwrap()
            .build()
            .unwrap();
        let names: Vec<_> = spec
            .fields()
            .iter()
            .map(|f| (f.name.as_str(), f.field_id))
            .collect();
        assert_eq!(
            names,
            vec![("ts_day", 1000), ("id_bucket", 1001), ("data", 1002)]
        );
        let json = serde_json::to_value(&spec).unwrap();
        assert_eq!(
            json["fields"][0],
            serde_json::json!({"name": "ts_day", "transform": "day", "source-id": 2, "field-id": 1000})
        );
        let back: PartitionSpec = serde_json::from_value(json).unwrap();
        assert_eq!(back, spec);
        let ty = spec.partition_type(&s).unwrap();
        assert_eq!(ty.fields[0].field_type, PrimitiveType::Date.into());
        assert_eq!(ty.fields[1].field_type, PrimitiveType::Int.into());
    }

    /// An old spec whose source column was dropped since keeps a partition type where its
    /// transform's result does not depend on the source (Java's `PartitionSpec` uses
    /// `unknown` for the source then), so its manifests can still be merged and rewritten;
    /// a void field's is `unknown`.
    #[test]
    fn a_dropped_source_keeps_a_fixed_result_type() {
        let s = schema();
        let field = |name: &str, transform, source_id| PartitionField {
            name: name.into(),
            transform,
            source_id,
            field_id: 1000,
        };
        for (transform, want) in [
            (Transform::Day, PrimitiveType::Date),
            (Transform::Bucket(8), PrimitiveType::Int),
            (Transform::Hour, PrimitiveType::Int),
        ] {
            let spec = PartitionSpec::new_unchecked(1, vec![field("gone", transform.clone(), 9)]);
            let ty = spec.partition_type(&s).unwrap();
            assert_eq!(ty.fields[0].field_type, want.into(), "{transform}");
        }
        for transform in [Transform::Identity, Transform::Truncate(4)] {
            let spec = PartitionSpec::new_unchecked(1, vec![field("gone", transform.clone(), 9)]);
            assert!(spec.partition_type(&s).is_err(), "{transform}");
        }
        // A v1 void field is always null: `unknown`, as Java's `partitionType` types it.
        let spec = PartitionSpec::new_unchecked(1, vec![field("gone", Transform::Void, 9)]);
        let ty = spec.partition_type(&s).unwrap();
        assert_eq!(ty.fields[0].field_type, PrimitiveType::Unknown.into());
        assert_eq!(spec.partition_to_path(&s, &[None]).unwrap(), "gone=null");
        // A source that is there is still checked against the transform.
        let spec = PartitionSpec::new_unchecked(1, vec![field("d", Transform::Day, 3)]);
        assert!(spec.partition_type(&s).is_err());
    }

    /// As Java's builder: one identity and one time transform (year, month, day or hour) per
    /// source; buckets and truncates of one source may repeat.
    #[test]
    fn refuses_redundant_fields_as_java() {
        let s = schema();
        let two = |a: Transform, b: Transform| {
            PartitionSpec::builder(&s)
                .add_named("ts", a, "a")
                .and_then(|b2| b2.add_named("ts", b, "b"))
        };
        let err = two(Transform::Day, Transform::Hour).unwrap_err();
        assert!(err.to_string().contains("redundant"), "{err}");
        assert!(two(Transform::Year, Transform::Month).is_err());
        assert!(two(Transform::Identity, Transform::Identity).is_err());
        assert!(two(Transform::Identity, Transform::Day).is_ok());
        assert!(two(Transform::Bucket(4), Transform::Bucket(8)).is_ok());
        assert!(
            PartitionSpec::builder(&s)
                .add("id", Transform::Identity)
                .and_then(|b| b.add("data", Transform::Identity))
                .is_ok()
        );
    }

    #[test]
    fn refuses_bad_transform_source() {
        let s = schema();
        let err = PartitionSpec::builder(&s)
            .add("data", Transform::Day)
            .unwrap()
            .build();
        assert!(err.is_err());
        assert!(
            PartitionSpec::builder(&s)
                .add("nope", Transform::Identity)
                .is_err()
        );
    }

    #[test]
    fn parses_v3_source_ids() {
        let json = serde_json::json!({"spec-id": 1, "fields": [
            {"name": "x", "transform": "identity", "source-ids": [3], "field-id": 1005}]});
        let spec: PartitionSpec = serde_json::from_value(json).unwrap();
        assert_eq!(spec.fields()[0].source_id, 3);
    }
}
