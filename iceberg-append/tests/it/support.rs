//! Helpers the test modules share: data file records and a catalog that races a commit.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use iceberg_append::{
    Catalog, DeterministicEnvironment, Error, InMemoryCatalog, MetadataCache, Result,
    SchemaEvolution, Table, TableCreation, TableIdent, TableUpdate, commit_append,
    commit_evolving_append, commit_table_update,
};
use iceberg_io::FileIo;
use iceberg_spec::properties::{COMMIT_MIN_RETRY_WAIT_MS, COMMIT_NUM_RETRIES};
use iceberg_spec::{DataFile, Schema, TableMetadata};

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
}

/// An in-memory catalog whose first swap meets a [`Race`].
#[derive(Debug)]
pub(crate) struct Racing {
    pub(crate) inner: InMemoryCatalog,
    pub(crate) env: Arc<DeterministicEnvironment>,
    pub(crate) race: Mutex<Option<Race>>,
}

#[async_trait]
impl Catalog for Racing {
    async fn load_table(&self, ident: &TableIdent) -> Result<Table> {
        self.inner.load_table(ident).await
    }

    async fn create_table(&self, ident: &TableIdent, creation: TableCreation) -> Result<Table> {
        self.inner.create_table(ident, creation).await
    }

    async fn commit(&self, ident: &TableIdent, base: &str, new: &TableMetadata) -> Result<String> {
        let race = self.race.lock().unwrap().take();
        match race {
            Some(Race::Append(theirs)) => {
                commit_append(
                    &self.inner,
                    ident,
                    vec![*theirs],
                    BTreeMap::new(),
                    self.env.as_ref(),
                )
                .await
                .unwrap();
            }
            Some(Race::Update(update)) => {
                commit_table_update(&self.inner, ident, &update, self.env.as_ref())
                    .await
                    .unwrap();
            }
            Some(Race::Evolve(race)) => {
                let (theirs, evolution) = *race;
                commit_evolving_append(
                    &self.inner,
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
                self.inner.commit(ident, base, new).await?;
                return Err(Error::CommitConflict {
                    table: ident.to_string(),
                    expected: Some(base.to_string()),
                    found: None,
                });
            }
            None => {}
        }
        self.inner.commit(ident, base, new).await
    }

    fn io(&self) -> &FileIo {
        self.inner.io()
    }

    fn metadata_cache(&self) -> Option<&MetadataCache> {
        self.inner.metadata_cache()
    }
}
