//! Appends onto tables other writers shaped: delete manifests and deletion vectors survive a
//! merge untouched, v1 manifests of an upgraded table keep sequence number 0, unknown counts
//! are counted, never written as 0, uuid partition manifests stay within one sign class, and
//! an early v1 snapshot's inline manifests are carried.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;

use iceberg_append::manifest::decode_manifest;
use iceberg_append::{
    AppendMode, Catalog, DeterministicEnvironment, InMemoryCatalog, TableCreation, TableIdent,
    commit_append_with_mode, read_manifest_list,
};
use iceberg_io::FileIo;
use iceberg_spec::datum::uuid_order::{java_uuid_cmp, uuid_sign_class};
use iceberg_spec::properties::MANIFEST_MIN_MERGE_COUNT;
use iceberg_spec::{
    DataContentType, DataFile, Datum, FileFormat, FormatVersion, ManifestContent, ManifestEntry,
    ManifestFile, ManifestStatus, NestedField, PartitionSpec, PrimitiveType, Schema, Transform,
};
use proptest::prelude::*;
use uuid::Uuid;

use crate::support::commit_foreign_manifest;

const LOCATION: &str = "memory://wh/db/t";

struct Fixture {
    catalog: InMemoryCatalog,
    env: Arc<DeterministicEnvironment>,
    ident: TableIdent,
}

impl Fixture {
    async fn new(
        version: FormatVersion,
        schema: Schema,
        spec_of: impl Fn(&Schema) -> PartitionSpec,
    ) -> Self {
        let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 7, 5));
        let catalog = InMemoryCatalog::new(FileIo::memory(), env.clone());
        let ident = TableIdent::parse("db.t").unwrap();
        let mut creation = TableCreation::new(LOCATION, schema.clone());
        creation.format_version = version;
        creation.spec = spec_of(&schema);
        creation
            .properties
            .insert(MANIFEST_MIN_MERGE_COUNT.into(), "2".into());
        catalog.create_table(&ident, creation).await.unwrap();
        Self {
            catalog,
            env,
            ident,
        }
    }

    async fn append(&self, files: Vec<DataFile>, mode: AppendMode) {
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

    async fn manifests(&self) -> Vec<ManifestFile> {
        let table = self.catalog.load_table(&self.ident).await.unwrap();
        let list = table
            .metadata
            .current_snapshot()
            .unwrap()
            .manifest_list
            .clone();
        read_manifest_list(self.catalog.io(), list.as_deref())
            .await
            .unwrap()
    }

    async fn entries(&self, m: &ManifestFile) -> Vec<ManifestEntry> {
        let bytes = self.catalog.io().read(&m.manifest_path).await.unwrap();
        decode_manifest(&m.manifest_path, &bytes).unwrap().entries
    }

    /// Commits a snapshot that adds `files` as one manifest of `content` (see
    /// [`commit_foreign_manifest`]).
    async fn commit_manifest(
        &self,
        content: ManifestContent,
        files: Vec<DataFile>,
        entry: impl Fn(i64, DataFile) -> ManifestEntry,
        edit: impl Fn(&mut ManifestFile),
    ) {
        commit_foreign_manifest(&self.catalog, &self.ident, content, files, entry, edit).await;
    }
}

fn id_schema() -> Schema {
    Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long)]).unwrap()
}

fn data_file(name: &str, rows: i64) -> DataFile {
    DataFile {
        file_path: format!("{LOCATION}/data/{name}.parquet"),
        record_count: rows,
        file_size_in_bytes: 100 + rows,
        ..Default::default()
    }
}

fn position_deletes(name: &str, target: &str) -> DataFile {
    DataFile {
        content: DataContentType::PositionDeletes,
        file_path: format!("{LOCATION}/data/{name}-deletes.parquet"),
        record_count: 2,
        file_size_in_bytes: 60,
        referenced_data_file: Some(format!("{LOCATION}/data/{target}.parquet")),
        ..Default::default()
    }
}

fn deletion_vector(name: &str, target: &str, offset: i64) -> DataFile {
    DataFile {
        content: DataContentType::PositionDeletes,
        file_format: FileFormat::Puffin,
        file_path: format!("{LOCATION}/data/{name}.puffin"),
        record_count: 3,
        file_size_in_bytes: 400,
        referenced_data_file: Some(format!("{LOCATION}/data/{target}.parquet")),
        content_offset: Some(offset),
        content_size_in_bytes: Some(42),
        ..Default::default()
    }
}

/// Merge appends onto a table with delete manifests (v2 position deletes, v3 deletion
/// vectors) fold data manifests only: every delete manifest is listed as it was, and every
/// merged manifest holds data files with their sequence numbers.
#[tokio::test]
async fn merge_append_carries_delete_manifests() {
    for version in [FormatVersion::V2, FormatVersion::V3] {
        let t = Fixture::new(version, id_schema(), |_| PartitionSpec::unpartitioned()).await;
        for i in 0..3 {
            t.append(vec![data_file(&format!("d{i}"), 10)], AppendMode::Fast)
                .await;
        }
        let deletes = match version {
            FormatVersion::V3 => vec![
                deletion_vector("dv", "d0", 4),
                deletion_vector("dv", "d1", 46),
            ],
            _ => vec![position_deletes("p0", "d0"), position_deletes("p1", "d1")],
        };
        // A foreign v3 list that gave its delete manifest a first row id, which the spec
        // says is always null: the next list writes null, as Java's does.
        t.commit_manifest(
            ManifestContent::Deletes,
            deletes.clone(),
            ManifestEntry::added,
            |m| {
                if version == FormatVersion::V3 && m.content == ManifestContent::Deletes {
                    m.first_row_id = Some(5);
                }
            },
        )
        .await;
        let mut before: Vec<ManifestFile> = t
            .manifests()
            .await
            .into_iter()
            .filter(|m| m.content == ManifestContent::Deletes)
            .collect();
        assert_eq!(before.len(), 1);
        if version == FormatVersion::V3 {
            assert_eq!(before[0].first_row_id, Some(5));
            before[0].first_row_id = None;
        }
        for i in 3..6 {
            t.append(vec![data_file(&format!("d{i}"), 10)], AppendMode::Merge)
                .await;
        }
        let after = t.manifests().await;
        let delete_rows: Vec<&ManifestFile> = after
            .iter()
            .filter(|m| m.content == ManifestContent::Deletes)
            .collect();
        assert_eq!(
            delete_rows,
            before.iter().collect::<Vec<_>>(),
            "{version:?}"
        );
        let mut data_paths = Vec::new();
        for m in &after {
            let entries = t.entries(m).await;
            for e in &entries {
                let is_data = e.data_file.content == DataContentType::Data;
                assert_eq!(
                    is_data,
                    m.content == ManifestContent::Data,
                    "{}",
                    m.manifest_path
                );
                if is_data {
                    data_paths.push(e.data_file.file_path.clone());
                } else {
                    let want = deletes
                        .iter()
                        .find(|d| {
                            d.file_path == e.data_file.file_path
                                && d.content_offset == e.data_file.content_offset
                        })
                        .unwrap();
                    assert_eq!(e.data_file.referenced_data_file, want.referenced_data_file);
                    assert_eq!(
                        e.data_file.content_size_in_bytes,
                        want.content_size_in_bytes
                    );
                    assert_eq!(e.data_file.file_format, want.file_format);
                }
            }
        }
        data_paths.sort();
        let want: Vec<String> = (0..6)
            .map(|i| data_file(&format!("d{i}"), 10).file_path)
            .collect();
        assert_eq!(data_paths, want, "{version:?}: every data file live once");
        assert!(
            after
                .iter()
                .filter(|m| m.content == ManifestContent::Data)
                .count()
                < 6,
            "{version:?}: the merges folded data manifests"
        );
    }
}

/// A v1 table's manifests (ADDED and EXISTING entries without sequence numbers) merged after
/// the table became v2: every entry gets sequence number 0, as Java's
/// `InheritableMetadataFactory` gives it, never null.
#[tokio::test]
async fn upgraded_v1_manifests_merge_with_sequence_number_zero() {
    let t = Fixture::new(FormatVersion::V1, id_schema(), |_| {
        PartitionSpec::unpartitioned()
    })
    .await;
    for i in 0..4 {
        t.append(vec![data_file(&format!("v1-{i}"), 5)], AppendMode::Merge)
            .await;
    }
    let v1 = t.manifests().await;
    assert!(
        v1.iter().any(|m| m.existing_files_count.unwrap_or(0) > 0),
        "the v1 merges wrote EXISTING entries"
    );
    upgrade_to_v2(&t).await;
    t.append(vec![data_file("v2-0", 5)], AppendMode::Merge)
        .await;
    let mut seen = 0;
    for m in t.manifests().await {
        for e in t.entries(&m).await {
            seen += 1;
            let old = e.data_file.file_path.contains("v1-");
            let want = if old { Some(0) } else { e.sequence_number };
            assert_eq!(e.sequence_number, want, "{}", e.data_file.file_path);
            assert!(e.sequence_number.is_some() || e.status == ManifestStatus::Added);
            if e.status == ManifestStatus::Existing {
                assert_eq!(e.file_sequence_number, Some(0), "{}", e.data_file.file_path);
            }
        }
    }
    assert_eq!(seen, 5);
}

/// Manifests our merges wrote before inheritance followed Java (EXISTING entries of v1 files
/// with a null data sequence number and file sequence number 0, which Java cannot read) are
/// repaired when merged again: data sequence number 0, never null.
#[tokio::test]
async fn old_merged_v1_entries_are_repaired_on_merge() {
    let t = Fixture::new(FormatVersion::V1, id_schema(), |_| {
        PartitionSpec::unpartitioned()
    })
    .await;
    t.append(vec![data_file("v1-0", 5)], AppendMode::Fast).await;
    upgrade_to_v2(&t).await;
    let broken = |snapshot_id: i64, f: DataFile| ManifestEntry {
        status: ManifestStatus::Existing,
        snapshot_id: Some(snapshot_id),
        sequence_number: None,
        file_sequence_number: Some(0),
        data_file: f,
    };
    t.commit_manifest(
        ManifestContent::Data,
        vec![data_file("old-merged", 2)],
        broken,
        |_| {},
    )
    .await;
    t.append(vec![data_file("v2-0", 1)], AppendMode::Merge)
        .await;
    let mut seen = 0;
    for m in t.manifests().await {
        for e in t.entries(&m).await {
            if e.data_file.file_path.contains("old-merged") {
                seen += 1;
                assert_eq!(e.sequence_number, Some(0));
                assert_eq!(e.file_sequence_number, Some(0));
            }
        }
    }
    assert_eq!(seen, 1);
}

async fn upgrade_to_v2(t: &Fixture) {
    let table = t.catalog.load_table(&t.ident).await.unwrap();
    let mut meta = table.metadata.clone();
    meta.format_version = FormatVersion::V2;
    t.catalog
        .commit(&t.ident, table.metadata_location.as_deref().unwrap(), &meta)
        .await
        .unwrap();
}

/// A manifest-list row as an old v1 writer left it: no file or row counts.
fn forget(m: &mut ManifestFile) {
    m.added_files_count = None;
    m.existing_files_count = None;
    m.deleted_files_count = None;
    m.added_rows_count = None;
    m.existing_rows_count = None;
    m.deleted_rows_count = None;
}

/// Manifest-list rows with unknown counts (an old v1 writer's) are counted from their
/// manifests when a v2 list carries them, never written as 0 files; rows with known counts
/// beside them keep theirs.
#[tokio::test]
async fn unknown_counts_are_counted_not_zeroed() {
    let t = Fixture::new(FormatVersion::V1, id_schema(), |_| {
        PartitionSpec::unpartitioned()
    })
    .await;
    // Unknown, known, unknown: each filled row must be its own manifest's.
    t.commit_manifest(
        ManifestContent::Data,
        vec![data_file("old-0", 3), data_file("old-1", 4)],
        ManifestEntry::added,
        forget,
    )
    .await;
    t.commit_manifest(
        ManifestContent::Data,
        vec![data_file("known", 5)],
        ManifestEntry::added,
        |_| {},
    )
    .await;
    // The edit applies to every row of the list: spare the known one (the only 5-row one).
    t.commit_manifest(
        ManifestContent::Data,
        vec![data_file("old-2", 10)],
        ManifestEntry::added,
        |m| {
            if m.added_rows_count != Some(5) {
                forget(m);
            }
        },
    )
    .await;
    assert_eq!(
        t.manifests()
            .await
            .iter()
            .filter(|m| m.added_files_count.is_none())
            .count(),
        2
    );
    upgrade_to_v2(&t).await;
    t.append(vec![data_file("new", 1)], AppendMode::Fast).await;
    let mut old: Vec<_> = t
        .manifests()
        .await
        .into_iter()
        .filter(|m| m.manifest_path.contains("other-"))
        .collect();
    // Named by snapshot ids of equal length that grow with each commit: commit order.
    old.sort_by(|a, b| a.manifest_path.cmp(&b.manifest_path));
    let found: Vec<_> = old
        .iter()
        .map(|m| {
            (
                m.added_files_count,
                m.added_rows_count,
                m.existing_files_count,
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (Some(2), Some(7), Some(0)),
            (Some(1), Some(5), Some(0)),
            (Some(1), Some(10), Some(0))
        ]
    );
}

/// A manifest-list row with unknown counts that a manifest rewrite leaves as it is (alone in
/// its spec) is counted when the v2 list names it again, as an append counts it; the rewrite
/// was refused before, after writing its manifests.
#[tokio::test]
async fn a_manifest_rewrite_counts_the_unknown_counts_it_keeps() {
    let t = Fixture::new(FormatVersion::V1, id_schema(), |_| {
        PartitionSpec::unpartitioned()
    })
    .await;
    t.commit_manifest(
        ManifestContent::Data,
        vec![data_file("spec-0", 3)],
        ManifestEntry::added,
        forget,
    )
    .await;
    // A second spec, so the first spec's manifest is alone and kept.
    let table = t.catalog.load_table(&t.ident).await.unwrap();
    let mut meta = table.metadata.clone();
    let schema = meta.current_schema().unwrap().clone();
    meta.partition_specs
        .push(PartitionSpec::new(1, vec![], &schema).unwrap());
    meta.default_spec_id = 1;
    t.catalog
        .commit(&t.ident, table.metadata_location.as_deref().unwrap(), &meta)
        .await
        .unwrap();
    for name in ["spec-1-a", "spec-1-b"] {
        t.commit_manifest(
            ManifestContent::Data,
            vec![data_file(name, 4)],
            ManifestEntry::added,
            forget,
        )
        .await;
    }
    upgrade_to_v2(&t).await;
    let report = iceberg_append::RewriteManifests::new()
        .commit(&t.catalog, &t.ident, t.env.as_ref())
        .await
        .unwrap();
    assert_eq!((report.manifests_replaced, report.manifests_kept), (2, 1));
    let listed = t.manifests().await;
    assert_eq!(listed.len(), 2);
    let kept = listed.iter().find(|m| m.partition_spec_id == 0).unwrap();
    assert_eq!(
        (
            kept.added_files_count,
            kept.added_rows_count,
            kept.existing_files_count,
            kept.deleted_files_count
        ),
        (Some(1), Some(3), Some(0), Some(0))
    );
    let rewritten = listed.iter().find(|m| m.partition_spec_id == 1).unwrap();
    assert_eq!(
        (
            rewritten.existing_files_count,
            rewritten.existing_rows_count
        ),
        (Some(2), Some(8))
    );
}

/// A table whose writer named a Parquet codec Java accepts and this library cannot write
/// (`lzo`): commits of files written elsewhere, property changes and expiry go on, as Java's
/// do; writing data refuses the property by name.
#[tokio::test]
async fn a_codec_we_cannot_write_stops_only_writing() {
    let t = Fixture::new(FormatVersion::V2, id_schema(), |_| {
        PartitionSpec::unpartitioned()
    })
    .await;
    let table = t.catalog.load_table(&t.ident).await.unwrap();
    let mut meta = table.metadata.clone();
    meta.properties
        .insert("write.parquet.compression-codec".into(), "lzo".into());
    t.catalog
        .commit(&t.ident, table.metadata_location.as_deref().unwrap(), &meta)
        .await
        .unwrap();
    t.append(vec![data_file("a", 3)], AppendMode::Fast).await;
    t.append(vec![data_file("b", 4)], AppendMode::Merge).await;
    let update =
        iceberg_append::TableUpdate::default().set_property("commit.retry.num-retries", "2");
    iceberg_append::commit_table_update(&t.catalog, &t.ident, &update, t.env.as_ref())
        .await
        .unwrap();
    // What an update sets itself must be usable.
    let bad = iceberg_append::TableUpdate::default()
        .set_property("write.parquet.compression-codec", "lzo2");
    let err = iceberg_append::commit_table_update(&t.catalog, &t.ident, &bad, t.env.as_ref())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("lzo2"), "{err}");
    let report = iceberg_append::ExpireSnapshots::new()
        .older_than_ms(i64::MAX)
        .commit(&t.catalog, &t.ident, t.env.as_ref())
        .await
        .unwrap();
    assert_eq!(report.expired_snapshots.len(), 1);
    let meta = t.catalog.load_table(&t.ident).await.unwrap().metadata;
    assert_eq!(meta.snapshots.len(), 1);
    let err = iceberg_write::WriteOptions::from_table_properties(&meta.properties).unwrap_err();
    assert!(err.to_string().contains("lzo"), "{err}");
    // Registering files in place writes no Parquet either.
    iceberg_append::add_files::import_target(&meta).unwrap();
}

/// A v1 snapshot of an early writer names its manifests inline (`manifests`, no manifest
/// list): an append carries them, as Java's `BaseSnapshot` reads them, instead of starting
/// the table over with only the new file (a fast or a merge append).
#[tokio::test]
async fn inline_manifests_of_an_early_v1_snapshot_are_carried() {
    for mode in [AppendMode::Fast, AppendMode::Merge] {
        let t = Fixture::new(FormatVersion::V1, id_schema(), |_| {
            PartitionSpec::unpartitioned()
        })
        .await;
        t.append(vec![data_file("a", 3), data_file("b", 4)], AppendMode::Fast)
            .await;
        let table = t.catalog.load_table(&t.ident).await.unwrap();
        let mut meta = table.metadata.clone();
        let paths: Vec<String> = t
            .manifests()
            .await
            .into_iter()
            .map(|m| m.manifest_path)
            .collect();
        for s in &mut meta.snapshots {
            let mut inline = s.snapshot().clone();
            inline.manifest_list = None;
            inline.manifests = Some(paths.clone());
            *s = inline.into();
        }
        t.catalog
            .commit(&t.ident, table.metadata_location.as_deref().unwrap(), &meta)
            .await
            .unwrap();
        t.append(vec![data_file("c", 5)], mode).await;
        let table = t.catalog.load_table(&t.ident).await.unwrap();
        let live = iceberg_append::live_data_files(t.catalog.io(), &table.metadata)
            .await
            .unwrap();
        let mut names: Vec<&str> = live.iter().map(|f| f.file_path.as_str()).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "memory://wh/db/t/data/a.parquet",
                "memory://wh/db/t/data/b.parquet",
                "memory://wh/db/t/data/c.parquet"
            ],
            "{mode:?}"
        );
        let summary = table.metadata.current_snapshot().unwrap().summary.clone();
        assert_eq!(
            summary.unwrap().get_i64("total-records"),
            Some(12),
            "{mode:?}"
        );
    }
}

/// A table Java encrypts (`encryption.key-id`) is refused, naming why: plaintext files and
/// manifests must not slip into it. The table is unchanged.
#[tokio::test]
async fn an_encrypted_table_is_refused_and_unchanged() {
    let t = Fixture::new(FormatVersion::V2, id_schema(), |_| {
        PartitionSpec::unpartitioned()
    })
    .await;
    t.append(vec![data_file("a", 3)], AppendMode::Fast).await;
    let table = t.catalog.load_table(&t.ident).await.unwrap();
    let mut meta = table.metadata.clone();
    meta.properties
        .insert("encryption.key-id".into(), "key-1".into());
    let location = t
        .catalog
        .commit(&t.ident, table.metadata_location.as_deref().unwrap(), &meta)
        .await
        .unwrap();
    for mode in [AppendMode::Fast, AppendMode::Merge] {
        let err = commit_append_with_mode(
            &t.catalog,
            &t.ident,
            vec![data_file("b", 4)],
            BTreeMap::new(),
            Some(mode),
            t.env.as_ref(),
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains("encryption.key-id"), "{err}");
    }
    let after = t.catalog.load_table(&t.ident).await.unwrap();
    assert_eq!(after.metadata_location.as_deref(), Some(location.as_str()));
}

fn uuid_schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", PrimitiveType::Long),
            NestedField::optional(2, "u", PrimitiveType::Uuid),
        ],
    )
    .unwrap()
}

fn uuid_file(n: usize, u: Option<Uuid>) -> DataFile {
    let mut f = data_file(&format!("u{n}"), 1);
    f.partition = vec![u.map(Datum::Uuid)];
    f
}

/// Whether a summary's bounds cover `u` under `cmp`.
fn covers(
    lo: &[u8],
    hi: &[u8],
    u: &Uuid,
    cmp: impl Fn(&Uuid, &Uuid) -> std::cmp::Ordering,
) -> bool {
    let (lo, hi) = (Uuid::from_slice(lo).unwrap(), Uuid::from_slice(hi).unwrap());
    cmp(&lo, u).is_le() && cmp(u, &hi).is_le()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// For random uuids appended (fast and merging) into an identity(uuid) table, every
    /// manifest's summary bounds cover each of its values under Java's comparator and under
    /// the spec's unsigned order.
    #[test]
    fn uuid_summaries_hold_in_both_orders(
        batches in prop::collection::vec(
            prop::collection::vec(prop::option::weighted(0.9, any::<u128>()), 1..6),
            1..5,
        ),
        merge in any::<bool>(),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let t = Fixture::new(FormatVersion::V2, uuid_schema(), |s| {
                PartitionSpec::builder(s).add("u", Transform::Identity).unwrap().build().unwrap()
            })
            .await;
            let mut n = 0;
            for batch in &batches {
                let files: Vec<DataFile> = batch
                    .iter()
                    .map(|u| {
                        n += 1;
                        uuid_file(n, u.map(Uuid::from_u128))
                    })
                    .collect();
                let mode = if merge { AppendMode::Merge } else { AppendMode::Fast };
                t.append(files, mode).await;
            }
            let mut live = 0;
            for m in t.manifests().await {
                let s = &m.partitions.as_ref().unwrap()[0];
                let mut classes = std::collections::BTreeSet::new();
                for e in t.entries(&m).await {
                    if e.status == ManifestStatus::Deleted {
                        continue;
                    }
                    live += 1;
                    match e.data_file.partition[0] {
                        Some(Datum::Uuid(u)) => {
                            classes.insert(uuid_sign_class(&u));
                            let (lo, hi) = (s.lower_bound.as_deref().unwrap(), s.upper_bound.as_deref().unwrap());
                            assert!(covers(lo, hi, &u, java_uuid_cmp), "Java's order: {u}");
                            assert!(covers(lo, hi, &u, |a, b| a.as_bytes().cmp(b.as_bytes())), "unsigned: {u}");
                        }
                        _ => assert!(s.contains_null),
                    }
                }
                assert!(classes.len() <= 1, "{}: classes {classes:?}", m.manifest_path);
            }
            assert_eq!(live, n);
        });
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Whatever mix of fast appends, merge appends and row-level commits (delete manifests), a
    /// merge never changes the content of what it merges: every data file stays live once, in
    /// a data manifest, with the data sequence number of the commit that added it; every
    /// delete manifest is listed exactly as its commit listed it.
    #[test]
    fn merges_keep_content(
        steps in prop::collection::vec((0u8..3, 1usize..4), 1..10),
        version in prop_oneof![Just(FormatVersion::V2), Just(FormatVersion::V3)],
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let t = Fixture::new(version, id_schema(), |_| PartitionSpec::unpartitioned()).await;
            let mut added: BTreeMap<String, i64> = BTreeMap::new();
            let mut delete_rows: Vec<ManifestFile> = Vec::new();
            let mut n = 0;
            for (kind, count) in &steps {
                let seq = t.catalog.load_table(&t.ident).await.unwrap().metadata.last_sequence_number + 1;
                let files: Vec<DataFile> = (0..*count)
                    .map(|_| {
                        n += 1;
                        data_file(&format!("f{n}"), 2)
                    })
                    .collect();
                match kind {
                    0 | 1 => {
                        for f in &files {
                            added.insert(f.file_path.clone(), seq);
                        }
                        let mode = if *kind == 0 { AppendMode::Fast } else { AppendMode::Merge };
                        t.append(files, mode).await;
                    }
                    _ => {
                        let deletes = files
                            .iter()
                            .map(|f| position_deletes(&f.file_path.replace('/', "_"), "f1"))
                            .collect();
                        t.commit_manifest(ManifestContent::Deletes, deletes, ManifestEntry::added, |_| {}).await;
                        let newest = t
                            .manifests()
                            .await
                            .into_iter()
                            .find(|m| m.content == ManifestContent::Deletes
                                && !delete_rows.iter().any(|d| d.manifest_path == m.manifest_path))
                            .unwrap();
                        delete_rows.push(newest);
                    }
                }
            }
            let manifests = t.manifests().await;
            let mut listed_deletes: Vec<ManifestFile> = manifests
                .iter()
                .filter(|m| m.content == ManifestContent::Deletes)
                .cloned()
                .collect();
            listed_deletes.sort_by(|a, b| a.manifest_path.cmp(&b.manifest_path));
            delete_rows.sort_by(|a, b| a.manifest_path.cmp(&b.manifest_path));
            assert_eq!(listed_deletes, delete_rows);
            let mut live: BTreeMap<String, i64> = BTreeMap::new();
            for m in manifests.iter().filter(|m| m.content == ManifestContent::Data) {
                for e in t.entries(m).await {
                    assert_eq!(e.data_file.content, DataContentType::Data);
                    if e.status == ManifestStatus::Deleted {
                        continue;
                    }
                    let seq = e.sequence_number.unwrap_or(m.sequence_number);
                    assert!(live.insert(e.data_file.file_path.clone(), seq).is_none(), "live twice");
                }
            }
            assert_eq!(live, added);
        });
    }
}
