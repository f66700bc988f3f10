//! A table's scan: the current snapshot's live data files, minus those whose manifests'
//! partition summaries or own bounds rule the filters out, read by the scan node
//! ([`crate::scan_exec`]: DataFusion's Parquet source, columns matched by field id).

use std::sync::Arc;

use datafusion::arrow::datatypes::{Schema as ArrowSchema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::{DFSchema, Result as DfResult};
use datafusion::logical_expr::Expr;
use datafusion::logical_expr::utils::conjunction;
use datafusion::physical_plan::ExecutionPlan;
use iceberg_append::manifest::decode_manifest;
use iceberg_append::{Catalog, Table, TableIdent, read_snapshot_manifests};
use iceberg_io::FileIo;
use iceberg_spec::{DataFile, FileFormat, ManifestContent, ManifestStatus, TableMetadata};

use crate::error::{Error, Result};
use crate::prune;
use crate::scan_exec::{IcebergScanExec, ScanDescription, ScanFile};

/// The data files a scan reads, with how many the filters let it skip.
#[derive(Debug, Clone, Default)]
pub struct ScanFiles {
    /// The files to read.
    pub files: Vec<DataFile>,
    /// Live files whose bounds ruled every row out (in the manifests that were read).
    pub skipped: usize,
    /// Manifests whose partition summaries ruled every file out, never read.
    pub skipped_manifests: usize,
}

/// The current snapshot's live data files that `filters` may match: manifests skipped by
/// their partition summaries, then files by their column bounds. The filters name the
/// columns of `columns` (Arrow, with field ids: the provider's schema).
///
/// # Errors
/// A manifest list or manifest that cannot be read; [`Error::DeletesNotSupported`] when the
/// snapshot has live delete files, [`Error::FormatNotSupported`] for a data file to read that
/// is not Parquet.
pub async fn plan_files(
    io: &FileIo,
    table: &str,
    meta: &TableMetadata,
    columns: &ArrowSchema,
    filters: &[Expr],
) -> Result<ScanFiles> {
    let Some(snapshot) = meta.current_snapshot() else {
        return Ok(ScanFiles::default());
    };
    let schema = meta.current_schema()?;
    let conditions = prune::conditions(filters, columns, schema);
    let manifests = read_snapshot_manifests(io, snapshot).await?;
    let deletes = manifests
        .iter()
        .filter(|m| m.content == ManifestContent::Deletes)
        .filter(|m| {
            // Counts are optional in v1; a manifest that does not say may hold deletes.
            m.added_files_count.unwrap_or(1) + m.existing_files_count.unwrap_or(1) > 0
        })
        .count();
    if deletes > 0 {
        return Err(Error::DeletesNotSupported {
            table: table.to_string(),
            manifests: deletes,
        });
    }
    let mut out = ScanFiles::default();
    for m in manifests {
        if let (Some(spec), Some(summaries)) = (meta.spec_by_id(m.partition_spec_id), &m.partitions)
            && !prune::manifest_may_match(spec, summaries, schema, &conditions)
        {
            out.skipped_manifests += 1;
            continue;
        }
        let bytes = io.read(&m.manifest_path).await?;
        let manifest = decode_manifest(&m.manifest_path, &bytes)?;
        for entry in manifest.entries {
            if entry.status == ManifestStatus::Deleted {
                continue;
            }
            if prune::may_match(&entry.data_file, schema, &conditions) {
                if entry.data_file.file_format != FileFormat::Parquet {
                    // Java writes ORC and Avro data files too (`write.format.default`).
                    return Err(Error::FormatNotSupported {
                        table: table.to_string(),
                        path: entry.data_file.file_path,
                        format: entry.data_file.file_format.as_str().to_string(),
                    });
                }
                out.files.push(entry.data_file);
            } else {
                out.skipped += 1;
            }
        }
    }
    Ok(out)
}

/// What DataFusion asked a scan for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScanRequest<'a> {
    pub(crate) projection: Option<&'a Vec<usize>>,
    pub(crate) filters: &'a [Expr],
    pub(crate) limit: Option<usize>,
}

/// The scan node that reads `files` of `table` (a table of `catalog`) as rows of its
/// schema `schema_id` (`columns` in Arrow).
pub(crate) fn plan_scan(
    state: &dyn Session,
    catalog: &Arc<dyn Catalog>,
    ident: &TableIdent,
    table: Table,
    (schema_id, columns): (i32, &SchemaRef),
    files: Vec<DataFile>,
    request: ScanRequest<'_>,
) -> DfResult<Arc<dyn ExecutionPlan>> {
    let ScanRequest {
        projection,
        filters,
        limit,
    } = request;
    // The filters also prune row groups and pages inside each file.
    let predicate = match conjunction(filters.iter().cloned()) {
        Some(predicate) => {
            let df_schema = DFSchema::try_from(columns.as_ref().clone())?;
            Some(state.create_physical_expr(predicate, &df_schema)?)
        }
        None => None,
    };
    let description = ScanDescription {
        ident: ident.clone(),
        table: Arc::new(table),
        schema_id,
        projection: projection.cloned(),
        limit,
        predicate,
    };
    let groups = file_groups(files, state.config().target_partitions());
    Ok(Arc::new(IcebergScanExec::try_new(
        description,
        &groups,
        catalog.clone(),
    )?))
}

/// `files` spread over at most `n` groups of about equal bytes (largest first).
fn file_groups(mut files: Vec<DataFile>, n: usize) -> Vec<Vec<ScanFile>> {
    files.sort_by_key(|f| std::cmp::Reverse(f.file_size_in_bytes));
    let n = n.clamp(1, files.len().max(1));
    let mut groups: Vec<(i64, Vec<ScanFile>)> = (0..n).map(|_| (0, Vec::new())).collect();
    for f in files {
        let Some(smallest) = groups.iter_mut().min_by_key(|(bytes, _)| *bytes) else {
            break;
        };
        smallest.0 += f.file_size_in_bytes;
        smallest.1.push(ScanFile {
            size: u64::try_from(f.file_size_in_bytes).unwrap_or(0),
            path: f.file_path,
        });
    }
    groups
        .into_iter()
        .filter(|(_, g)| !g.is_empty())
        .map(|(_, g)| g)
        .collect()
}
