//! New field ids for an added column, in Java's order (`TypeUtil.assignFreshIds`).

use crate::types::{ListType, MapType, NestedField, StructType, Type};

/// `field` with new ids taken after `next_id` (the last id handed out): the field, then each
/// struct's fields before their children, a list's element, a map's key and value. The
/// field's requiredness is `required`; nested fields keep theirs; no defaults are kept.
pub(super) fn fresh_field(field: &NestedField, required: bool, next_id: &mut i32) -> NestedField {
    *next_id += 1;
    let id = *next_id;
    NestedField {
        id,
        name: field.name.clone(),
        required,
        field_type: fresh_type(&field.field_type, next_id),
        doc: field.doc.clone(),
        initial_default: None,
        write_default: None,
    }
}

fn fresh_type(ty: &Type, next_id: &mut i32) -> Type {
    match ty {
        Type::Primitive(_) => ty.clone(),
        Type::Struct(s) => {
            let ids: Vec<i32> = s
                .fields
                .iter()
                .map(|_| {
                    *next_id += 1;
                    *next_id
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
                    field_type: fresh_type(&f.field_type, next_id),
                    doc: f.doc.clone(),
                    initial_default: None,
                    write_default: None,
                })
                .collect();
            Type::Struct(StructType::new(fields))
        }
        Type::List(l) => {
            *next_id += 1;
            let id = *next_id;
            let element = &l.element_field;
            Type::List(ListType::new(
                id,
                fresh_type(&element.field_type, next_id),
                element.required,
            ))
        }
        Type::Map(m) => {
            *next_id += 1;
            let key_id = *next_id;
            *next_id += 1;
            let value_id = *next_id;
            let key = fresh_type(&m.key_field.field_type, next_id);
            let value = fresh_type(&m.value_field.field_type, next_id);
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
