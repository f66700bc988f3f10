//! [`union_by_name`]: the table schema evolved to take every column of an input schema.

use crate::error::{Error, Result};
use crate::schema::Schema;
use crate::types::{ListType, MapType, NestedField, StructType, Type};

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
        let column = union
            .changes
            .iter()
            .find_map(|c| match c {
                SchemaChange::MadeOptional { column } => Some(column.clone()),
                _ => None,
            })
            .unwrap_or_default();
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
        // Where the previous input field sits in `fields` (new fields go after it).
        let mut cursor: Option<usize> = None;
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
            match found {
                Some((i, existing)) => {
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
                    let merged = self.field(existing, field, &name, in_key)?;
                    let at = fields.iter().position(|f| f.id == existing.id).unwrap_or(i);
                    fields[at] = merged;
                    cursor = Some(at);
                }
                None => {
                    if in_key {
                        return Err(Error::SchemaEvolution {
                            column,
                            reason: "a field cannot be added to a map key".into(),
                        });
                    }
                    let added = self.fresh(field, false);
                    self.changes.push(SchemaChange::Added {
                        column,
                        id: added.id,
                    });
                    let at = cursor.map_or(0, |c| c + 1);
                    fields.insert(at, added);
                    cursor = Some(at);
                }
            }
        }
        Ok(fields)
    }

    /// The union of one existing field with the input's field of the same name.
    fn field(
        &mut self,
        existing: &NestedField,
        input: &NestedField,
        column: &str,
        in_key: bool,
    ) -> Result<NestedField> {
        let mut out = existing.clone();
        out.field_type = self.types(&existing.field_type, &input.field_type, column, in_key)?;
        if existing.required && !input.required && !self.options.keep_required {
            out.required = false;
            self.changes.push(SchemaChange::MadeOptional {
                column: column.to_string(),
            });
        }
        if input.doc.is_some() && input.doc != existing.doc {
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
                let element =
                    self.field(&table.element_field, &given.element_field, &name, in_key)?;
                Ok(Type::List(ListType {
                    element_field: Box::new(element),
                }))
            }
            (Type::Map(table), Type::Map(given)) => {
                let key_name = format!("{column}.key");
                let mut key = self.field(&table.key_field, &given.key_field, &key_name, true)?;
                // Map keys are always required.
                key.required = true;
                let value_name = format!("{column}.value");
                let value =
                    self.field(&table.value_field, &given.value_field, &value_name, in_key)?;
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

    /// `field` with new ids, Java's order (`TypeUtil.assignFreshIds`): the field, then each
    /// struct's fields before their children, a list's element, a map's key and value.
    /// Top-level additions are optional (`required` false); nested ones keep the input's.
    fn fresh(&mut self, field: &NestedField, required: bool) -> NestedField {
        self.next_id += 1;
        let id = self.next_id;
        let field_type = self.fresh_type(&field.field_type);
        NestedField {
            id,
            name: field.name.clone(),
            required,
            field_type,
            doc: field.doc.clone(),
            initial_default: None,
            write_default: None,
        }
    }

    fn fresh_type(&mut self, ty: &Type) -> Type {
        match ty {
            Type::Primitive(_) => ty.clone(),
            Type::Struct(s) => {
                let ids: Vec<i32> = s
                    .fields
                    .iter()
                    .map(|_| {
                        self.next_id += 1;
                        self.next_id
                    })
                    .collect();
                let fields = s
                    .fields
                    .iter()
                    .zip(ids)
                    .map(|(f, id)| NestedField {
                        id,
                        name: f.name.clone(),
                        required: f.required,
                        field_type: self.fresh_type(&f.field_type),
                        doc: f.doc.clone(),
                        initial_default: None,
                        write_default: None,
                    })
                    .collect();
                Type::Struct(StructType::new(fields))
            }
            Type::List(l) => {
                self.next_id += 1;
                let id = self.next_id;
                let element = &l.element_field;
                Type::List(ListType::new(
                    id,
                    self.fresh_type(&element.field_type),
                    element.required,
                ))
            }
            Type::Map(m) => {
                self.next_id += 1;
                let key_id = self.next_id;
                self.next_id += 1;
                let value_id = self.next_id;
                let key = self.fresh_type(&m.key_field.field_type);
                let value = self.fresh_type(&m.value_field.field_type);
                Type::Map(MapType::new(
                    key_id,
                    key,
                    value_id,
                    value,
                    m.value_field.required,
                ))
            }
        }
    }
}
