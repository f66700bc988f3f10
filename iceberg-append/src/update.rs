//! [`TableUpdate`]: a change of a table's metadata without a snapshot (a schema update,
//! properties set and removed), committed as one new metadata file with one pointer swap, as
//! Java's `UpdateSchema.commit`, `UpdatePartitionSpec.commit` and `UpdateProperties.commit`
//! do (here in one commit).
//!
//! ```text
//! UpdateSchema (iceberg-spec) --apply--> EvolvedSchema --+
//! set_property / remove_property ------------------------+--> TableUpdate --commit_table_update-->
//!                                                              new metadata.json, pointer swap
//! ```
//! A schema change is planned on one base: when a concurrent commit changed the current
//! schema or added a column meanwhile (the REST requirements `assert-current-schema-id` and
//! `assert-last-assigned-field-id`), the update fails with [`Error::SchemaConflict`] instead of
//! re-resolving its column names against a schema it was not planned on; a spec change
//! likewise fails with [`Error::SpecConflict`] when the default spec or
//! `last-partition-id` changed (`assert-default-spec-id`,
//! `assert-last-assigned-partition-id`). Property changes
//! re-apply to any base. Nothing but the metadata file is written, so a failed update leaves
//! nothing behind.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use iceberg_spec::evolution::{
    EvolvedSchema, EvolvedSpec, add_current_schema, add_default_sort_order, add_default_spec,
};
use iceberg_spec::properties::is_secret_key;
use iceberg_spec::retention::{ExpireOptions, apply_expiry, plan_expiry};
use iceberg_spec::table_metadata::RESERVED_PROPERTIES;
use iceberg_spec::{SortOrder, TableMetadata, TableProperties, Transform};

use crate::catalog::{Catalog, TableIdent};
use crate::commit::{backoff, same_table};
use crate::env::Environment;
use crate::error::{Error, Result};
use crate::evolve::SchemaEvolution;
use crate::plan::log_previous_metadata;
use crate::table::Table;

/// A metadata change without a snapshot (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct TableUpdate {
    schema: Option<PlannedSchema>,
    spec: Option<PlannedSpec>,
    /// The new default sort order, and the default order id it was planned on.
    sort_order: Option<(SortOrder, i64)>,
    set: BTreeMap<String, String>,
    remove: BTreeSet<String>,
}

#[derive(Debug, Clone)]
struct PlannedSchema {
    evolved: EvolvedSchema,
    base_schema_id: i32,
    base_last_column_id: i32,
}

#[derive(Debug, Clone)]
struct PlannedSpec {
    evolved: EvolvedSpec,
    base_spec_id: i32,
    base_last_partition_id: i32,
}

/// A landed [`TableUpdate`].
#[derive(Debug, Clone)]
pub struct UpdateOutcome {
    /// The new current metadata file.
    pub metadata_location: String,
    /// The current schema id after the update.
    pub schema_id: i32,
    /// The default partition spec id after the update.
    pub spec_id: i32,
    /// The default sort order id after the update.
    pub sort_order_id: i64,
    /// Attempts it took.
    pub attempts: u32,
}

impl TableUpdate {
    /// An update that changes nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes `evolved` (planned on `base`'s current schema, e.g. by
    /// [`iceberg_spec::evolution::UpdateSchema`]) the current schema.
    pub fn with_schema(mut self, base: &TableMetadata, evolved: EvolvedSchema) -> Self {
        self.schema = Some(PlannedSchema {
            evolved,
            base_schema_id: base.current_schema_id,
            base_last_column_id: base.last_column_id,
        });
        self
    }

    /// Makes a spec of `evolved`'s fields (planned on `base`'s default spec, e.g. by
    /// [`iceberg_spec::evolution::UpdatePartitionSpec`]) the default spec: new data is written
    /// with it, older files keep theirs.
    pub fn with_spec(mut self, base: &TableMetadata, evolved: EvolvedSpec) -> Self {
        self.spec = Some(PlannedSpec {
            evolved,
            base_spec_id: base.default_spec_id,
            base_last_partition_id: base.last_partition_id,
        });
        self
    }

    /// Makes `order` the default sort order (planned on `base`'s default order): new data
    /// files are sorted by it and record its id.
    pub fn with_sort_order(mut self, base: &TableMetadata, order: SortOrder) -> Self {
        self.sort_order = Some((order, base.default_sort_order_id));
        self
    }

    /// Sets property `key` to `value`.
    pub fn set_property(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        let key = key.into();
        self.remove.remove(&key);
        self.set.insert(key, value.into());
        self
    }

    /// Removes property `key` (a key the table lacks changes nothing).
    pub fn remove_property(mut self, key: impl Into<String>) -> Self {
        let key = key.into();
        self.set.remove(&key);
        self.remove.insert(key);
        self
    }

    /// Whether the update changes nothing.
    pub fn is_empty(&self) -> bool {
        self.schema
            .as_ref()
            .is_none_or(|s| s.evolved.is_unchanged())
            && self.spec.is_none()
            && self.sort_order.is_none()
            && self.set.is_empty()
            && self.remove.is_empty()
    }

    /// The metadata `base` becomes (not yet committed): `now_ms` is its update time and
    /// `base_location` (the base's metadata file) goes into its log.
    ///
    /// # Errors
    /// [`Error::SchemaConflict`] when the base's schema is not the one the schema change was
    /// planned on; [`iceberg_spec::Error::SchemaEvolution`] naming a deleted column that the
    /// default partition spec or sort order uses; [`iceberg_spec::Error::InvalidProperty`] for a
    /// reserved key or a value the table's properties refuse.
    pub fn apply(
        &self,
        table: &str,
        base: &TableMetadata,
        now_ms: i64,
        base_location: Option<&str>,
    ) -> Result<TableMetadata> {
        let meta = self.edit(table, base)?;
        finish(meta, base, now_ms, base_location)
    }

    /// `base` with this update's changes made, checked as [`TableUpdate::apply`] checks them,
    /// but not yet a new metadata file (no update time, no log entry): a transaction's steps
    /// are edited one after another, then finished once.
    pub(crate) fn edit(&self, table: &str, base: &TableMetadata) -> Result<TableMetadata> {
        let mut meta = base.clone();
        if let Some(planned) = &self.schema {
            if base.current_schema_id != planned.base_schema_id
                || base.last_column_id != planned.base_last_column_id
            {
                return Err(Error::SchemaConflict {
                    table: table.to_string(),
                    reason: format!(
                        "the schema changed since the update was planned (schema id {} -> {}, \
                         last column id {} -> {}); plan it again on the new schema",
                        planned.base_schema_id,
                        base.current_schema_id,
                        planned.base_last_column_id,
                        base.last_column_id
                    ),
                });
            }
            check_sources_kept(base, &planned.evolved)?;
            add_current_schema(
                &mut meta,
                &planned.evolved.schema,
                planned.evolved.last_column_id,
            )?;
        }
        if let Some(planned) = &self.spec {
            if base.default_spec_id != planned.base_spec_id
                || base.last_partition_id != planned.base_last_partition_id
            {
                return Err(Error::SpecConflict {
                    table: table.to_string(),
                    reason: format!(
                        "the default spec changed since the update was planned (spec id {} -> {}, \
                         last partition id {} -> {}); plan it again on the new spec",
                        planned.base_spec_id,
                        base.default_spec_id,
                        planned.base_last_partition_id,
                        base.last_partition_id
                    ),
                });
            }
            add_default_spec(&mut meta, &planned.evolved)?;
        }
        if let Some((order, planned_on)) = &self.sort_order {
            if base.default_sort_order_id != *planned_on {
                return Err(Error::SpecConflict {
                    table: table.to_string(),
                    reason: format!(
                        "the default sort order changed since the update was planned \
                         (order id {planned_on} -> {})",
                        base.default_sort_order_id
                    ),
                });
            }
            add_default_sort_order(&mut meta, order)?;
        }
        for key in self.set.keys() {
            // Table properties are in metadata.json, which every reader of the table sees.
            if is_secret_key(key) {
                return Err(iceberg_spec::Error::InvalidProperty {
                    key: key.clone(),
                    value: "<redacted>".into(),
                    reason: "a credential, which must not be stored in table metadata; give it \
                             to the file IO instead"
                        .into(),
                }
                .into());
            }
        }
        for key in self.set.keys().chain(&self.remove) {
            if RESERVED_PROPERTIES.contains(&key.as_str()) {
                return Err(iceberg_spec::Error::InvalidProperty {
                    key: key.clone(),
                    value: self.set.get(key).cloned().unwrap_or_default(),
                    reason: "a reserved key, never stored as a table property".into(),
                }
                .into());
            }
        }
        for key in &self.remove {
            meta.properties.remove(key);
        }
        // What this update sets must be usable; what another engine set before stays as it
        // is, as Java leaves it (`parse_for_commit`).
        TableProperties::parse(&self.set)?;
        meta.properties.extend(self.set.clone());
        TableProperties::parse_for_commit(&meta.properties)?;
        Ok(meta)
    }
}

/// `edited` (made from `base` by [`TableUpdate::edit`]s) as the metadata file that follows
/// `base`: `now_ms` its update time, `base_location` logged.
fn finish(
    mut edited: TableMetadata,
    base: &TableMetadata,
    now_ms: i64,
    base_location: Option<&str>,
) -> Result<TableMetadata> {
    let props = TableProperties::parse_for_commit(&edited.properties)?;
    edited.last_updated_ms = now_ms.max(base.last_updated_ms);
    log_previous_metadata(
        &mut edited,
        base,
        base_location,
        props.metadata_previous_versions_max,
    );
    edited.validate()?;
    Ok(edited)
}

/// Refuses a schema that drops a source column of the default partition spec or sort order
/// (Java: "Cannot find source column"), naming the column.
fn check_sources_kept(base: &TableMetadata, evolved: &EvolvedSchema) -> Result<()> {
    let old = base.current_schema()?;
    let spec = base.default_spec()?;
    // Not void fields (a v1 spec keeps its removed fields as void for good): Java's
    // `checkCompatibility` skips them, and their values are null whatever the source.
    let partition = spec
        .fields()
        .iter()
        .filter(|f| f.transform != Transform::Void)
        .map(|f| (f.source_id, format!("partition field `{}`", f.name)));
    let sort = base
        .default_sort_order()
        .into_iter()
        .flat_map(|o| o.fields.iter())
        .map(|f| (f.source_id, "the table's sort order".to_string()));
    for (source, user) in partition.chain(sort) {
        if evolved.schema.field_by_id(source).is_none() {
            let column = old.field_name(source).unwrap_or_default().to_string();
            return Err(iceberg_spec::Error::SchemaEvolution {
                column,
                reason: format!("{user} uses it; change that first"),
            }
            .into());
        }
    }
    Ok(())
}

/// Commits `update` to `ident` through `catalog`, retrying on conflicts (the table's
/// `commit.retry.*` properties) with the update re-applied to the new base.
///
/// # Errors
/// As [`TableUpdate::apply`] (on the first base or a retry's); [`Error::UpdateRetriesExhausted`]
/// when every attempt lost to a concurrent commit; [`Error::CommitStateUnknown`] when the
/// catalog cannot tell whether the swap landed; the catalog's error otherwise.
pub async fn commit_table_update(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    update: &TableUpdate,
    env: &dyn Environment,
) -> Result<UpdateOutcome> {
    let step = UpdateStep::Update(update.clone());
    commit_updates(catalog, ident, std::slice::from_ref(&step), env).await
}

/// One change of a transaction, made in order on every attempt's base.
#[derive(Debug, Clone)]
pub(crate) enum UpdateStep {
    /// Planned on one base: made again only where that base's schema and spec still are
    /// (else a typed conflict).
    Update(TableUpdate),
    /// A union by name with an input, recomputed on each base (see [`crate::evolve`]): a
    /// concurrent writer's equal change is taken as is.
    Union(SchemaEvolution),
    /// Snapshot expiry at `now_ms`, planned again on each base (see
    /// [`crate::maintenance::ExpireSnapshots`]): snapshots a concurrent writer added are
    /// judged like the others.
    Expire {
        /// What the expiry was asked for.
        options: ExpireOptions,
        /// The time it judges ages at.
        now_ms: i64,
    },
}

impl UpdateStep {
    /// `base` with this step made (see [`TableUpdate::edit`]).
    pub(crate) fn edit(&self, table: &str, base: &TableMetadata) -> Result<TableMetadata> {
        match self {
            Self::Update(update) => update.edit(table, base),
            Self::Union(evolution) => {
                let mut meta = base.clone();
                evolution.apply(table, &mut meta)?;
                Ok(meta)
            }
            Self::Expire { options, now_ms } => {
                // A concurrent writer may have turned garbage collection off meanwhile.
                crate::maintenance::refuse_without_gc(base, crate::maintenance::EXPIRING)?;
                let plan = plan_expiry(base, *now_ms, options)?;
                Ok(apply_expiry(base, &plan))
            }
        }
    }
}

/// As [`commit_table_update`] for `steps` applied in order (each planned on the metadata the
/// ones before it make), in one metadata file.
pub(crate) async fn commit_updates(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    steps: &[UpdateStep],
    env: &dyn Environment,
) -> Result<UpdateOutcome> {
    commit_steps(catalog, ident, steps, env)
        .await
        .map(|landed| landed.outcome)
}

/// A landed commit of [`commit_steps`]: the outcome, and the base its metadata was made on
/// with that metadata.
#[derive(Debug, Clone)]
pub(crate) struct Landed {
    pub(crate) outcome: UpdateOutcome,
    pub(crate) base: TableMetadata,
    pub(crate) new: TableMetadata,
}

/// [`commit_updates`], also returning the base of the attempt that landed and its metadata.
pub(crate) async fn commit_steps(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    steps: &[UpdateStep],
    env: &dyn Environment,
) -> Result<Landed> {
    let table = ident.to_string();
    let mut base = catalog.load_table(ident).await?;
    let retry = TableProperties::parse_for_commit(&base.metadata.properties)?.commit_retry;
    let table_uuid = base.metadata.table_uuid;
    let started = Instant::now();
    let mut attempt = 1u32;
    loop {
        let base_location = base.metadata_location.clone();
        let mut edited = base.metadata.clone();
        for step in steps {
            edited = step.edit(&table, &edited)?;
        }
        let new = finish(
            edited,
            &base.metadata,
            env.now_ms(),
            base_location.as_deref(),
        )?;
        let error = match catalog
            .commit(ident, base_location.as_deref().unwrap_or_default(), &new)
            .await
        {
            Ok(location) => {
                let (schema_id, spec_id, sort_order_id) = (
                    new.current_schema_id,
                    new.default_spec_id,
                    new.default_sort_order_id,
                );
                if let Some(cache) = catalog.metadata_cache() {
                    cache.insert_metadata(&location, new.clone());
                }
                let dropped = crate::commit::dropped_metadata_files(catalog, &base, &new);
                crate::commit::cleanup(&catalog.table_io(&base), dropped).await;
                return Ok(Landed {
                    outcome: UpdateOutcome {
                        metadata_location: location,
                        schema_id,
                        spec_id,
                        sort_order_id,
                        attempts: attempt,
                    },
                    base: base.metadata,
                    new,
                });
            }
            Err(e) if e.is_commit_conflict() => e,
            Err(e) => return Err(e),
        };
        let attempt_base = std::mem::replace(&mut base, catalog.load_table(ident).await?);
        // A store that retried its conditional create may call our own landed write a
        // conflict: then the table holds exactly what this attempt wrote, as its current
        // file or, when another writer went on top before the reload, in its log.
        if let Some(location) =
            landed_at(catalog, &table, &base, &new, base_location.as_deref()).await?
        {
            return Ok(Landed {
                outcome: UpdateOutcome {
                    metadata_location: location,
                    schema_id: new.current_schema_id,
                    spec_id: new.default_spec_id,
                    sort_order_id: new.default_sort_order_id,
                    attempts: attempt,
                },
                base: attempt_base.metadata,
                new,
            });
        }
        same_table(&base, table_uuid).map_err(|reason| Error::Catalog {
            table: table.clone(),
            reason,
        })?;
        let out_of_time = started.elapsed() >= Duration::from_millis(retry.total_timeout_ms);
        if attempt > retry.num_retries || out_of_time {
            return Err(Error::UpdateRetriesExhausted {
                table,
                attempts: attempt,
                last: Box::new(error),
            });
        }
        tokio::time::sleep(backoff(attempt, retry.min_wait_ms, retry.max_wait_ms, env)).await;
        attempt += 1;
    }
}

/// Where `current` holds the metadata an attempt wrote as `ours` on the base at
/// `base_location`: its current file, or a file of its log stamped with our time and read to
/// be sure (a later commit went on top of ours before the reload).
///
/// # Errors
/// [`Error::CommitStateUnknown`] when such a file cannot be read: ours may have landed.
async fn landed_at(
    catalog: &dyn Catalog,
    table: &str,
    current: &Table,
    ours: &TableMetadata,
    base_location: Option<&str>,
) -> Result<Option<String>> {
    if landed(&current.metadata, ours, base_location) {
        return Ok(Some(current.metadata_location.clone().unwrap_or_default()));
    }
    let stamped = current
        .metadata
        .metadata_log
        .iter()
        .rev()
        .filter(|e| e.timestamp_ms == ours.last_updated_ms);
    for entry in stamped {
        // The table's own IO: a REST server may vend the only credentials that reach it.
        let earlier = Table::load(&catalog.table_io(current), &entry.metadata_file)
            .await
            .map_err(|e| Error::CommitStateUnknown {
                table: table.to_string(),
                snapshot_id: None,
                reason: format!(
                    "the table moved on and {} (which may be ours) cannot be read: {e}",
                    entry.metadata_file
                ),
                source: Some(Box::new(e)),
            })?;
        if landed(&earlier.metadata, ours, base_location) {
            return Ok(Some(entry.metadata_file.clone()));
        }
    }
    Ok(None)
}

/// Whether `current` is the metadata an attempt wrote as `ours` on the base at `base_location`.
fn landed(current: &TableMetadata, ours: &TableMetadata, base_location: Option<&str>) -> bool {
    let follows_base = current
        .metadata_log
        .last()
        .map(|e| e.metadata_file.as_str())
        == base_location;
    follows_base
        && current.last_updated_ms == ours.last_updated_ms
        && current.current_schema_id == ours.current_schema_id
        && current.default_spec_id == ours.default_spec_id
        && current.default_sort_order_id == ours.default_sort_order_id
        && current.last_column_id == ours.last_column_id
        && current.schemas.len() == ours.schemas.len()
        && current.properties == ours.properties
        && current.current_snapshot_id == ours.current_snapshot_id
        && current.snapshots.len() == ours.snapshots.len()
        && current.refs == ours.refs
}
