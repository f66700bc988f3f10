//! The catalog contract: namespaces, tables, and the atomic move of a table's metadata pointer.
//!
//! Real catalogs (SQL, object store) implement [`Catalog`] in the `iceberg-catalog` crate;
//! [`InMemoryCatalog`] here serves tests and single-process use.
//!
//! Namespace errors reuse this crate's [`Error`]: a missing namespace is
//! [`Error::NoSuchTable`] (so [`Error::is_not_found`] holds), an existing one
//! [`Error::TableAlreadyExists`], a non-empty one [`Error::Catalog`], each naming
//! `namespace <name>`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use async_trait::async_trait;
use iceberg_io::FileIo;
use iceberg_spec::TableMetadata;

use crate::append::read_manifest_list;
use crate::cache::MetadataCache;
use crate::env::Environment;
use crate::error::{Error, Result};
use crate::manifest::decode_manifest;
use crate::table::{Table, TableCreation};

/// A table's name: a namespace path and a table name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableIdent {
    /// Namespace levels, outermost first.
    pub namespace: Vec<String>,
    /// Table name.
    pub name: String,
}

impl TableIdent {
    /// Parses `a.b.table` (the last part is the table).
    pub fn parse(s: &str) -> Option<Self> {
        let mut parts: Vec<String> = s.split('.').map(str::to_string).collect();
        let name = parts.pop().filter(|n| !n.is_empty())?;
        if parts.is_empty() || parts.iter().any(String::is_empty) {
            return None;
        }
        Some(Self {
            namespace: parts,
            name,
        })
    }
}

impl TableIdent {
    /// A table `name` in `namespace`.
    pub fn new(namespace: NamespaceIdent, name: impl Into<String>) -> Self {
        Self {
            namespace: namespace.0,
            name: name.into(),
        }
    }

    /// The table's namespace.
    pub fn namespace_ident(&self) -> NamespaceIdent {
        NamespaceIdent(self.namespace.clone())
    }
}

/// A namespace: one or more non-empty levels, outermost first.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NamespaceIdent(Vec<String>);

impl NamespaceIdent {
    /// A namespace from its levels; `None` when there are none or one is empty.
    pub fn new(levels: Vec<String>) -> Option<Self> {
        (!levels.is_empty() && levels.iter().all(|l| !l.is_empty())).then_some(Self(levels))
    }

    /// Parses `a.b` (levels separated by dots).
    pub fn parse(s: &str) -> Option<Self> {
        Self::new(s.split('.').map(str::to_string).collect())
    }

    /// The levels, outermost first.
    pub fn levels(&self) -> &[String] {
        &self.0
    }

    /// True when `self` is `other` or lies inside it.
    pub fn starts_with(&self, other: &NamespaceIdent) -> bool {
        self.0.starts_with(&other.0)
    }
}

impl fmt::Display for NamespaceIdent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join("."))
    }
}

/// The error for a namespace the catalog does not know.
pub fn no_such_namespace(namespace: &NamespaceIdent) -> Error {
    Error::NoSuchNamespace {
        namespace: namespace.to_string(),
    }
}

/// The error for creating a namespace that exists.
pub fn namespace_already_exists(namespace: &NamespaceIdent) -> Error {
    Error::NamespaceAlreadyExists {
        namespace: namespace.to_string(),
    }
}

/// The error for dropping a namespace that still holds tables.
pub fn namespace_not_empty(namespace: &NamespaceIdent, tables: usize) -> Error {
    Error::NamespaceNotEmpty {
        namespace: namespace.to_string(),
        tables,
    }
}

fn unsupported<C: fmt::Debug + ?Sized>(catalog: &C, what: &str, operation: &str) -> Error {
    Error::Unsupported {
        operation: operation.to_string(),
        catalog: format!("{catalog:?}"),
        target: what.to_string(),
    }
}

impl fmt::Display for TableIdent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.namespace.join("."), self.name)
    }
}

/// Loads tables and swaps their metadata pointer atomically.
#[async_trait]
pub trait Catalog: Send + Sync + fmt::Debug {
    /// The table's current metadata.
    ///
    /// # Errors
    /// [`Error::NoSuchTable`] when the catalog does not know it.
    async fn load_table(&self, ident: &TableIdent) -> Result<Table>;

    /// Creates a table and registers its first metadata file.
    ///
    /// # Errors
    /// [`Error::TableAlreadyExists`], or IO/validation errors.
    async fn create_table(&self, ident: &TableIdent, creation: TableCreation) -> Result<Table>;

    /// Where a table `ident` created without a location lives.
    ///
    /// # Errors
    /// A missing namespace; unsupported by default (a creation must then name its location).
    async fn default_table_location(&self, ident: &TableIdent) -> Result<String> {
        Err(unsupported(
            self,
            &ident.to_string(),
            "default_table_location",
        ))
    }

    /// The table `creation` describes as `ident` would be, not yet in the catalog: its first
    /// metadata, at the catalog's location unless `creation` names one. By default built
    /// here on [`Catalog::default_table_location`]; a server that places tables itself
    /// stages it (REST's staged create).
    ///
    /// # Errors
    /// An invalid definition, a missing namespace; unsupported when the catalog cannot say
    /// where the table would live.
    async fn stage_table(
        &self,
        ident: &TableIdent,
        creation: TableCreation,
        env: &dyn Environment,
    ) -> Result<Table> {
        let location = if creation.location.is_empty() {
            self.default_table_location(ident).await?
        } else {
            creation.location.clone()
        };
        let location = location.trim_end_matches('/').to_string();
        Ok(Table {
            metadata: creation.into_metadata(&location, env)?,
            metadata_location: None,
        })
    }

    /// Creates `ident` with `metadata` as its first metadata file: a table that may already
    /// hold snapshots (a create and its first append in one step, see
    /// [`crate::create::commit_create_append`]). The table appears with all of it or not at
    /// all.
    ///
    /// # Errors
    /// [`Error::TableAlreadyExists`], a missing namespace, [`Error::CommitStateUnknown`]
    /// when the create may or may not have happened; unsupported by default.
    async fn create_table_from_metadata(
        &self,
        ident: &TableIdent,
        metadata: TableMetadata,
    ) -> Result<Table> {
        let _ = metadata;
        Err(unsupported(
            self,
            &ident.to_string(),
            "create_table_from_metadata",
        ))
    }

    /// Writes `new_metadata` as the next metadata file and moves the pointer from
    /// `base_location` to it, atomically; returns the new location.
    ///
    /// # Errors
    /// [`Error::CommitConflict`] when the pointer is no longer `base_location`;
    /// [`Error::CommitStateUnknown`] when the swap may or may not have happened.
    async fn commit(
        &self,
        ident: &TableIdent,
        base_location: &str,
        new_metadata: &TableMetadata,
    ) -> Result<String>;

    /// The IO that reaches the table's files.
    fn io(&self) -> &FileIo;

    /// The IO that reaches `table`'s files: [`Catalog::io`], unless the catalog hands out
    /// access per table (a REST server's vended credentials for the table it loaded).
    fn table_io(&self, table: &Table) -> FileIo {
        let _ = table;
        self.io().clone()
    }

    /// True when the catalog writes the metadata files itself (a REST server): it then keeps
    /// their log and deletes the expired ones, and a committer must not.
    fn writes_metadata_files(&self) -> bool {
        false
    }

    /// The catalog's cache of parsed metadata files and manifest lists, if it keeps one;
    /// commits read through it and remember what they wrote.
    fn metadata_cache(&self) -> Option<&MetadataCache> {
        None
    }

    /// True when the catalog knows `ident`.
    ///
    /// # Errors
    /// When the catalog cannot be asked; by default, as [`Catalog::load_table`].
    async fn table_exists(&self, ident: &TableIdent) -> Result<bool> {
        match self.load_table(ident).await {
            Ok(_) => Ok(true),
            Err(e) if e.is_not_found() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The tables directly in `namespace`, sorted.
    ///
    /// # Errors
    /// A missing namespace ([`Error::is_not_found`]); unsupported by default.
    async fn list_tables(&self, namespace: &NamespaceIdent) -> Result<Vec<TableIdent>> {
        Err(unsupported(self, &namespace.to_string(), "list_tables"))
    }

    /// Forgets `ident`; with `purge`, also deletes every file its metadata reaches
    /// (see [`Catalog::purge_table_files`]).
    ///
    /// # Errors
    /// [`Error::NoSuchTable`]; unsupported by default.
    async fn drop_table(&self, ident: &TableIdent, purge: bool) -> Result<()> {
        let _ = purge;
        Err(unsupported(self, &ident.to_string(), "drop_table"))
    }

    /// Renames `from` to `to` (the metadata files stay where they are).
    ///
    /// # Errors
    /// [`Error::NoSuchTable`] for `from` or `to`'s namespace, [`Error::TableAlreadyExists`]
    /// for `to`; unsupported by default.
    async fn rename_table(&self, from: &TableIdent, to: &TableIdent) -> Result<()> {
        let _ = to;
        Err(unsupported(self, &from.to_string(), "rename_table"))
    }

    /// Registers an existing metadata file as table `ident`.
    ///
    /// # Errors
    /// [`Error::TableAlreadyExists`], a missing namespace, an unreadable metadata file;
    /// unsupported by default.
    async fn register_table(&self, ident: &TableIdent, metadata_location: &str) -> Result<Table> {
        let _ = metadata_location;
        Err(unsupported(self, &ident.to_string(), "register_table"))
    }

    /// Creates `namespace` with `properties`.
    ///
    /// # Errors
    /// When it exists ([`Error::TableAlreadyExists`] naming the namespace); unsupported by
    /// default.
    async fn create_namespace(
        &self,
        namespace: &NamespaceIdent,
        properties: BTreeMap<String, String>,
    ) -> Result<()> {
        let _ = properties;
        Err(unsupported(
            self,
            &namespace.to_string(),
            "create_namespace",
        ))
    }

    /// The namespaces one level below `parent` (top-level ones for `None`), sorted.
    ///
    /// # Errors
    /// A missing `parent`; unsupported by default.
    async fn list_namespaces(
        &self,
        parent: Option<&NamespaceIdent>,
    ) -> Result<Vec<NamespaceIdent>> {
        let what = parent.map(ToString::to_string).unwrap_or_default();
        Err(unsupported(self, &what, "list_namespaces"))
    }

    /// True when `namespace` exists (explicitly, or as the namespace of a table).
    ///
    /// # Errors
    /// When the catalog cannot be asked; by default, as [`Catalog::namespace_properties`].
    async fn namespace_exists(&self, namespace: &NamespaceIdent) -> Result<bool> {
        match self.namespace_properties(namespace).await {
            Ok(_) => Ok(true),
            Err(e) if e.is_not_found() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The properties of `namespace`.
    ///
    /// # Errors
    /// A missing namespace ([`Error::is_not_found`]); unsupported by default.
    async fn namespace_properties(
        &self,
        namespace: &NamespaceIdent,
    ) -> Result<BTreeMap<String, String>> {
        Err(unsupported(
            self,
            &namespace.to_string(),
            "namespace_properties",
        ))
    }

    /// Removes the keys `removals` and sets `updates` on `namespace`.
    ///
    /// # Errors
    /// A missing namespace; unsupported by default.
    async fn update_namespace_properties(
        &self,
        namespace: &NamespaceIdent,
        removals: &[String],
        updates: BTreeMap<String, String>,
    ) -> Result<()> {
        let _ = (removals, updates);
        Err(unsupported(
            self,
            &namespace.to_string(),
            "update_namespace_properties",
        ))
    }

    /// Drops an empty namespace.
    ///
    /// # Errors
    /// A missing namespace, or one that still holds tables; unsupported by default.
    async fn drop_namespace(&self, namespace: &NamespaceIdent) -> Result<()> {
        Err(unsupported(self, &namespace.to_string(), "drop_namespace"))
    }

    /// Deletes every file `table`'s metadata reaches: data and delete files (unless
    /// `gc.enabled` is false: then they may be another table's, as Java's `dropTableData`
    /// keeps them), manifests, manifest lists, statistics files, the metadata files of its
    /// log and the current one. Best effort after the listing.
    ///
    /// # Errors
    /// When a manifest list or manifest cannot be read or decoded.
    async fn purge_table_files(&self, table: &Table) -> Result<()> {
        let io = &self.table_io(table);
        let meta = &table.metadata;
        let gc_enabled = iceberg_spec::properties::gc_enabled(&meta.properties);
        let mut files: BTreeSet<String> = BTreeSet::new();
        let mut manifests = BTreeSet::new();
        for snapshot in &meta.snapshots {
            if let Some(list) = &snapshot.manifest_list {
                for m in read_manifest_list(io, Some(list)).await? {
                    manifests.insert(m.manifest_path);
                }
                files.insert(list.clone());
            }
            manifests.extend(snapshot.manifests.iter().flatten().cloned());
        }
        for path in manifests {
            if gc_enabled {
                match io.read(&path).await {
                    Ok(bytes) => {
                        let decoded = decode_manifest(&path, &bytes)?;
                        files.extend(decoded.entries.into_iter().map(|e| e.data_file.file_path));
                    }
                    Err(e) if e.is_not_found() => {}
                    Err(e) => return Err(e.into()),
                }
            }
            files.insert(path);
        }
        files.extend(meta.statistics.iter().map(|f| f.statistics_path.clone()));
        files.extend(
            meta.partition_statistics
                .iter()
                .map(|f| f.statistics_path.clone()),
        );
        files.extend(meta.metadata_log.iter().map(|e| e.metadata_file.clone()));
        files.extend(table.metadata_location.clone());
        // Best effort: a file left behind is unreachable once the table is dropped.
        let _ = io.delete_many(files.into_iter().collect()).await;
        Ok(())
    }
}

mod memory;

pub use memory::InMemoryCatalog;
