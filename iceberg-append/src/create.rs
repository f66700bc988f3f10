//! Creating a table and its first append in one catalog step: the table appears with its
//! first snapshot or not at all, as Java's create transaction and PyIceberg's
//! `create_table_transaction` do.
//!
//! ```text
//! stage_create: location from the catalog, first metadata in memory (nothing written)
//!      │ the caller writes data files under the staged table's location
//! commit_create_append: manifests + manifest list -> Catalog::create_table_from_metadata
//! ```
//! A process that dies in between leaves data files no table references (orphans), never
//! an empty table.

use std::collections::BTreeMap;

use iceberg_spec::{DataFile, TableProperties};

use crate::append::{AppendMode, prepare_append_with_mode};
use crate::catalog::{Catalog, TableIdent};
use crate::commit::CommitOutcome;
use crate::env::Environment;
use crate::error::{Error, Result};
use crate::table::{Table, TableCreation};

/// The table `creation` describes, at the location the catalog gives it (or the one it
/// names), not yet in the catalog ([`Catalog::stage_table`]): write its data files, then
/// [`commit_create_append`].
///
/// # Errors
/// An invalid definition, or a catalog that cannot say where the table would live (it may
/// still create tables with [`Catalog::create_table`]).
pub async fn stage_create(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    creation: TableCreation,
    env: &dyn Environment,
) -> Result<Table> {
    catalog.stage_table(ident, creation, env).await
}

/// Creates `staged` as `ident` with `data_files` as its first snapshot, in one catalog step
/// (`mode` `None`: from the table's properties).
///
/// # Errors
/// [`Error::TableAlreadyExists`] when another writer created `ident` first, and any other
/// definite failure: the manifests this wrote are deleted, the data files are the caller's.
/// [`Error::CommitStateUnknown`] when the create may have happened: nothing is deleted.
pub async fn commit_create_append(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    staged: &Table,
    data_files: Vec<DataFile>,
    mode: Option<AppendMode>,
    env: &dyn Environment,
) -> Result<CommitOutcome> {
    let io = catalog.table_io(staged);
    let props = TableProperties::parse(&staged.metadata.properties)?;
    let mode = mode.unwrap_or_else(|| AppendMode::from_properties(&props));
    let result =
        prepare_append_with_mode(&io, staged, data_files, BTreeMap::new(), mode, env).await?;
    let written: Vec<String> = result
        .manifest_paths
        .iter()
        .cloned()
        .chain([result.manifest_list.clone()])
        .collect();
    let outcome = |metadata_location: String| CommitOutcome {
        snapshot_id: result.snapshot_id,
        metadata_location,
        attempts: 1,
        added_records: result.added_records(),
    };
    let error = match catalog
        .create_table_from_metadata(ident, result.metadata.clone())
        .await
    {
        Ok(table) => return Ok(outcome(table.metadata_location.unwrap_or_default())),
        Err(e) if e.is_commit_state_unknown() => return Err(e),
        Err(e) if e.is_pre_request_refusal() => {
            let _ = io.delete_many(written).await;
            return Err(e);
        }
        Err(e) => e,
    };
    // "Already exists" may be our own create whose answer was lost: only the table can say.
    match catalog.load_table(ident).await {
        Ok(t)
            if t.metadata.table_uuid == staged.metadata.table_uuid
                && t.metadata.snapshot_by_id(result.snapshot_id).is_some() =>
        {
            Ok(outcome(t.metadata_location.unwrap_or_default()))
        }
        Err(reload) if !reload.is_not_found() => Err(Error::CommitStateUnknown {
            table: ident.to_string(),
            snapshot_id: Some(result.snapshot_id),
            reason: format!("{error}; then reading the table back failed: {reload}"),
            source: Some(Box::new(error)),
        }),
        // Another table, or none: ours did not land.
        _ => {
            let _ = io.delete_many(written).await;
            Err(error)
        }
    }
}
