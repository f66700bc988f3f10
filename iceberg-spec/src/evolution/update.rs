//! [`UpdateSchema`]: explicit schema changes (add, delete, rename, widen, make optional,
//! document, move), planned on one base schema and applied together, as Java's
//! `SchemaUpdate` does.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::datum::Datum;
use crate::error::{Error, Result};
use crate::schema::Schema;
use crate::types::{NestedField, PrimitiveType, StructType, Type};

use super::fresh::fresh_field;
use super::short_names::ShortNames;
use super::{EvolvedSchema, SchemaChange, is_promotion_allowed};

/// The parent id of top-level fields.
const ROOT: i32 = -1;

/// Where [`UpdateSchema::move_column`] puts a column among its siblings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Position {
    /// First in its struct.
    First,
    /// Right before the sibling of this name.
    Before(String),
    /// Right after the sibling of this name.
    After(String),
}

#[derive(Debug, Clone)]
enum Move {
    First(i32),
    Before(i32, i32),
    After(i32, i32),
}

/// Schema changes planned on one base schema (Java's `UpdateSchema`): every name refers to
/// the base schema (a column renamed here is still found by its old name), a column added
/// here can be moved but not changed further, and [`UpdateSchema::apply`] builds the result.
/// Each call checks its change at once and refuses it with an error naming the column.
///
/// ```
/// use iceberg_spec::evolution::UpdateSchema;
/// use iceberg_spec::{NestedField, PrimitiveType, Schema};
///
/// let base = Schema::new(0, vec![
///     NestedField::required(1, "id", PrimitiveType::Int),
///     NestedField::optional(2, "note", PrimitiveType::String),
/// ])?;
/// let mut update = UpdateSchema::new(&base, 2);
/// update.add_column(None, "score", PrimitiveType::Double.into(), None)?;
/// update.rename_column("note", "comment")?;
/// update.widen_column("id", PrimitiveType::Long)?;
/// let evolved = update.apply()?;
/// assert_eq!(evolved.schema.field_id_by_name("score"), Some(3));
/// assert_eq!(evolved.schema.field_id_by_name("comment"), Some(2));
/// # Ok::<(), iceberg_spec::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct UpdateSchema {
    base: Schema,
    case_insensitive: bool,
    /// The last id handed out.
    next_id: i32,
    /// The struct each base field sits in (`ROOT`, or the field whose type is the struct:
    /// the struct column itself, a list's element, a map's value).
    parents: BTreeMap<i32, i32>,
    deletes: BTreeSet<i32>,
    /// Base fields as changed (name, type, requiredness, doc; children come from the base).
    updates: BTreeMap<i32, NestedField>,
    /// New fields by the struct they go into.
    adds: BTreeMap<i32, Vec<NestedField>>,
    /// Full names of the new fields, to find them for moves.
    added: BTreeMap<String, i32>,
    /// Short names of the new fields (`points.x` for `points.element.x`), to their full
    /// names: ours (Java finds a field added in the same update by its full name only).
    added_short: BTreeMap<String, String>,
    /// Java's short names of the base's fields, which every change takes as Java's does.
    short: ShortNames,
    moves: BTreeMap<i32, Vec<Move>>,
    changes: Vec<SchemaChange>,
}

impl UpdateSchema {
    /// Changes to `base`; new ids start after `last_column_id` (the table's, so that a dropped
    /// column's id is never reused).
    pub fn new(base: &Schema, last_column_id: i32) -> Self {
        let mut parents = BTreeMap::new();
        index_parents(base.fields(), ROOT, &mut parents);
        Self {
            base: base.clone(),
            case_insensitive: false,
            next_id: last_column_id.max(base.highest_field_id()),
            parents,
            deletes: BTreeSet::new(),
            updates: BTreeMap::new(),
            adds: BTreeMap::new(),
            added: BTreeMap::new(),
            added_short: BTreeMap::new(),
            short: ShortNames::of(base),
            moves: BTreeMap::new(),
            changes: Vec::new(),
        }
    }

    /// Finds names ignoring ASCII case (Java's `caseSensitive(false)`).
    pub fn case_insensitive(&mut self, yes: bool) -> &mut Self {
        self.case_insensitive = yes;
        self
    }

    /// Adds an optional column `name` (of any type; nested ids are assigned in Java's order)
    /// at the end of `parent` (a struct column, or a list or map of structs; `None`: the
    /// table's top level).
    ///
    /// # Errors
    /// The parent is missing, deleted or not a struct, the name exists, or a top-level name
    /// has a dot (ambiguous with nesting).
    pub fn add_column(
        &mut self,
        parent: Option<&str>,
        name: &str,
        field_type: Type,
        doc: Option<&str>,
    ) -> Result<&mut Self> {
        let field = NestedField {
            doc: doc.map(str::to_string),
            ..NestedField::optional(0, name, field_type)
        };
        self.add(parent, field, None)?;
        Ok(self)
    }

    /// Adds a required primitive column whose rows in existing files read as `default` (its
    /// initial and write default, the spec's single-value JSON; format v3 only).
    ///
    /// # Errors
    /// As [`UpdateSchema::add_column`], or a default that is not a value of `field_type`.
    pub fn add_required_column(
        &mut self,
        parent: Option<&str>,
        name: &str,
        field_type: PrimitiveType,
        default: Value,
        doc: Option<&str>,
    ) -> Result<&mut Self> {
        let column = full_name(parent, name);
        let datum =
            Datum::from_json(&field_type, &default).map_err(|e| refuse(&column, e.to_string()))?;
        if matches!(datum, Datum::Float(v) if !v.is_finite())
            || matches!(datum, Datum::Double(v) if !v.is_finite())
        {
            // Java's `SingleValueParser` reads float defaults as JSON numbers only.
            return Err(refuse(&column, "a default must be a finite number".into()));
        }
        let field = NestedField {
            doc: doc.map(str::to_string),
            ..NestedField::required(0, name, field_type)
        };
        // Stored in the spec's form (`1` for a double is `1.0`, which Java's parser needs),
        // not as given.
        self.add(parent, field, Some(datum.to_json()))?;
        Ok(self)
    }

    fn add(
        &mut self,
        parent: Option<&str>,
        field: NestedField,
        default: Option<Value>,
    ) -> Result<()> {
        let column = full_name(parent, &field.name);
        if field.name.is_empty() {
            return Err(refuse(&column, "a column needs a name".into()));
        }
        let parent_id = match parent {
            None => {
                if field.name.contains('.') {
                    return Err(refuse(
                        &column,
                        "a top-level name with a dot is ambiguous; add it to its parent".into(),
                    ));
                }
                ROOT
            }
            Some(parent) => self.struct_of(parent)?,
        };
        // Full name as the base spells it (the parent found ignoring case keeps its case).
        let column = match parent_id {
            ROOT => field.name.clone(),
            id => format!("{}.{}", self.struct_name(id), field.name),
        };
        if let Some(existing) = self.find_base(&column)?
            && !self.deletes.contains(&existing)
        {
            return Err(refuse(&column, "the column already exists".into()));
        }
        if self.find_added(&column).is_some() {
            return Err(refuse(&column, "the column is already added".into()));
        }
        let mut new = fresh_field(&field, field.required, &mut self.next_id);
        new.initial_default.clone_from(&default);
        new.write_default = default;
        self.added.insert(column.clone(), new.id);
        let short = match parent_id {
            ROOT => None,
            id => self
                .short
                .of_id(id)
                .map(|parent| format!("{parent}.{}", field.name)),
        };
        // Never an alias that is another column's full name (a field named `value` added to
        // a map's value struct would shadow the value itself).
        let free = |s: &String| {
            *s != column && self.base.field_id_by_name(s).is_none() && !self.added.contains_key(s)
        };
        if let Some(short) = short.filter(free) {
            self.added_short.insert(short, column.clone());
        }
        self.changes
            .push(SchemaChange::Added { column, id: new.id });
        self.adds.entry(parent_id).or_default().push(new);
        Ok(())
    }

    /// Deletes column `name` (its id is never reused).
    ///
    /// # Errors
    /// The column is missing, an identifier field, or has changes or additions here.
    pub fn delete_column(&mut self, name: &str) -> Result<&mut Self> {
        let (id, column) = self.existing(name)?;
        if self.is_element_or_value(id) {
            return Err(refuse(
                &column,
                "a list's element or a map's value cannot be deleted, only its column".into(),
            ));
        }
        if self.base.identifier_field_ids().contains(&id) {
            return Err(refuse(
                &column,
                "an identifier field cannot be deleted".into(),
            ));
        }
        if self.updates.contains_key(&id) {
            return Err(refuse(
                &column,
                "the column has changes in this update".into(),
            ));
        }
        if self.adds.keys().any(|p| self.is_within(*p, id)) {
            return Err(refuse(
                &column,
                "the column has additions in this update".into(),
            ));
        }
        if self.deletes.insert(id) {
            self.changes.push(SchemaChange::Deleted { column });
        }
        Ok(self)
    }

    /// Renames column `name` to `new_name` (its id, and so its data, stays).
    ///
    /// # Errors
    /// The column is missing or deleted, or the new name is empty.
    pub fn rename_column(&mut self, name: &str, new_name: &str) -> Result<&mut Self> {
        let (id, column) = self.live(name)?;
        if new_name.is_empty() || new_name.contains('.') {
            return Err(refuse(
                &column,
                format!("`{new_name}` is not a column name (empty, or with a dot)"),
            ));
        }
        let field = self.updated(id, &column)?;
        if field.name != new_name {
            field.name = new_name.to_string();
            self.changes.push(SchemaChange::Renamed {
                column,
                to: new_name.to_string(),
            });
        }
        Ok(self)
    }

    /// Promotes primitive column `name` to `to` (int -> long, float -> double, decimal
    /// precision; the same type changes nothing).
    ///
    /// # Errors
    /// The column is missing, deleted, nested, or `to` is not a valid promotion of its type.
    pub fn widen_column(&mut self, name: &str, to: PrimitiveType) -> Result<&mut Self> {
        let (id, column) = self.live(name)?;
        let field = self.updated(id, &column)?;
        let Type::Primitive(from) = field.field_type.clone() else {
            return Err(refuse(
                &column,
                format!("{} is not a primitive type", field.field_type),
            ));
        };
        if from == to {
            return Ok(self);
        }
        if !is_promotion_allowed(&from, &to) {
            return Err(refuse(
                &column,
                format!(
                    "{from} -> {to} is not a valid promotion (int -> long, float -> double, \
                     decimal(P,S) -> decimal(P',S) with P' > P)"
                ),
            ));
        }
        field.field_type = Type::Primitive(to.clone());
        self.changes
            .push(SchemaChange::Widened { column, from, to });
        Ok(self)
    }

    /// Makes column `name` optional (an optional column changes nothing).
    ///
    /// # Errors
    /// The column is missing, deleted, a map key or an identifier field.
    pub fn make_column_optional(&mut self, name: &str) -> Result<&mut Self> {
        let (id, column) = self.live(name)?;
        if self.base.identifier_field_ids().contains(&id) {
            return Err(refuse(
                &column,
                "an identifier field must stay required".into(),
            ));
        }
        if self.is_map_key(id) {
            return Err(refuse(&column, "a map key is always required".into()));
        }
        let field = self.updated(id, &column)?;
        if field.required {
            field.required = false;
            self.changes.push(SchemaChange::MadeOptional { column });
        }
        Ok(self)
    }

    /// Sets the doc of column `name` (`None` removes it).
    ///
    /// # Errors
    /// The column is missing or deleted.
    pub fn update_column_doc(&mut self, name: &str, doc: Option<&str>) -> Result<&mut Self> {
        let (id, column) = self.live(name)?;
        let field = self.updated(id, &column)?;
        if field.doc.as_deref() != doc {
            field.doc = doc.map(str::to_string);
            self.changes.push(SchemaChange::DocUpdated { column });
        }
        Ok(self)
    }

    /// Moves column `name` (of the base, or added here) within its struct.
    ///
    /// # Errors
    /// Either column is missing or deleted, the reference is the column itself, or it sits in
    /// another struct.
    pub fn move_column(&mut self, name: &str, to: Position) -> Result<&mut Self> {
        let (id, column) = self.movable(name)?;
        if self.find_added(name).is_none() && !self.parents.contains_key(&id) {
            return Err(refuse(&column, "only a struct's fields can move".into()));
        }
        let parent = self.parent_of(id);
        let reference = match &to {
            Position::First => None,
            Position::Before(other) | Position::After(other) => {
                let (other_id, other_column) = self.movable(other)?;
                if other_id == id {
                    return Err(refuse(
                        &column,
                        "a column cannot move relative to itself".into(),
                    ));
                }
                if self.parent_of(other_id) != parent {
                    return Err(refuse(
                        &column,
                        format!("`{other_column}` is in another struct"),
                    ));
                }
                Some(other_id)
            }
        };
        let step = match (to, reference) {
            (Position::Before(_), Some(r)) => Move::Before(id, r),
            (Position::After(_), Some(r)) => Move::After(id, r),
            _ => Move::First(id),
        };
        self.moves.entry(parent).or_default().push(step);
        self.changes.push(SchemaChange::Moved { column });
        Ok(self)
    }

    /// The changes so far.
    pub fn changes(&self) -> &[SchemaChange] {
        &self.changes
    }

    /// The base schema with every change applied (with the base's schema id until
    /// [`super::add_current_schema`] gives it one).
    ///
    /// # Errors
    /// Two columns of one struct end up with the same name, or the result breaks a schema
    /// rule.
    pub fn apply(&self) -> Result<EvolvedSchema> {
        let fields = self.rebuild_struct(ROOT, "", self.base.fields())?;
        let schema = Schema::with_identifier_fields(
            self.base.schema_id(),
            fields,
            self.base.identifier_field_ids().to_vec(),
        )
        .map_err(|e| refuse("<schema>", e.to_string()))?;
        Ok(EvolvedSchema {
            schema,
            last_column_id: self.next_id,
            changes: self.changes.clone(),
        })
    }

    /// The fields of struct `parent` (`ROOT`, or the id of the field whose type it is) with
    /// every change; `name`: the struct's full name after renames.
    fn rebuild_struct(
        &self,
        parent: i32,
        name: &str,
        fields: &[NestedField],
    ) -> Result<Vec<NestedField>> {
        let prefix = Some(name).filter(|n| !n.is_empty());
        let mut out = Vec::with_capacity(fields.len());
        for f in fields {
            if !self.deletes.contains(&f.id) {
                out.push(self.rebuild_field(f, prefix)?);
            }
        }
        out.extend(self.adds.get(&parent).into_iter().flatten().cloned());
        for step in self.moves.get(&parent).into_iter().flatten() {
            let (id, reference) = match *step {
                Move::First(id) => (id, None),
                Move::Before(id, r) => (id, Some((r, 0))),
                Move::After(id, r) => (id, Some((r, 1))),
            };
            let Some(from) = out.iter().position(|f| f.id == id) else {
                continue;
            };
            let moved = out.remove(from);
            let to = match reference {
                None => Some(0),
                Some((r, after)) => out.iter().position(|f| f.id == r).map(|i| i + after),
            };
            // A reference deleted later in this update: the column stays where it was.
            out.insert(to.unwrap_or(from), moved);
        }
        let mut seen = BTreeSet::new();
        for f in &out {
            if !seen.insert(f.name.as_str()) {
                return Err(refuse(
                    &full_name(prefix, &f.name),
                    "two columns of one struct would have this name".into(),
                ));
            }
        }
        Ok(out)
    }

    /// Base field `field` with its changes and its children's.
    fn rebuild_field(&self, field: &NestedField, parent: Option<&str>) -> Result<NestedField> {
        let mut out = self
            .updates
            .get(&field.id)
            .cloned()
            .unwrap_or_else(|| field.clone());
        let column = full_name(parent, &out.name);
        // The changed copy's type is the base's unless widened (a primitive): children are
        // always rebuilt from the base's.
        let ty = match &out.field_type {
            Type::Primitive(_) => out.field_type.clone(),
            _ => field.field_type.clone(),
        };
        out.field_type = match ty {
            Type::Primitive(_) => ty,
            Type::Struct(s) => Type::Struct(StructType::new(
                self.rebuild_struct(field.id, &column, &s.fields)?,
            )),
            Type::List(mut l) => {
                let element = self.rebuild_field(&l.element_field, Some(&column))?;
                l.element_field = Box::new(element);
                Type::List(l)
            }
            Type::Map(mut m) => {
                m.key_field = Box::new(self.rebuild_field(&m.key_field, Some(&column))?);
                m.value_field = Box::new(self.rebuild_field(&m.value_field, Some(&column))?);
                Type::Map(m)
            }
        };
        Ok(out)
    }

    /// The changed copy of base field `id` (made on first use).
    fn updated(&mut self, id: i32, column: &str) -> Result<&mut NestedField> {
        if !self.updates.contains_key(&id) {
            let field = self.base.field_by_id(id).cloned();
            let field =
                field.ok_or_else(|| refuse(column, "no such column in the table".into()))?;
            self.updates.insert(id, field);
        }
        self.updates
            .get_mut(&id)
            .ok_or_else(|| refuse(column, "no such column in the table".into()))
    }

    /// Base column `name`: its id and full name as the base spells it.
    fn existing(&self, name: &str) -> Result<(i32, String)> {
        let id = self
            .find_base(name)?
            .ok_or_else(|| refuse(name, "no such column in the table".into()))?;
        let column = self.base.field_name(id).unwrap_or(name).to_string();
        if self.in_map_key(id) {
            return Err(refuse(
                &column,
                "map keys cannot change (Java and PyIceberg refuse it too)".into(),
            ));
        }
        Ok((id, column))
    }

    /// Whether field `id` is a map's key or lies inside one.
    fn in_map_key(&self, id: i32) -> bool {
        let mut at = Some(id);
        while let Some(id) = at {
            if self.is_map_key(id) {
                return true;
            }
            at = self.base.field_info(id).and_then(|i| i.parent_id);
        }
        false
    }

    /// As [`Self::existing`], and not deleted here.
    fn live(&self, name: &str) -> Result<(i32, String)> {
        let (id, column) = self.existing(name)?;
        if self.deletes.iter().any(|d| self.is_within(id, *d)) {
            return Err(refuse(
                &column,
                "the column is deleted in this update".into(),
            ));
        }
        Ok((id, column))
    }

    /// A column of the base (not deleted) or added here.
    fn movable(&self, name: &str) -> Result<(i32, String)> {
        if let Some(id) = self.find_added(name) {
            let column = self.added_name(id).unwrap_or(name);
            return Ok((id, column.to_string()));
        }
        self.live(name)
    }

    fn find_base(&self, name: &str) -> Result<Option<i32>> {
        if !self.case_insensitive {
            let short = || self.short.id(name, false);
            return Ok(self.base.field_id_by_name(name).or_else(short));
        }
        let mut found = self
            .base
            .fields_breadth_first()
            .into_iter()
            .filter(|i| i.full_name.eq_ignore_ascii_case(name));
        let first = found.next().map(|i| i.field.id);
        if found.next().is_some() {
            return Err(refuse(name, "matches two columns ignoring case".into()));
        }
        Ok(first.or_else(|| self.short.id(name, true)))
    }

    /// A column added here, by its full name or Java's short name.
    fn find_added(&self, name: &str) -> Option<i32> {
        let matches = |n: &str| {
            if self.case_insensitive {
                n.eq_ignore_ascii_case(name)
            } else {
                n == name
            }
        };
        // A full name first, then a short one.
        let by_full = self.added.iter().find(|(n, _)| matches(n));
        by_full.map(|(_, id)| *id).or_else(|| {
            let (_, full) = self.added_short.iter().find(|(short, _)| matches(short))?;
            self.added.get(full).copied()
        })
    }

    /// The full name of a column added here.
    fn added_name(&self, id: i32) -> Option<&str> {
        self.added
            .iter()
            .find(|(_, added)| **added == id)
            .map(|(n, _)| n.as_str())
    }

    /// The id of the struct that new fields of column `parent` go into.
    fn struct_of(&self, parent: &str) -> Result<i32> {
        let (id, column) = self.live(parent)?;
        let field = self
            .base
            .field_by_id(id)
            .ok_or_else(|| refuse(parent, "no such column".into()))?;
        let target = match &field.field_type {
            Type::List(l) => &l.element_field,
            Type::Map(m) => &m.value_field,
            _ => field,
        };
        match &target.field_type {
            Type::Struct(_) => Ok(target.id),
            other => Err(refuse(
                &column,
                format!("a column cannot be added to {other}"),
            )),
        }
    }

    /// The full name of the struct with id `id` as new fields are named under it.
    fn struct_name(&self, id: i32) -> String {
        self.base.field_name(id).unwrap_or_default().to_string()
    }

    fn parent_of(&self, id: i32) -> i32 {
        if let Some(p) = self.parents.get(&id) {
            return *p;
        }
        self.adds
            .iter()
            .find(|(_, fields)| fields.iter().any(|f| f.id == id))
            .map_or(ROOT, |(p, _)| *p)
    }

    /// Whether field `parent` is `id` itself or inside it.
    fn is_within(&self, mut parent: i32, id: i32) -> bool {
        while parent != ROOT {
            if parent == id {
                return true;
            }
            match self.base.field_info(parent).and_then(|i| i.parent_id) {
                Some(p) => parent = p,
                None => return false,
            }
        }
        false
    }

    fn is_element_or_value(&self, id: i32) -> bool {
        self.base
            .field_info(id)
            .and_then(|i| i.parent_id)
            .and_then(|p| self.base.field_by_id(p))
            .is_some_and(|p| match &p.field_type {
                Type::List(l) => l.element_field.id == id,
                Type::Map(m) => m.value_field.id == id,
                _ => false,
            })
    }

    fn is_map_key(&self, id: i32) -> bool {
        self.base
            .field_info(id)
            .and_then(|i| i.parent_id)
            .and_then(|p| self.base.field_by_id(p))
            .is_some_and(|p| matches!(&p.field_type, Type::Map(m) if m.key_field.id == id))
    }
}

/// Records, for every field, the id of the struct it sits in.
fn index_parents(fields: &[NestedField], parent: i32, out: &mut BTreeMap<i32, i32>) {
    for f in fields {
        out.insert(f.id, parent);
        index_type(f, out);
    }
}

fn index_type(field: &NestedField, out: &mut BTreeMap<i32, i32>) {
    match &field.field_type {
        Type::Primitive(_) => {}
        Type::Struct(s) => index_parents(&s.fields, field.id, out),
        Type::List(l) => index_type(&l.element_field, out),
        Type::Map(m) => {
            index_type(&m.key_field, out);
            index_type(&m.value_field, out);
        }
    }
}

fn full_name(parent: Option<&str>, name: &str) -> String {
    match parent {
        Some(p) => format!("{p}.{name}"),
        None => name.to_string(),
    }
}

fn refuse(column: &str, reason: String) -> Error {
    Error::SchemaEvolution {
        column: column.to_string(),
        reason,
    }
}
