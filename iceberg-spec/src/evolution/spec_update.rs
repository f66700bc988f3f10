//! [`UpdatePartitionSpec`]: partition spec evolution (add, remove and rename partition
//! fields), as Java's `BaseUpdatePartitionSpec` does it, and [`add_default_spec`], the
//! metadata edit that makes the result the default spec.
//!
//! Spec: "Partition Evolution". New data is written with the new default spec; files keep the
//! spec they were written with (manifests stay grouped by spec). In v1 a removed field stays
//! as a `void` transform, since v1 readers match fields by position; in v2 and later it goes,
//! and a field added again with a source and transform some earlier spec had gets that
//! field's id back.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::{Error, Result};
use crate::partition::{PartitionField, PartitionSpec};
use crate::schema::Schema;
use crate::table_metadata::{FormatVersion, TableMetadata};
use crate::transform::Transform;

/// The first partition field id (the spec's convention, as Java assigns them).
const FIRST_PARTITION_ID: i32 = 1000;

/// The fields of a new partition spec and the table's new `last-partition-id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvolvedSpec {
    /// The new spec's fields, in order.
    pub fields: Vec<PartitionField>,
    /// The highest partition field id ever assigned.
    pub last_partition_id: i32,
}

/// Partition field changes planned on a table's default spec (Java's `UpdatePartitionSpec`).
/// Each call checks its change and refuses it with an error naming the field.
#[derive(Debug, Clone)]
pub struct UpdatePartitionSpec {
    schema: Schema,
    format_version: FormatVersion,
    spec: PartitionSpec,
    /// Every field of every spec the table has had (for id reuse).
    historical: Vec<PartitionField>,
    last_partition_id: i32,
    adds: Vec<PartitionField>,
    deletes: BTreeSet<i32>,
    renames: BTreeMap<String, String>,
}

impl UpdatePartitionSpec {
    /// Changes to the default spec of `meta`, over its current schema.
    ///
    /// # Errors
    /// Metadata without its current schema or default spec.
    pub fn new(meta: &TableMetadata) -> Result<Self> {
        Ok(Self {
            schema: meta.current_schema()?.clone(),
            format_version: meta.format_version,
            spec: meta.default_spec()?.clone(),
            historical: meta
                .partition_specs
                .iter()
                .flat_map(|s| s.fields().iter().cloned())
                .collect(),
            last_partition_id: meta.last_partition_id.max(FIRST_PARTITION_ID - 1),
            adds: Vec::new(),
            deletes: BTreeSet::new(),
            renames: BTreeMap::new(),
        })
    }

    /// Adds `transform(source)`, named `name` or as Java names it (`ts_day`, `id_bucket_16`,
    /// `name_trunc_4`, the source's name for identity).
    ///
    /// # Errors
    /// A missing source, a transform its type does not take, a field the spec already has
    /// (or this update added), a second time transform of one source, or a name in use.
    pub fn add_field(
        &mut self,
        source: &str,
        transform: Transform,
        name: Option<&str>,
    ) -> Result<&mut Self> {
        let term = format!("{transform}({source})");
        let refuse = |reason: String| Error::PartitionEvolution {
            field: name.map_or_else(|| term.clone(), str::to_string),
            reason,
        };
        let info = self
            .schema
            .field_info(self.schema.field_id_by_name(source).unwrap_or(i32::MIN))
            .ok_or_else(|| refuse(format!("no column `{source}` in the table")))?;
        let source_id = info.field.id;
        let ty = info
            .field
            .field_type
            .as_primitive()
            .ok_or_else(|| refuse(format!("`{source}` is not a primitive column")))?;
        transform
            .result_type(ty)
            .map_err(|e| refuse(e.to_string()))?;
        let same = |f: &PartitionField| f.source_id == source_id && f.transform == transform;
        if let Some(existing) = self.spec.fields().iter().find(|f| same(f)) {
            if self.deletes.remove(&existing.field_id) {
                // Removed and added again in one update: it simply stays (renamed if asked).
                if let Some(name) = name.filter(|n| *n != existing.name) {
                    let old = existing.name.clone();
                    self.rename_field(&old, name)?;
                }
                return Ok(self);
            }
            return Err(refuse(format!(
                "the spec already has it as `{}`",
                existing.name
            )));
        }
        if let Some(added) = self.adds.iter().find(|f| same(f)) {
            return Err(refuse(format!("already added as `{}`", added.name)));
        }
        if is_time(&transform)
            && let Some(other) = self
                .adds
                .iter()
                .find(|f| f.source_id == source_id && is_time(&f.transform))
        {
            return Err(refuse(format!(
                "redundant with the added `{}` of the same column",
                other.name
            )));
        }
        // v2+: a field some earlier spec had (same source and transform) gets its id back.
        let recycled = (self.format_version >= FormatVersion::V2)
            .then(|| {
                self.historical
                    .iter()
                    .find(|f| same(f) && name.is_none_or(|n| n == f.name))
            })
            .flatten()
            .cloned();
        let field = match recycled {
            Some(f) => f,
            None => {
                self.last_partition_id += 1;
                PartitionField {
                    name: name.map_or_else(|| java_name(source, &transform), str::to_string),
                    transform,
                    source_id,
                    field_id: self.last_partition_id,
                }
            }
        };
        let taken = self
            .spec
            .fields()
            .iter()
            .find(|f| self.final_name(f) == field.name && !self.is_gone(f));
        if let Some(existing) = taken {
            if existing.transform == Transform::Void || self.deletes.contains(&existing.field_id) {
                // A v1 void field (or one becoming void) keeps its place under another name.
                let renamed = format!("{}_{}", existing.name, existing.field_id);
                self.renames.insert(existing.name.clone(), renamed);
            } else {
                return Err(refuse(format!(
                    "the name `{}` is taken by a field of the spec",
                    field.name
                )));
            }
        }
        if self.adds.iter().any(|f| f.name == field.name) {
            return Err(refuse(format!("the name `{}` is added twice", field.name)));
        }
        self.adds.push(field);
        Ok(self)
    }

    /// Removes partition field `name` (v1: it becomes `void`).
    ///
    /// # Errors
    /// No such field, or one added or renamed in this update.
    pub fn remove_field(&mut self, name: &str) -> Result<&mut Self> {
        let refuse = |reason: &str| Error::PartitionEvolution {
            field: name.to_string(),
            reason: reason.to_string(),
        };
        if self.adds.iter().any(|f| f.name == name) {
            return Err(refuse("added in this update"));
        }
        if self.renames.contains_key(name) {
            return Err(refuse("renamed in this update"));
        }
        let id = self
            .spec
            .fields()
            .iter()
            .find(|f| f.name == name)
            .map(|f| f.field_id)
            .ok_or_else(|| refuse("no such partition field in the default spec"))?;
        self.deletes.insert(id);
        Ok(self)
    }

    /// Renames partition field `name` to `new_name`.
    ///
    /// # Errors
    /// No such field, one added or removed in this update, or an empty name.
    pub fn rename_field(&mut self, name: &str, new_name: &str) -> Result<&mut Self> {
        let refuse = |reason: &str| Error::PartitionEvolution {
            field: name.to_string(),
            reason: reason.to_string(),
        };
        if new_name.is_empty() {
            return Err(refuse("a partition field needs a name"));
        }
        if self.adds.iter().any(|f| f.name == name) {
            return Err(refuse("added in this update"));
        }
        let field = self
            .spec
            .fields()
            .iter()
            .find(|f| f.name == name)
            .ok_or_else(|| refuse("no such partition field in the default spec"))?;
        if self.deletes.contains(&field.field_id) {
            return Err(refuse("removed in this update"));
        }
        if let Some(void) = self
            .spec
            .fields()
            .iter()
            .find(|f| f.name == new_name && f.transform == Transform::Void)
        {
            let renamed = format!("{}_{}", void.name, void.field_id);
            self.renames.insert(void.name.clone(), renamed);
        }
        self.renames.insert(name.to_string(), new_name.to_string());
        Ok(self)
    }

    /// The new spec's fields: the default spec's with the changes, then the added ones.
    ///
    /// # Errors
    /// A result that breaks a spec rule (two fields of one name, a name that is another
    /// column's).
    pub fn apply(&self) -> Result<EvolvedSpec> {
        let mut fields = Vec::new();
        for f in self.spec.fields() {
            let mut field = f.clone();
            field.name = self.final_name(f);
            if self.deletes.contains(&f.field_id) {
                if self.format_version >= FormatVersion::V2 {
                    continue;
                }
                field.transform = Transform::Void;
            }
            fields.push(field);
        }
        fields.extend(self.adds.iter().cloned());
        PartitionSpec::new(0, fields.clone(), &self.schema).map_err(|e| {
            Error::PartitionEvolution {
                field: "<spec>".into(),
                reason: e.to_string(),
            }
        })?;
        let highest = fields.iter().map(|f| f.field_id).max().unwrap_or_default();
        Ok(EvolvedSpec {
            fields,
            last_partition_id: self.last_partition_id.max(highest),
        })
    }

    fn final_name(&self, f: &PartitionField) -> String {
        self.renames
            .get(&f.name)
            .cloned()
            .unwrap_or_else(|| f.name.clone())
    }

    /// Whether `f` leaves the spec (v2+ removes; v1 keeps a void in its place).
    fn is_gone(&self, f: &PartitionField) -> bool {
        self.deletes.contains(&f.field_id) && self.format_version >= FormatVersion::V2
    }
}

/// Makes a spec of `evolved`'s fields the default spec of `metadata`: an existing spec with
/// the same fields is reused (as Java's metadata builder does), otherwise it is added with the
/// next spec id. Returns the default spec id.
///
/// # Errors
/// The fields do not fit the current schema.
pub fn add_default_spec(metadata: &mut TableMetadata, evolved: &EvolvedSpec) -> Result<i32> {
    let existing = metadata
        .partition_specs
        .iter()
        .find(|s| s.fields() == evolved.fields.as_slice())
        .map(PartitionSpec::spec_id);
    let id = match existing {
        Some(id) => id,
        None => {
            let id = metadata
                .partition_specs
                .iter()
                .map(PartitionSpec::spec_id)
                .max()
                .map_or(0, |m| m + 1);
            let spec = PartitionSpec::new(id, evolved.fields.clone(), metadata.current_schema()?)?;
            metadata.partition_specs.push(spec);
            id
        }
    };
    metadata.default_spec_id = id;
    metadata.last_partition_id = metadata.last_partition_id.max(evolved.last_partition_id);
    Ok(id)
}

fn is_time(t: &Transform) -> bool {
    matches!(
        t,
        Transform::Year | Transform::Month | Transform::Day | Transform::Hour
    )
}

/// Java's `PartitionNameGenerator` (used by spec evolution, unlike the spec builder's names).
fn java_name(source: &str, transform: &Transform) -> String {
    match transform {
        Transform::Identity => source.to_string(),
        Transform::Bucket(n) => format!("{source}_bucket_{n}"),
        Transform::Truncate(w) => format!("{source}_trunc_{w}"),
        Transform::Year => format!("{source}_year"),
        Transform::Month => format!("{source}_month"),
        Transform::Day => format!("{source}_day"),
        Transform::Hour => format!("{source}_hour"),
        Transform::Void => format!("{source}_null"),
        Transform::Unknown(name) => format!("{source}_{name}"),
    }
}
