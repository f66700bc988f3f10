//! [`union_by_name`]: the table schema evolved to take every column of an input schema.

use crate::error::{Error, Result};
use crate::schema::Schema;
use crate::types::{ListType, MapType, NestedField, StructType, Type};

use super::fresh::fresh_field;
use super::{EvolvedSchema, SchemaChange, UnionOptions, is_promotion_allowed};

/// Evolves `base` so that every column of `input` (matched by name, its field ids ignored)
/// has a place: a column the table lacks is added as optional, where it sits in the input
/// (after the column the input has before it), with new ids from `last_column_id`; a
/// narrower table type is promoted; a required table column the input has optional is made
/// optional (unless [`UnionOptions::keep_required`]); a doc the input gives replaces the
/// table's. A column of the table the input lacks is kept, and an input type narrower than
/// the table's (`int` for `long`) changes nothing.
///
/// # Errors
/// [`Error::SchemaEvolution`] naming the column: a type that is not the table's nor a valid
/// promotion of it (a narrowing of the table, `string` to `int`, a struct for a primitive),
/// a field added to a map key, a name matched twice, or a result that breaks a schema rule
/// (an identifier column made optional).
pub fn union_by_name(
    base: &Schema,
    last_column_id: i32,
    input: &[NestedField],
    options: UnionOptions,
) -> Result<EvolvedSchema> {
    let mut union = Union {
        options,
        next_id: last_column_id.max(base.highest_field_id()),
        changes: Vec::new(),
    };
    let fields = union.structs(base.fields(), input, "", false)?;
    let last_column_id = union.next_id;
    let schema = Schema::with_identifier_fields(
        base.schema_id(),
        fields,
        base.identifier_field_ids().to_vec(),
    )
    .map_err(|e| {
        // The rule a union can break: an identifier column made optional. Name it.
        let identifiers: Vec<&str> = base
            .identifier_field_ids()
            .iter()
            .filter_map(|id| base.field_name(*id))
            .collect();
        let column = union
            .changes
            .iter()
            .find_map(|c| match c {
                SchemaChange::MadeOptional { column } if identifiers.contains(&column.as_str()) => {
                    Some(column.clone())
                }
                _ => None,
            })
            .unwrap_or_else(|| "<schema>".into());
        Error::SchemaEvolution {
            column,
            reason: e.to_string(),
        }
    })?;
    Ok(EvolvedSchema {
        schema,
        last_column_id,
        changes: union.changes,
    })
}

struct Union {
    options: UnionOptions,
    /// The last id handed out.
    next_id: i32,
    changes: Vec<SchemaChange>,
}

fn full_name(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_string()
    } else {
        format!("{parent}.{name}")
    }
}

impl Union {
    fn same_name(&self, a: &str, b: &str) -> bool {
        if self.options.case_insensitive {
            a.eq_ignore_ascii_case(b)
        } else {
            a == b
        }
    }

    /// The union of a struct's fields with the input's; `in_key`: inside a map key, where
    /// nothing may be added.
    ///
    /// Ids follow Java's `UnionByNameVisitor`, which visits the input after its children:
    /// the fields added inside this struct's existing fields get theirs first, then this
    /// struct's new fields in input order.
    fn structs(
        &mut self,
        base: &[NestedField],
        input: &[NestedField],
        parent: &str,
        in_key: bool,
    ) -> Result<Vec<NestedField>> {
        let mut fields: Vec<NestedField> = base.to_vec();
        // Which input field took each base field, to refuse a second one.
        let mut taken: Vec<Option<&str>> = vec![None; base.len()];
        // Per input field, the base field it merged into (`None`: a new field).
        let mut matched: Vec<Option<i32>> = Vec::with_capacity(input.len());
        for field in input {
            let column = full_name(parent, &field.name);
            let mut matches = base
                .iter()
                .enumerate()
                .filter(|(_, b)| self.same_name(&b.name, &field.name));
            let found = matches.next();
            if let Some((_, other)) = matches.next() {
                return Err(Error::SchemaEvolution {
                    column,
                    reason: format!(
                        "matches both `{}` and `{}` ignoring case",
                        found.map(|(_, b)| b.name.as_str()).unwrap_or_default(),
                        other.name
                    ),
                });
            }
            let Some((i, existing)) = found else {
                if in_key {
                    return Err(Error::SchemaEvolution {
                        column,
                        reason: "a field cannot be added to a map key".into(),
                    });
                }
                matched.push(None);
                continue;
            };
            if let Some(first) = taken[i] {
                return Err(Error::SchemaEvolution {
                    column,
                    reason: format!(
                        "the input has `{first}` and `{}` for the same column",
                        field.name
                    ),
                });
            }
            taken[i] = Some(field.name.as_str());
            let name = full_name(parent, &existing.name);
            fields[i] = self.field(existing, field, &name, in_key, true)?;
            matched.push(Some(existing.id));
        }
        // This struct's new fields, each right after the input field before it.
        let mut added: Vec<&str> = Vec::new();
        let mut cursor: Option<usize> = None;
        for (field, matched) in input.iter().zip(matched) {
            if let Some(id) = matched {
                cursor = fields.iter().position(|f| f.id == id);
                continue;
            }
            let column = full_name(parent, &field.name);
            if let Some(first) = added.iter().find(|a| self.same_name(a, &field.name)) {
                return Err(Error::SchemaEvolution {
                    column,
                    reason: format!("the input has `{first}` and `{}`", field.name),
                });
            }
            added.push(&field.name);
            let new = fresh_field(field, false, &mut self.next_id);
            self.changes
                .push(SchemaChange::Added { column, id: new.id });
            let at = cursor.map_or(0, |c| c + 1);
            fields.insert(at, new);
            cursor = Some(at);
        }
        Ok(fields)
    }

    /// The union of one existing field with the input's field of the same name.
    /// `relax`: the field may be made optional (a map key, or a field inside one, may not).
    fn field(
        &mut self,
        existing: &NestedField,
        input: &NestedField,
        column: &str,
        in_key: bool,
        relax: bool,
    ) -> Result<NestedField> {
        let mut out = existing.clone();
        out.field_type = self.types(&existing.field_type, &input.field_type, column, in_key)?;
        // Nothing inside a map key changes either (Java: "Cannot update map keys").
        if relax && !in_key && existing.required && !input.required && !self.options.keep_required {
            out.required = false;
            self.changes.push(SchemaChange::MadeOptional {
                column: column.to_string(),
            });
        }
        // A map key's doc stays: Java and PyIceberg refuse any change to a map key.
        if !in_key && input.doc.is_some() && input.doc != existing.doc {
            out.doc.clone_from(&input.doc);
            self.changes.push(SchemaChange::DocUpdated {
                column: column.to_string(),
            });
        }
        Ok(out)
    }

    fn types(&mut self, existing: &Type, input: &Type, column: &str, in_key: bool) -> Result<Type> {
        let refuse = |reason: String| Error::SchemaEvolution {
            column: column.to_string(),
            reason,
        };
        match (existing, input) {
            (Type::Primitive(table), Type::Primitive(given)) => {
                if is_promotion_allowed(given, table) {
                    // The same type, or a narrower one the table's type reads.
                    Ok(existing.clone())
                } else if in_key {
                    Err(refuse(format!(
                        "the table's map key is {table} and the input's {given}: map keys \
                         cannot change (Java and PyIceberg refuse it too)"
                    )))
                } else if is_promotion_allowed(table, given) {
                    self.changes.push(SchemaChange::Widened {
                        column: column.to_string(),
                        from: table.clone(),
                        to: given.clone(),
                    });
                    Ok(input.clone())
                } else {
                    Err(refuse(format!(
                        "the table has {table} and the input {given}, which is not a valid \
                         promotion (int -> long, float -> double, decimal(P,S) -> decimal(P',S) \
                         with P' > P)"
                    )))
                }
            }
            (Type::Struct(table), Type::Struct(given)) => Ok(Type::Struct(StructType::new(
                self.structs(&table.fields, &given.fields, column, in_key)?,
            ))),
            (Type::List(table), Type::List(given)) => {
                let name = format!("{column}.element");
                let element = self.field(
                    &table.element_field,
                    &given.element_field,
                    &name,
                    in_key,
                    true,
                )?;
                Ok(Type::List(ListType {
                    element_field: Box::new(element),
                }))
            }
            (Type::Map(table), Type::Map(given)) => {
                let key_name = format!("{column}.key");
                // Map keys are always required.
                let key = self.field(&table.key_field, &given.key_field, &key_name, true, false)?;
                let value_name = format!("{column}.value");
                let value = self.field(
                    &table.value_field,
                    &given.value_field,
                    &value_name,
                    in_key,
                    true,
                )?;
                Ok(Type::Map(MapType {
                    key_field: Box::new(key),
                    value_field: Box::new(value),
                }))
            }
            _ => Err(refuse(format!(
                "the table has {existing} and the input {input}: a column cannot change kind"
            ))),
        }
    }
}
