//! [`SchemaEvolution`]: an append that evolves the table's schema in the same commit.
//!
//! The input's columns are unioned into the table's current schema
//! ([`iceberg_spec::evolution::union_by_name`]); the data files are written with the result
//! ([`SchemaEvolution::schema`]), and every attempt of the commit makes it current again on
//! its own base. On a retry the union is recomputed from the input against the new base: when
//! every column the files were written with keeps its id, name and a type that reads it, the
//! append lands (reusing the schema another writer may have added the same way); otherwise it
//! fails with [`Error::SchemaConflict`] (a concurrent writer took those ids or renamed a
//! column), never silently dropping or misplacing a column. The requirements a REST catalog
//! checks (`assert-current-schema-id`, `assert-last-assigned-field-id`) come from the base,
//! as for every commit.

use iceberg_spec::evolution::{
    EvolvedSchema, SchemaChange, UnionOptions, add_current_schema, is_promotion_allowed,
    union_by_name,
};
use iceberg_spec::{NestedField, Schema, TableMetadata, Type};

use crate::error::{Error, Result};

/// The schema change an evolving append makes (see the module docs).
#[derive(Debug, Clone)]
pub struct SchemaEvolution {
    input: Vec<NestedField>,
    options: UnionOptions,
    evolved: EvolvedSchema,
}

impl SchemaEvolution {
    /// The union of the table's current schema with `input` (field ids ignored, matched by
    /// name); `None` when the input already fits and there is nothing to evolve.
    ///
    /// # Errors
    /// [`iceberg_spec::Error::SchemaEvolution`] naming a column the rules refuse, or a type
    /// the table's format version cannot hold.
    pub fn plan(
        metadata: &TableMetadata,
        input: &[NestedField],
        options: UnionOptions,
    ) -> Result<Option<Self>> {
        let evolved = union_by_name(
            metadata.current_schema()?,
            metadata.last_column_id,
            input,
            options,
        )?;
        if evolved.is_unchanged() {
            return Ok(None);
        }
        // Checked now, not at the first attempt: no data file is written for a refused type.
        add_current_schema(
            &mut metadata.clone(),
            &evolved.schema,
            evolved.last_column_id,
        )?;
        Ok(Some(Self {
            input: input.to_vec(),
            options,
            evolved,
        }))
    }

    /// The schema the data files are written with.
    pub fn schema(&self) -> &Schema {
        &self.evolved.schema
    }

    /// What the evolution changes.
    pub fn changes(&self) -> &[SchemaChange] {
        &self.evolved.changes
    }

    /// Makes the evolved schema current on `base` (see the module docs); returns its id.
    ///
    /// # Errors
    /// [`Error::SchemaConflict`] when `base` changed so that the written files would not read
    /// as written.
    pub(crate) fn apply(&self, table: &str, base: &mut TableMetadata) -> Result<i32> {
        let current = base.current_schema()?;
        let conflict = |reason: String| Error::SchemaConflict {
            table: table.to_string(),
            reason,
        };
        let again = union_by_name(current, base.last_column_id, &self.input, self.options)
            .map_err(|e| conflict(format!("the input no longer fits the table: {e}")))?;
        check_reads_as_written(self.schema(), &again.schema).map_err(conflict)?;
        Ok(add_current_schema(
            base,
            &again.schema,
            again.last_column_id,
        )?)
    }
}

/// Whether files written with `written` read as written under `now`: every field keeps its
/// id, full name and requiredness at most as strict, and its type or a promotion of it; and
/// a field the files lack (added meanwhile) reads as what a writer of `now` would have
/// written: it is optional, and its write default, if any, is its initial default.
fn check_reads_as_written(written: &Schema, now: &Schema) -> std::result::Result<(), String> {
    for info in now.fields_breadth_first() {
        let field = &info.field;
        // Only where the files have the enclosing field: under an absent one, all is null.
        let enclosed = info
            .parent_id
            .is_none_or(|p| written.field_info(p).is_some());
        if written.field_info(field.id).is_some() || !enclosed {
            continue;
        }
        if field.required && field.initial_default.is_none() {
            return Err(format!(
                "column `{}` (id {}) was added as required, which the files do not have",
                info.full_name, field.id
            ));
        }
        if field.write_default.is_some() && field.write_default != field.initial_default {
            return Err(format!(
                "column `{}` (id {}) was added with a write default the files do not have",
                info.full_name, field.id
            ));
        }
    }
    for info in written.fields_breadth_first() {
        let id = info.field.id;
        let Some(found) = now.field_info(id) else {
            return Err(format!(
                "column `{}` (id {id}) is no longer in the table's schema",
                info.full_name
            ));
        };
        if found.full_name != info.full_name {
            return Err(format!(
                "field id {id} is `{}` in the table now, but the files were written with it as `{}`",
                found.full_name, info.full_name
            ));
        }
        if found.field.required && !info.field.required {
            return Err(format!("column `{}` became required", info.full_name));
        }
        let same_kind = match (&info.field.field_type, &found.field.field_type) {
            (Type::Primitive(a), Type::Primitive(b)) => is_promotion_allowed(a, b),
            (Type::Struct(_), Type::Struct(_))
            | (Type::List(_), Type::List(_))
            | (Type::Map(_), Type::Map(_)) => true,
            _ => false,
        };
        if !same_kind {
            return Err(format!(
                "column `{}` is {} in the table now, written as {}",
                info.full_name, found.field.field_type, info.field.field_type
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use iceberg_spec::{PartitionSpec, PrimitiveType as P, SortOrder};

    use super::*;

    fn meta(fields: Vec<NestedField>) -> TableMetadata {
        TableMetadata::new_table(
            iceberg_spec::FormatVersion::V2,
            uuid::Uuid::nil(),
            "memory://t",
            Schema::new(0, fields).unwrap(),
            PartitionSpec::unpartitioned(),
            SortOrder::unsorted(),
            Default::default(),
            1,
        )
        .unwrap()
    }

    fn input() -> Vec<NestedField> {
        vec![
            NestedField::optional(0, "id", P::Long),
            NestedField::optional(0, "note", P::String),
        ]
    }

    #[test]
    fn a_fitting_input_plans_nothing() {
        let m = meta(vec![NestedField::optional(1, "id", P::Long)]);
        let fits = vec![NestedField::optional(0, "id", P::Int)];
        assert!(
            SchemaEvolution::plan(&m, &fits, UnionOptions::default())
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn applies_on_its_base_and_on_a_base_that_raced_the_same_way() {
        let m = meta(vec![NestedField::optional(1, "id", P::Int)]);
        let e = SchemaEvolution::plan(&m, &input(), UnionOptions::default())
            .unwrap()
            .unwrap();
        assert_eq!(e.changes().len(), 2, "{:?}", e.changes());
        let mut on_base = m.clone();
        assert_eq!(e.apply("t", &mut on_base).unwrap(), 1);
        assert_eq!(
            on_base.current_schema().unwrap().as_struct(),
            e.schema().as_struct()
        );
        // Another writer made the same change first: its schema is reused.
        let mut raced = on_base.clone();
        assert_eq!(e.apply("t", &mut raced).unwrap(), 1);
        assert_eq!(raced.schemas.len(), 2);
    }

    #[test]
    fn a_base_whose_ids_were_taken_is_a_conflict() {
        let m = meta(vec![NestedField::optional(1, "id", P::Long)]);
        let e = SchemaEvolution::plan(&m, &input(), UnionOptions::default())
            .unwrap()
            .unwrap();
        // Meanwhile another writer added `other` as id 2, the id our `note` was written with.
        let other = SchemaEvolution::plan(
            &m,
            &[NestedField::optional(0, "other", P::Int)],
            UnionOptions::default(),
        )
        .unwrap()
        .unwrap();
        let mut raced = m.clone();
        other.apply("t", &mut raced).unwrap();
        match e.apply("t", &mut raced) {
            Err(Error::SchemaConflict { reason, .. }) => {
                assert!(
                    reason.contains("`other`") && reason.contains("`note`"),
                    "{reason}"
                );
            }
            other => panic!("expected a conflict, got {other:?}"),
        }
        // A widening by another writer is no conflict: int files read as long.
        let m = meta(vec![NestedField::optional(1, "id", P::Int)]);
        let e = SchemaEvolution::plan(
            &m,
            &[
                NestedField::optional(0, "id", P::Int),
                NestedField::optional(0, "n", P::Int),
            ],
            UnionOptions::default(),
        )
        .unwrap()
        .unwrap();
        let widen = SchemaEvolution::plan(
            &m,
            &[NestedField::optional(0, "id", P::Long)],
            UnionOptions::default(),
        )
        .unwrap()
        .unwrap();
        let mut raced = m.clone();
        widen.apply("t", &mut raced).unwrap();
        e.apply("t", &mut raced).unwrap();
        let s = raced.current_schema().unwrap();
        assert_eq!(
            s.field_by_id(1).unwrap().field_type,
            Type::Primitive(P::Long)
        );
        assert_eq!(s.field_by_name("n").unwrap().id, 2);
    }

    #[test]
    fn a_column_added_meanwhile_must_read_as_its_writers_would_write_it() {
        let written = Schema::new(0, vec![NestedField::optional(1, "id", P::Long)]).unwrap();
        let with = |field: NestedField| {
            Schema::new(1, vec![NestedField::optional(1, "id", P::Long), field]).unwrap()
        };
        let added = |f: fn(&mut NestedField)| {
            let mut field = NestedField::optional(2, "c", P::Int);
            f(&mut field);
            check_reads_as_written(&written, &with(field))
        };
        // Optional, no defaults: the files' rows read null, as written.
        assert!(added(|_| {}).is_ok());
        // The same default for old and new rows (v3): the files read it.
        assert!(
            added(|c| {
                c.required = true;
                c.initial_default = Some(5.into());
                c.write_default = Some(5.into());
            })
            .is_ok()
        );
        // A writer of the new schema would have written 7; the files would read null.
        let err = added(|c| c.write_default = Some(7.into())).unwrap_err();
        assert!(
            err.contains("`c`") && err.contains("write default"),
            "{err}"
        );
        let err = added(|c| c.required = true).unwrap_err();
        assert!(err.contains("`c`") && err.contains("required"), "{err}");
        // Under a struct the files lack, nothing is read at all.
        let nested = NestedField::optional(
            2,
            "s",
            iceberg_spec::StructType::new(vec![NestedField::required(3, "x", P::Int)]),
        );
        assert!(check_reads_as_written(&written, &with(nested)).is_ok());
    }
}
