//! [`Transaction`]: schema, partition spec, sort order and property changes plus an append,
//! committed as one new metadata file with one pointer swap (Java's `Table.newTransaction()`).
//!
//! ```text
//! TableHandle::new_transaction()
//!   .update_schema(..) .union_by_name(..) .update_spec(..) .replace_sort_order(..)
//!   .set_properties(..)
//!        each change is planned on the metadata the earlier ones made, and checked now
//!   .append(files) | .fast_append(files) | .write(batches).await   (the snapshot, if any)
//!   .commit().await -> TransactionOutcome
//!        one metadata.json and one swap; a retry replays every change onto the new base, or
//!        fails with a typed conflict when a concurrent commit changed the schema or spec
//! ```
//! The changes are made in order on every attempt: so a partition field can be dropped and
//! then its source column, and a column added and then partitioned by, in one commit. A
//! change planned on a schema or spec ([`TableUpdate`]) fails with a typed conflict when a
//! concurrent commit replaced it; a union by name is recomputed on the new base, so writers
//! that all add the same column do not conflict. Data files written by
//! [`Transaction::write`] use the staged metadata (the new schema, spec, sort order and
//! properties) and are deleted again when the commit definitely did not land.

use std::collections::BTreeMap;
use std::sync::Arc;

use iceberg_io::FileIo;
use iceberg_spec::evolution::{UnionOptions, UpdatePartitionSpec, UpdateSchema};
use iceberg_spec::{DataFile, NestedField, SortOrder, TableMetadata};

use crate::append::{AppendInput, AppendMode};
use crate::catalog::{Catalog, TableIdent};
use crate::commit::commit_input;
use crate::env::Environment;
use crate::error::Result;
use crate::evolve::SchemaEvolution;
use crate::table::Table;
use crate::update::{TableUpdate, UpdateStep, commit_updates};

/// Staged changes to one table, committed together by [`Transaction::commit`].
#[derive(Debug)]
pub struct Transaction {
    catalog: Arc<dyn Catalog>,
    ident: TableIdent,
    env: Arc<dyn Environment>,
    io: FileIo,
    /// The table the changes were planned on.
    base: Table,
    /// `base` with every change so far applied.
    staged: TableMetadata,
    steps: Vec<UpdateStep>,
    append: Option<StagedAppend>,
}

/// The snapshot a transaction adds.
#[derive(Debug, Default)]
struct StagedAppend {
    files: Vec<DataFile>,
    /// `None`: fast or merge as the table's properties say.
    mode: Option<AppendMode>,
    summary: BTreeMap<String, String>,
    /// Data files this transaction wrote itself: deleted when it does not land.
    written: Vec<String>,
}

/// A landed [`Transaction`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionOutcome {
    /// The table's current metadata file after the commit (the base's when nothing changed).
    pub metadata_location: String,
    /// The snapshot the append added, if the transaction appended.
    pub snapshot_id: Option<i64>,
    /// Rows the append added (0 without one).
    pub added_records: i64,
    /// The current schema id after the commit.
    pub schema_id: i32,
    /// The default partition spec id after the commit.
    pub spec_id: i32,
    /// The default sort order id after the commit.
    pub sort_order_id: i64,
    /// Attempts the commit took (0 when there was nothing to commit).
    pub attempts: u32,
}

impl Transaction {
    /// A transaction on `base`, committed to `ident` through `catalog`.
    pub(crate) fn new(
        catalog: Arc<dyn Catalog>,
        ident: TableIdent,
        env: Arc<dyn Environment>,
        io: FileIo,
        base: Table,
    ) -> Self {
        Self {
            staged: base.metadata.clone(),
            catalog,
            ident,
            env,
            io,
            base,
            steps: Vec::new(),
            append: None,
        }
    }

    /// The table's metadata as the changes staged so far make it (not yet committed).
    pub fn staged(&self) -> &TableMetadata {
        &self.staged
    }

    /// Stages `update`, planned on [`Transaction::staged`].
    fn step(self, update: TableUpdate) -> Result<Self> {
        self.push(UpdateStep::Update(update))
    }

    fn push(mut self, step: UpdateStep) -> Result<Self> {
        self.staged = step.edit(&self.ident.to_string(), &self.staged)?;
        self.steps.push(step);
        Ok(self)
    }

    /// Evolves the staged schema to take every column of `input` (matched by name, ids
    /// ignored; Java's `UpdateSchema.unionByNameWith`): missing columns are added where they
    /// sit in the input, allowed widenings applied (see
    /// [`iceberg_spec::evolution::union_by_name`]). Nothing changes when the input fits.
    ///
    /// Unlike [`Transaction::update_schema`], the union is recomputed on a retry's base: a
    /// concurrent writer that added the same columns is no conflict.
    ///
    /// # Errors
    /// [`iceberg_spec::Error::SchemaEvolution`] naming a column the rules refuse (a
    /// narrowing, `string` to `int`, a new required column).
    pub fn union_by_name(self, input: &[NestedField], options: UnionOptions) -> Result<Self> {
        match SchemaEvolution::plan(&self.staged, input, options)? {
            Some(evolution) => self.push(UpdateStep::Union(evolution)),
            None => Ok(self),
        }
    }

    /// [`Transaction::union_by_name`] with the columns of an Arrow schema (a batch's), typed
    /// as [`iceberg_write::iceberg_schema`] maps them for the table's format version.
    ///
    /// # Errors
    /// As [`Transaction::union_by_name`], and an Arrow type Iceberg cannot hold (naming the
    /// column).
    #[cfg(feature = "write")]
    pub fn union_by_name_arrow(
        self,
        input: &iceberg_write::arrow_schema::Schema,
        options: UnionOptions,
    ) -> Result<Self> {
        let fields = iceberg_write::iceberg_schema(input, self.staged.format_version)?;
        self.union_by_name(fields.fields(), options)
    }

    /// Changes the schema: `change` makes its edits on an [`UpdateSchema`] of the staged
    /// schema (Java's `UpdateSchema`), which becomes the current schema.
    ///
    /// ```
    /// # use iceberg_spec::{PrimitiveType, Type};
    /// # fn f(tx: iceberg_append::Transaction) -> iceberg_append::Result<iceberg_append::Transaction> {
    /// tx.update_schema(|schema| {
    ///     schema.add_column(None, "region", Type::Primitive(PrimitiveType::String), None)?;
    ///     schema.rename_column("qty", "quantity")?;
    ///     Ok(())
    /// })
    /// # }
    /// ```
    ///
    /// # Errors
    /// The error `change` returns (naming the column), or a change the table refuses (a
    /// partition or sort source deleted, a required column without a default before v3).
    pub fn update_schema(
        self,
        change: impl FnOnce(&mut UpdateSchema) -> iceberg_spec::Result<()>,
    ) -> Result<Self> {
        let schema = self.staged.current_schema()?;
        let mut update = UpdateSchema::new(schema, self.staged.last_column_id);
        change(&mut update)?;
        let evolved = update.apply()?;
        let update = TableUpdate::new().with_schema(&self.staged, evolved);
        self.step(update)
    }

    /// Changes the partition spec: `change` edits an [`UpdatePartitionSpec`] of the staged
    /// default spec (Java's `UpdatePartitionSpec`), which becomes a new default spec. Data
    /// written after it uses that spec; older files keep theirs.
    ///
    /// # Errors
    /// The error `change` returns (naming the field or source column).
    pub fn update_spec(
        self,
        change: impl FnOnce(&mut UpdatePartitionSpec) -> iceberg_spec::Result<()>,
    ) -> Result<Self> {
        let mut update = UpdatePartitionSpec::new(&self.staged)?;
        change(&mut update)?;
        let evolved = update.apply()?;
        let update = TableUpdate::new().with_spec(&self.staged, evolved);
        self.step(update)
    }

    /// Makes `order` the default sort order (its id is assigned; an existing equal order is
    /// reused). Data files written after it are sorted by it and record its id.
    ///
    /// # Errors
    /// An order whose source columns are not in the staged schema.
    pub fn replace_sort_order(self, order: SortOrder) -> Result<Self> {
        let update = TableUpdate::new().with_sort_order(&self.staged, order);
        self.step(update)
    }

    /// Sets table properties.
    ///
    /// # Errors
    /// A reserved key (`format-version`, ...), a credential, or a value the table's
    /// properties refuse (naming the key).
    pub fn set_properties<K: Into<String>, V: Into<String>>(
        self,
        properties: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Self> {
        let update = properties
            .into_iter()
            .fold(TableUpdate::new(), |u, (k, v)| u.set_property(k, v));
        self.step(update)
    }

    /// Removes table properties (keys the table lacks change nothing).
    ///
    /// # Errors
    /// A reserved key.
    pub fn remove_properties<K: Into<String>>(
        self,
        keys: impl IntoIterator<Item = K>,
    ) -> Result<Self> {
        let update = keys
            .into_iter()
            .fold(TableUpdate::new(), |u, k| u.remove_property(k));
        self.step(update)
    }

    fn staged_append(&mut self) -> &mut StagedAppend {
        self.append.get_or_insert_with(StagedAppend::default)
    }

    /// Appends `files` in the transaction's snapshot, a fast or a merge append as the table's
    /// `commit.manifest-merge.enabled` says.
    pub fn append(mut self, files: Vec<DataFile>) -> Self {
        self.staged_append().files.extend(files);
        self
    }

    /// Appends `files` in the transaction's snapshot as a fast append (no manifest merging).
    pub fn fast_append(mut self, files: Vec<DataFile>) -> Self {
        let append = self.staged_append();
        append.files.extend(files);
        append.mode = Some(AppendMode::Fast);
        self
    }

    /// Adds `key` to the snapshot summary of the transaction's append.
    pub fn with_summary(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.staged_append()
            .summary
            .insert(key.into(), value.into());
        self
    }

    /// Writes `batches` as data files with the staged schema, spec, sort order and
    /// properties and appends them (as [`Transaction::append`]). Nothing is committed yet;
    /// the files are deleted again if the commit definitely fails or [`Transaction::abort`]
    /// is called.
    ///
    /// # Errors
    /// When writing fails: the files this transaction wrote are deleted.
    #[cfg(feature = "write")]
    pub async fn write(mut self, batches: &[arrow_array::RecordBatch]) -> Result<Self> {
        match crate::handle::write_as_table(&self.io, &self.staged, batches).await {
            Ok(files) => {
                let append = self.staged_append();
                append
                    .written
                    .extend(files.iter().map(|f| f.file_path.clone()));
                append.files.extend(files);
                Ok(self)
            }
            Err(e) => {
                self.abort().await;
                Err(e)
            }
        }
    }

    /// Drops the transaction uncommitted, deleting the data files [`Transaction::write`]
    /// wrote (best effort: leftovers are files no snapshot references).
    pub async fn abort(self) {
        if let Some(append) = self.append {
            delete(&self.io, append.written).await;
        }
    }

    /// Commits every staged change and the append as one new metadata file, retrying on
    /// conflicts with each change replayed onto the new base.
    ///
    /// # Errors
    /// [`crate::Error::SchemaConflict`] or [`crate::Error::SpecConflict`] when a concurrent
    /// commit changed the schema, spec or sort order a change was planned on; the errors of
    /// [`crate::commit_append`] (with an append) or [`crate::commit_table_update`] (without).
    /// Unless the outcome is unknown ([`crate::Error::CommitStateUnknown`]), nothing this
    /// transaction wrote is left behind.
    pub async fn commit(self) -> Result<TransactionOutcome> {
        let Self {
            catalog,
            ident,
            env,
            io,
            base,
            staged,
            steps,
            append,
        } = self;
        let Some(append) = append else {
            if steps.is_empty() {
                return Ok(TransactionOutcome {
                    metadata_location: base.metadata_location.unwrap_or_default(),
                    snapshot_id: None,
                    added_records: 0,
                    schema_id: staged.current_schema_id,
                    spec_id: staged.default_spec_id,
                    sort_order_id: staged.default_sort_order_id,
                    attempts: 0,
                });
            }
            let done = commit_updates(catalog.as_ref(), &ident, &steps, env.as_ref()).await?;
            return Ok(TransactionOutcome {
                metadata_location: done.metadata_location,
                snapshot_id: None,
                added_records: 0,
                schema_id: done.schema_id,
                spec_id: done.spec_id,
                sort_order_id: done.sort_order_id,
                attempts: done.attempts,
            });
        };
        let StagedAppend {
            files,
            mode,
            summary,
            written,
        } = append;
        let input = AppendInput::new(files, summary, mode, None).with_updates(&ident, steps);
        let committed = Box::pin(commit_input(
            catalog.as_ref(),
            &ident,
            input,
            mode.is_none(),
            env.as_ref(),
        ))
        .await;
        match committed {
            Ok((done, ids)) => Ok(TransactionOutcome {
                metadata_location: done.metadata_location,
                snapshot_id: Some(done.snapshot_id),
                added_records: done.added_records,
                schema_id: ids.schema_id,
                spec_id: ids.spec_id,
                sort_order_id: ids.sort_order_id,
                attempts: done.attempts,
            }),
            Err(e) => {
                // Definitely not landed (the commit deleted its own manifests): the data
                // files are ours to delete. Unknown: they may be in the table.
                if !e.is_commit_state_unknown() {
                    delete(&io, written).await;
                }
                Err(e)
            }
        }
    }
}

async fn delete(io: &FileIo, paths: Vec<String>) {
    if !paths.is_empty() {
        // Best effort: leftovers are orphans no reader can see.
        let _ = io.delete_many(paths).await;
    }
}
