//! `iceberg append --evolve`: the table's schema unioned with the inputs' in the same commit
//! as the rows (`iceberg_append::SchemaEvolution`).
//!
//! Columns the table lacks are added (optional, where the input has them); typed inputs
//! (Parquet, Arrow IPC) also widen a column whose type the input promotes (`int` to `long`,
//! `float` to `double`, a decimal's precision). Text inputs (CSV, NDJSON) give their values
//! no type of their own: a column the table has keeps the table's type (its values are read
//! into it exactly or refused), unless `--column NAME=TYPE` asks for a wider one, and new
//! columns get inferred types as `--create` infers them. Required columns stay required (an
//! input that is only inferred as nullable does not relax them); nulls in one are refused.

use iceberg_append::SchemaEvolution;
use iceberg_spec::evolution::{UnionOptions, union_by_name};
use iceberg_spec::{NestedField, Schema, TableMetadata};

use super::create;
use crate::cli::{AppendArgs, InputFormat};
use crate::error::{Error, Result};
use crate::input::Input;

/// How `--evolve` matches and relaxes columns (see the module docs).
const OPTIONS: UnionOptions = UnionOptions {
    case_insensitive: false,
    keep_required: true,
};

/// The evolution the inputs need; `None` when they fit the table as it is.
///
/// # Errors
/// An input whose schema cannot be read, or a change the evolution rules refuse (named by
/// column).
pub(crate) fn plan(
    args: &AppendArgs,
    inputs: &[Input],
    metadata: &TableMetadata,
) -> Result<Option<SchemaEvolution>> {
    let current = metadata.current_schema()?;
    let mut fields: Vec<NestedField> = Vec::new();
    // Inputs of one kind at a time: text inputs are inferred together, as --create does.
    let text: Vec<Input> = inputs
        .iter()
        .filter(|i| matches!(i.format, InputFormat::Csv | InputFormat::Json))
        .cloned()
        .collect();
    for format in [InputFormat::Csv, InputFormat::Json] {
        let same: Vec<Input> = text
            .iter()
            .filter(|i| i.format == format)
            .cloned()
            .collect();
        if let Some(first) = same.first() {
            let inferred = create::schema_of(&first.path, &same, &args.def, &args.read)?;
            fields = merged(
                fields,
                &text_fields(inferred.fields(), current, &args.def.columns),
            )?;
        }
    }
    for typed in inputs
        .iter()
        .filter(|i| matches!(i.format, InputFormat::Parquet | InputFormat::Ipc))
    {
        let one = std::slice::from_ref(typed);
        let schema = create::schema_of(&typed.path, one, &args.def, &args.read)?;
        fields = merged(fields, schema.fields())?;
    }
    Ok(SchemaEvolution::plan(metadata, &fields, OPTIONS)?)
}

/// Text columns the table has as primitives take the table's type unless `--column` names
/// them.
fn text_fields(
    inferred: &[NestedField],
    table: &Schema,
    columns: &[(String, String)],
) -> Vec<NestedField> {
    inferred
        .iter()
        .map(|f| match table.fields().iter().find(|t| t.name == f.name) {
            Some(t)
                if t.field_type.as_primitive().is_some()
                    && f.field_type.as_primitive().is_some()
                    && !columns.iter().any(|(n, _)| n == &f.name) =>
            {
                let mut f = f.clone();
                f.field_type = t.field_type.clone();
                f
            }
            _ => f.clone(),
        })
        .collect()
}

/// The columns of `a` and `b` (by name), as one input to union the table with.
fn merged(a: Vec<NestedField>, b: &[NestedField]) -> Result<Vec<NestedField>> {
    if a.is_empty() {
        return Ok(b.to_vec());
    }
    // `a` is one input's schema or an earlier union: its ids are distinct.
    let schema = Schema::new(0, a).map_err(|e| Error::Usage(e.to_string()))?;
    let union = union_by_name(&schema, schema.highest_field_id(), b, OPTIONS)?;
    Ok(union.schema.fields().to_vec())
}
