//! `iceberg alter NS.T ...`: one schema, partition spec, sort order or property change,
//! committed as a new metadata file (`iceberg_append::commit_table_update`); the data files
//! stay as they are.

use iceberg_append::{SystemEnvironment, TableUpdate, commit_table_update};
use iceberg_spec::evolution::{Position, UpdatePartitionSpec, UpdateSchema};
use iceberg_spec::{PrimitiveType, TableMetadata, Type};
use serde_json::json;

use crate::catalog::OpenCatalog;
use crate::cli::{AlterChange, Cli};
use crate::error::{Error, Result};
use iceberg_spec::partition_expr::{parse_term, sort_order};

/// Runs `iceberg alter NS.T CHANGE`.
///
/// # Errors
/// A missing table, a change the schema rules refuse (naming the column), a bad property, or
/// a commit that lost its race.
pub(crate) async fn run(cli: &Cli, table: &str, change: &AlterChange) -> Result<()> {
    let open = OpenCatalog::open(cli, false).await?;
    let result = async {
        let (ident, loaded) = open.load(table).await?;
        // A change the schema rules refuse is a bad argument, named by its column.
        let (update, changes) = plan(&loaded.metadata, change).map_err(|e| match e {
            Error::Spec(
                e @ (iceberg_spec::Error::SchemaEvolution { .. }
                | iceberg_spec::Error::PartitionEvolution { .. }),
            ) => Error::Usage(e.to_string()),
            other => other,
        })?;
        let done = commit_table_update(open.catalog.as_ref(), &ident, &update, &SystemEnvironment)
            .await
            .map_err(|e| match e {
                // What the spec refuses on the table's metadata (a dropped partition source, a
                // reserved or invalid property, a v3 feature on v2) is a bad argument too.
                iceberg_append::Error::Spec(e) => Error::Usage(e.to_string()),
                other => other.into(),
            })?;
        Ok::<_, Error>((ident, done, changes))
    }
    .await;
    open.close().await;
    let (ident, done, changes) = result?;
    if cli.json {
        let out = json!({
            "table": ident.to_string(),
            "metadata_location": done.metadata_location,
            "schema_id": done.schema_id,
            "spec_id": done.spec_id,
            "sort_order_id": done.sort_order_id,
            "changes": changes,
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        outln!("altered {ident}: {}", changes.join("; "));
        outln!(
            "schema id {}, spec id {}, sort order id {}, metadata {}",
            done.schema_id,
            done.spec_id,
            done.sort_order_id,
            done.metadata_location
        );
    }
    Ok(())
}

/// The update `change` makes to `meta`, and what it changes in words.
fn plan(meta: &TableMetadata, change: &AlterChange) -> Result<(TableUpdate, Vec<String>)> {
    let mut update = match change {
        AlterChange::SetProperty { properties } => {
            let words = properties.iter().map(|(k, v)| format!("set `{k}` = `{v}`"));
            let words = words.collect();
            let update = properties
                .iter()
                .fold(TableUpdate::new(), |u, (k, v)| u.set_property(k, v));
            return Ok((update, words));
        }
        AlterChange::UnsetProperty { keys } => {
            let words = keys.iter().map(|k| format!("removed `{k}`")).collect();
            let update = keys
                .iter()
                .fold(TableUpdate::new(), |u, k| u.remove_property(k));
            return Ok((update, words));
        }
        AlterChange::SetSort { keys } => {
            let order = sort_order(keys, meta.current_schema()?)
                .map_err(|e| Error::Usage(e.to_string()))?;
            let words = if order.is_unsorted() {
                "unsorted".to_string()
            } else {
                format!("sorted by {}", keys.join(", "))
            };
            return Ok((TableUpdate::new().with_sort_order(meta, order), vec![words]));
        }
        AlterChange::AddPartitionField { .. }
        | AlterChange::DropPartitionField { .. }
        | AlterChange::RenamePartitionField { .. } => return plan_spec(meta, change),
        _ => UpdateSchema::new(meta.current_schema()?, meta.last_column_id),
    };
    match change {
        AlterChange::AddColumn {
            name,
            field_type,
            after,
            before,
            first,
            doc,
            default,
        } => {
            let (parent, leaf) = match name.rsplit_once('.') {
                Some((parent, leaf)) => (Some(parent), leaf),
                None => (None, name.as_str()),
            };
            let ty = parse_type(field_type)?;
            match default {
                None => update.add_column(parent, leaf, ty, doc.as_deref())?,
                Some(text) => {
                    let Type::Primitive(p) = ty else {
                        return Err(Error::Usage(format!(
                            "--default: `{name}` is nested; a required column with a default \
                             must be primitive"
                        )));
                    };
                    let value = serde_json::from_str(text)
                        .map_err(|e| Error::Usage(format!("--default {text}: not JSON: {e}")))?;
                    update.add_required_column(parent, leaf, p, value, doc.as_deref())?
                }
            };
            if let Some(to) = position(after, before, *first) {
                update.move_column(name, to)?;
            }
        }
        AlterChange::DropColumn { name } => {
            update.delete_column(name)?;
        }
        AlterChange::RenameColumn { name, new_name } => {
            update.rename_column(name, new_name)?;
        }
        AlterChange::WidenColumn { name, field_type } => {
            let to: PrimitiveType = field_type
                .parse()
                .map_err(|e| Error::Usage(format!("{field_type}: {e}")))?;
            update.widen_column(name, to)?;
        }
        AlterChange::MakeOptional { name } => {
            update.make_column_optional(name)?;
        }
        AlterChange::SetDoc { name, doc } => {
            update.update_column_doc(name, doc.as_deref())?;
        }
        AlterChange::MoveColumn {
            name,
            after,
            before,
            first,
        } => {
            let to = position(after, before, *first).unwrap_or(Position::First);
            update.move_column(name, to)?;
        }
        _ => {}
    }
    let evolved = update.apply()?;
    if evolved.is_unchanged() {
        return Err(Error::Usage(
            "nothing to change: the table's schema already is so".into(),
        ));
    }
    let words = evolved.changes.iter().map(ToString::to_string).collect();
    Ok((TableUpdate::new().with_schema(meta, evolved), words))
}

/// The partition spec update `change` makes to `meta`'s default spec.
fn plan_spec(meta: &TableMetadata, change: &AlterChange) -> Result<(TableUpdate, Vec<String>)> {
    let mut update = UpdatePartitionSpec::new(meta)?;
    let words = match change {
        AlterChange::AddPartitionField { term, name } => {
            let parsed = parse_term(term).map_err(|e| Error::Usage(format!("partition {e}")))?;
            update.add_field(&parsed.column, parsed.transform, name.as_deref())?;
            format!("added partition field {}", term.trim())
        }
        AlterChange::DropPartitionField { name } => {
            update.remove_field(name)?;
            format!("removed partition field `{name}`")
        }
        AlterChange::RenamePartitionField { name, new_name } => {
            update.rename_field(name, new_name)?;
            format!("renamed partition field `{name}` to `{new_name}`")
        }
        _ => return Err(Error::Usage("not a partition change".into())),
    };
    let evolved = update.apply()?;
    Ok((TableUpdate::new().with_spec(meta, evolved), vec![words]))
}

fn position(after: &Option<String>, before: &Option<String>, first: bool) -> Option<Position> {
    match (after, before) {
        (Some(a), _) => Some(Position::After(a.clone())),
        (None, Some(b)) => Some(Position::Before(b.clone())),
        (None, None) if first => Some(Position::First),
        _ => None,
    }
}

/// A primitive type name, or the spec's JSON of any type.
fn parse_type(text: &str) -> Result<Type> {
    if text.trim_start().starts_with('{') {
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| Error::Usage(format!("type {text}: not JSON: {e}")))?;
        return Type::from_json(&value).map_err(|e| Error::Usage(format!("type {text}: {e}")));
    }
    let p: PrimitiveType = text
        .parse()
        .map_err(|e| Error::Usage(format!("type `{text}`: {e}")))?;
    Ok(p.into())
}
