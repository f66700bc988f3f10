//! Helpers the test modules share: data file records, a catalog that races a commit, and a
//! table whose data files exist with the reachability checks of the maintenance tests.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use iceberg_append::manifest::decode_manifest;
use iceberg_append::{AppendMode, commit_append_with_mode, read_manifest_list};
use iceberg_spec::{FormatVersion, ManifestStatus, NestedField, PrimitiveType};

use async_trait::async_trait;
use iceberg_append::manifest::{ManifestContext, encode_manifests};
use iceberg_append::manifest_list::encode_manifest_list;
use iceberg_append::plan::{AttemptInputs, plan_fast_append};
use iceberg_append::summary::AddedCounts;
use iceberg_append::testing::{CommitInterceptor, InterceptingCatalog};
use iceberg_append::{
    Catalog, DeterministicEnvironment, Error, InMemoryCatalog, Result, SchemaEvolution,
    TableCreation, TableIdent, TableUpdate, commit_append, commit_evolving_append,
    commit_table_update,
};
use iceberg_io::FileIo;
use iceberg_spec::properties::{COMMIT_MIN_RETRY_WAIT_MS, COMMIT_NUM_RETRIES};
use iceberg_spec::snapshot::MAIN_BRANCH;
use iceberg_spec::{DataFile, Schema, TableMetadata};
use iceberg_spec::{ManifestContent, ManifestEntry, ManifestFile};

/// A data file record of `rows` rows under the test table `memory://wh/db/t`.
pub(crate) fn data_file(name: &str, rows: i64) -> DataFile {
    DataFile {
        file_path: format!("memory://wh/db/t/data/{name}.parquet"),
        record_count: rows,
        file_size_in_bytes: 100 + rows,
        ..Default::default()
    }
}

/// A table at `location` whose commits retry 3 times, 1 ms apart (races resolve fast).
pub(crate) fn fast_retry_creation(location: &str, schema: Schema) -> TableCreation {
    let mut creation = TableCreation::new(location, schema);
    creation
        .properties
        .insert(COMMIT_NUM_RETRIES.into(), "3".into());
    creation
        .properties
        .insert(COMMIT_MIN_RETRY_WAIT_MS.into(), "1".into());
    creation
}

/// What happens at the first swap a [`Racing`] catalog is asked for.
#[derive(Debug)]
pub(crate) enum Race {
    /// Another writer appends this file first.
    Append(Box<DataFile>),
    /// Another writer makes this update first.
    Update(Box<TableUpdate>),
    /// Another writer appends this file with this schema evolution first.
    Evolve(Box<(DataFile, SchemaEvolution)>),
    /// Our swap lands, then the catalog says "conflict".
    LandedThenConflict,
    /// Our swap lands, another writer appends this file on top of it, then the catalog says
    /// "conflict" (the answer lost, the table moved on before the reload).
    LandedThenAppended(Box<DataFile>),
}

/// An in-memory catalog whose first swap meets a [`Race`].
pub(crate) type Racing = InterceptingCatalog<InMemoryCatalog, RaceAt>;

/// The race a [`Racing`] catalog runs at its next swap, and the clock the other writer uses.
#[derive(Debug)]
pub(crate) struct RaceAt {
    pub(crate) env: Arc<DeterministicEnvironment>,
    pub(crate) race: Mutex<Option<Race>>,
}

/// `inner` whose first swap meets `race`.
pub(crate) fn racing(
    inner: InMemoryCatalog,
    env: Arc<DeterministicEnvironment>,
    race: Option<Race>,
) -> Racing {
    InterceptingCatalog::new(
        inner,
        RaceAt {
            env,
            race: Mutex::new(race),
        },
    )
}

#[async_trait]
impl CommitInterceptor<InMemoryCatalog> for RaceAt {
    async fn commit(
        &self,
        inner: &InMemoryCatalog,
        ident: &TableIdent,
        base: &str,
        new: &TableMetadata,
    ) -> Result<String> {
        let race = self.race.lock().unwrap().take();
        match race {
            Some(Race::Append(theirs)) => self.append_theirs(inner, ident, *theirs).await,
            Some(Race::Update(update)) => {
                commit_table_update(inner, ident, &update, self.env.as_ref())
                    .await
                    .unwrap();
            }
            Some(Race::Evolve(race)) => {
                let (theirs, evolution) = *race;
                commit_evolving_append(
                    inner,
                    ident,
                    vec![theirs],
                    evolution,
                    BTreeMap::new(),
                    None,
                    self.env.as_ref(),
                )
                .await
                .unwrap();
            }
            Some(Race::LandedThenConflict) => {
                inner.commit(ident, base, new).await?;
                return Err(conflict(ident, base));
            }
            Some(Race::LandedThenAppended(theirs)) => {
                inner.commit(ident, base, new).await?;
                self.append_theirs(inner, ident, *theirs).await;
                return Err(conflict(ident, base));
            }
            None => {}
        }
        inner.commit(ident, base, new).await
    }
}

impl RaceAt {
    /// Another writer's append of `theirs`.
    async fn append_theirs(&self, inner: &InMemoryCatalog, ident: &TableIdent, theirs: DataFile) {
        commit_append(
            inner,
            ident,
            vec![theirs],
            BTreeMap::new(),
            self.env.as_ref(),
        )
        .await
        .unwrap();
    }
}

/// The catalog's answer "the pointer moved" to a swap on `base`, as a racing test gives it.
pub(crate) fn conflict(ident: &TableIdent, base: &str) -> Error {
    Error::CommitConflict {
        table: ident.to_string(),
        expected: Some(base.to_string()),
        found: None,
    }
}

/// The deterministic clock's step in the maintenance tests' tables.
pub(crate) const STEP_MS: i64 = 1_000;

/// A table `db.t` in memory whose appends write data files that exist in the store.
pub(crate) struct Fixture {
    pub(crate) io: FileIo,
    pub(crate) env: Arc<DeterministicEnvironment>,
    pub(crate) catalog: InMemoryCatalog,
    pub(crate) ident: TableIdent,
    pub(crate) files: usize,
}

impl Fixture {
    /// A new table in `version`, merging from two manifests on.
    pub(crate) async fn new(version: FormatVersion) -> Self {
        let io = FileIo::memory();
        let env = Arc::new(DeterministicEnvironment::new(1_000_000, STEP_MS, 7));
        let catalog = InMemoryCatalog::new(io.clone(), env.clone());
        let ident = TableIdent::parse("db.t").unwrap();
        let schema =
            Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long)]).unwrap();
        let mut creation = fast_retry_creation("memory://wh/db/t", schema);
        creation.format_version = version;
        creation
            .properties
            .insert("commit.manifest.min-count-to-merge".into(), "2".into());
        catalog.create_table(&ident, creation).await.unwrap();
        Self {
            io,
            env,
            catalog,
            ident,
            files: 0,
        }
    }

    /// The current metadata location and metadata.
    pub(crate) async fn meta(&self) -> (Option<String>, TableMetadata) {
        let t = self.catalog.load_table(&self.ident).await.unwrap();
        (t.metadata_location, t.metadata)
    }

    /// Appends `n` data files that exist in the store.
    pub(crate) async fn append(&mut self, n: usize, mode: AppendMode) {
        let mut files = Vec::new();
        for _ in 0..n {
            self.files += 1;
            let path = format!("memory://wh/db/t/data/f{}.parquet", self.files);
            self.io
                .put(&path, Bytes::from_static(b"PAR1"))
                .await
                .unwrap();
            files.push(DataFile {
                file_path: path,
                record_count: 1,
                file_size_in_bytes: 4,
                ..Default::default()
            });
        }
        commit_append_with_mode(
            &self.catalog,
            &self.ident,
            files,
            BTreeMap::new(),
            Some(mode),
            self.env.as_ref(),
        )
        .await
        .unwrap();
    }

    /// Commits `edit` of the current metadata as is (refs moved by hand).
    pub(crate) async fn edit(&self, edit: impl FnOnce(&mut TableMetadata)) {
        let (location, mut meta) = self.meta().await;
        edit(&mut meta);
        self.catalog
            .commit(&self.ident, location.as_deref().unwrap(), &meta)
            .await
            .unwrap();
    }
}

/// Every file the snapshots of `meta` reach: manifest lists, manifests, live data files.
pub(crate) async fn reachable(io: &FileIo, meta: &TableMetadata) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for s in &meta.snapshots {
        let list = s.manifest_list.clone().unwrap();
        for m in read_manifest_list(io, Some(&list)).await.unwrap() {
            let bytes = io.read(&m.manifest_path).await.unwrap();
            for e in decode_manifest(&m.manifest_path, &bytes).unwrap().entries {
                if e.status != ManifestStatus::Deleted {
                    out.insert(e.data_file.file_path);
                }
            }
            out.insert(m.manifest_path);
        }
        out.insert(list);
    }
    out
}

/// The paths of `paths` that exist in the store.
pub(crate) async fn existing(io: &FileIo, paths: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for p in paths {
        if io.exists(p).await.unwrap() {
            out.insert(p.clone());
        }
    }
    out
}

/// Commits a snapshot that adds `files` as one manifest of `content`, the way a row-level
/// writer (Spark's merge-on-read DELETE) does, and edits the rows listed (to stand in for an
/// old writer's list).
pub(crate) async fn commit_foreign_manifest(
    catalog: &InMemoryCatalog,
    ident: &TableIdent,
    content: ManifestContent,
    files: Vec<DataFile>,
    entry: impl Fn(i64, DataFile) -> ManifestEntry,
    edit: impl Fn(&mut ManifestFile),
) {
    let table = catalog.load_table(ident).await.unwrap();
    let meta = &table.metadata;
    let location = &meta.location;
    let snapshot_id = 900_000 + meta.snapshots.len() as i64;
    let entries: Vec<ManifestEntry> = files.into_iter().map(|f| entry(snapshot_id, f)).collect();
    let ctx = ManifestContext {
        version: meta.format_version,
        schema: meta.current_schema().unwrap(),
        spec: meta.default_spec().unwrap(),
        codec: iceberg_spec::AvroCodec::Deflate,
        marker: [3; 16],
        target_size_bytes: u64::MAX,
        content,
    };
    let encoded = encode_manifests(&ctx, snapshot_id, &entries, |n| {
        format!("{location}/metadata/other-{snapshot_id}-m{n}.avro")
    })
    .unwrap();
    let io = catalog.io();
    let mut new = Vec::new();
    for m in encoded {
        io.put(&m.file.manifest_path, m.bytes.into()).await.unwrap();
        new.push(m.file);
    }
    let parents: Vec<Arc<ManifestFile>> = read_manifest_list(
        io,
        meta.branch_head(MAIN_BRANCH)
            .and_then(|s| s.manifest_list.as_deref()),
    )
    .await
    .unwrap()
    .into_iter()
    .map(Arc::new)
    .collect();
    let list_path = format!("{location}/metadata/snap-{snapshot_id}-other.avro");
    let plan = plan_fast_append(
        meta,
        &AttemptInputs {
            snapshot_id,
            branch: MAIN_BRANCH,
            new_manifests: &new,
            parent_manifests: &parents,
            manifests_replaced: 0,
            added: &AddedCounts::default(),
            extra_summary: &BTreeMap::new(),
            manifest_list_path: list_path.clone(),
            base_location: table.metadata_location.as_deref(),
            now_ms: 1_800_000_000_000,
        },
    )
    .unwrap();
    let rows: Vec<ManifestFile> = plan
        .manifests
        .iter()
        .map(|m| {
            let mut m = ManifestFile::clone(m);
            edit(&mut m);
            m
        })
        .collect();
    let bytes = encode_manifest_list(
        &list_path,
        &plan.header,
        &rows,
        iceberg_spec::AvroCodec::Deflate,
        [4; 16],
    )
    .unwrap();
    io.put(&list_path, bytes.into()).await.unwrap();
    catalog
        .commit(
            ident,
            table.metadata_location.as_deref().unwrap_or_default(),
            &plan.metadata,
        )
        .await
        .unwrap();
}

/// A table `db.w` of `id` and an int `qty` partitioned by `transform(qty)`, merging from two
/// manifests on.
pub(crate) async fn qty_table(
    transform: iceberg_spec::Transform,
) -> (InMemoryCatalog, TableIdent, Arc<DeterministicEnvironment>) {
    let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 3, 5));
    let catalog = InMemoryCatalog::new(FileIo::memory(), env.clone());
    let ident = TableIdent::parse("db.w").unwrap();
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Int),
            NestedField::optional(2, "qty", PrimitiveType::Int),
        ],
    )
    .unwrap();
    let mut creation = fast_retry_creation("memory://wh/db/w", schema.clone());
    creation.spec = iceberg_spec::PartitionSpec::builder(&schema)
        .add("qty", transform)
        .unwrap()
        .build()
        .unwrap();
    creation
        .properties
        .insert("commit.manifest.min-count-to-merge".into(), "2".into());
    catalog.create_table(&ident, creation).await.unwrap();
    (catalog, ident, env)
}
