//! Reading and writing the `metadata.json` document.
//!
//! Reading goes through a private DTO where every field is optional, then checks which
//! fields the format version requires, so an error names the missing field. Writing builds
//! the object in Java's key order with the fields each version carries.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use super::{EncryptionKey, FormatVersion, PartitionStatisticsFile, StatisticsFile, TableMetadata};
use crate::error::{Error, Result};
use crate::partition::{
    PartitionFieldJson, PartitionSpec, UNPARTITIONED_LAST_ASSIGNED_ID, fields_from_json,
};
use crate::schema::Schema;
use crate::snapshot::{
    MAIN_BRANCH, MetadataLogEntry, SharedSnapshot, Snapshot, SnapshotLogEntry, SnapshotRef,
};
use crate::sort_order::SortOrder;

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
struct MetadataDto {
    format_version: Option<i64>,
    table_uuid: Option<Uuid>,
    location: Option<String>,
    last_sequence_number: Option<i64>,
    last_updated_ms: Option<i64>,
    last_column_id: Option<i32>,
    schema: Option<Schema>,
    schemas: Option<Vec<Schema>>,
    current_schema_id: Option<i32>,
    partition_spec: Option<Vec<PartitionFieldJson>>,
    partition_specs: Option<Vec<PartitionSpec>>,
    default_spec_id: Option<i32>,
    last_partition_id: Option<i32>,
    properties: Option<BTreeMap<String, String>>,
    current_snapshot_id: Option<i64>,
    snapshots: Option<Vec<Snapshot>>,
    snapshot_log: Option<Vec<SnapshotLogEntry>>,
    metadata_log: Option<Vec<MetadataLogEntry>>,
    sort_orders: Option<Vec<SortOrder>>,
    default_sort_order_id: Option<i64>,
    refs: Option<BTreeMap<String, SnapshotRef>>,
    statistics: Option<Vec<StatisticsFile>>,
    partition_statistics: Option<Vec<PartitionStatisticsFile>>,
    next_row_id: Option<i64>,
    encryption_keys: Option<Vec<EncryptionKey>>,
}

fn missing(field: &str, version: FormatVersion) -> Error {
    Error::invalid_metadata(
        field,
        format!("required in format version {version} but missing"),
    )
}

fn required<T>(value: Option<T>, field: &str, version: FormatVersion) -> Result<T> {
    value.ok_or_else(|| missing(field, version))
}

/// Parses the document without cross-reference validation.
pub(super) fn parse(text: &str) -> Result<TableMetadata> {
    let dto: MetadataDto = serde_json::from_str(text).map_err(|source| Error::Json {
        what: "table metadata".into(),
        source,
    })?;
    let version = FormatVersion::from_number(
        dto.format_version
            .ok_or_else(|| Error::invalid_metadata("format-version", "missing"))?,
    )?;
    let v2 = version >= FormatVersion::V2;

    let location = required(dto.location, "location", version)?;
    let last_updated_ms = required(dto.last_updated_ms, "last-updated-ms", version)?;
    let last_column_id = required(dto.last_column_id, "last-column-id", version)?;

    let (schemas, current_schema_id) = match (dto.schemas, dto.current_schema_id, dto.schema) {
        (Some(schemas), Some(id), _) => (schemas, id),
        (Some(schemas), None, Some(schema)) if !v2 => (schemas, schema.schema_id()),
        (_, _, Some(schema)) if !v2 => {
            let id = schema.schema_id();
            (vec![schema], id)
        }
        (None, _, _) => return Err(missing("schemas", version)),
        (Some(_), None, _) => {
            return Err(missing("current-schema-id", version));
        }
    };

    let (partition_specs, default_spec_id) =
        match (dto.partition_specs, dto.default_spec_id, dto.partition_spec) {
            (Some(specs), Some(id), _) => (specs, id),
            (Some(specs), None, _) if !v2 => {
                let id = specs.first().map(PartitionSpec::spec_id).unwrap_or(0);
                (specs, id)
            }
            (None, _, Some(fields)) if !v2 => (
                vec![PartitionSpec::new_unchecked(0, fields_from_json(fields)?)],
                0,
            ),
            (None, _, _) => {
                return Err(missing("partition-specs", version));
            }
            (Some(_), None, _) => {
                return Err(missing("default-spec-id", version));
            }
        };
    let last_partition_id = match dto.last_partition_id {
        Some(id) => id,
        None if !v2 => partition_specs
            .iter()
            .filter_map(PartitionSpec::highest_field_id)
            .max()
            .unwrap_or(UNPARTITIONED_LAST_ASSIGNED_ID),
        None => required(None, "last-partition-id", version)?,
    };

    // Some writers leave a counter below an id in use (iceberg-go wrote `last-partition-id`
    // 999 beside field 1000); Java loads such tables. Raised here, so that no id this
    // library assigns later collides.
    let last_column_id = schemas
        .iter()
        .map(Schema::highest_field_id)
        .fold(last_column_id, i32::max);
    let last_partition_id = partition_specs
        .iter()
        .filter_map(PartitionSpec::highest_field_id)
        .fold(last_partition_id, i32::max);

    let (sort_orders, default_sort_order_id) = match (dto.sort_orders, dto.default_sort_order_id) {
        (Some(orders), Some(id)) => (orders, id),
        (None, None) if !v2 => (vec![SortOrder::unsorted()], 0),
        (Some(orders), None) if !v2 => (orders, 0),
        (None, _) => return Err(missing("sort-orders", version)),
        (Some(_), None) => {
            return Err(missing("default-sort-order-id", version));
        }
    };

    // -1 is how v1/v2 writers say "no snapshot".
    let current_snapshot_id = dto.current_snapshot_id.filter(|id| *id != -1);
    // As Java's `TableMetadataParser`: `main` is made from the current snapshot only when the
    // document has no refs at all (written before refs existed). Refs without `main` beside
    // a current snapshot stay so: a REST server holding them asserts that `main` is absent.
    let refs = match (dto.refs, current_snapshot_id) {
        (Some(refs), _) => refs,
        (None, Some(id)) => BTreeMap::from([(MAIN_BRANCH.to_string(), SnapshotRef::branch(id))]),
        (None, None) => BTreeMap::new(),
    };

    let next_row_id = match version {
        FormatVersion::V3 => Some(required(dto.next_row_id, "next-row-id", version)?),
        _ => None,
    };

    Ok(TableMetadata {
        format_version: version,
        table_uuid: if v2 {
            Some(required(dto.table_uuid, "table-uuid", version)?)
        } else {
            dto.table_uuid
        },
        location,
        last_sequence_number: if v2 {
            required(dto.last_sequence_number, "last-sequence-number", version)?
        } else {
            dto.last_sequence_number.unwrap_or(0)
        },
        last_updated_ms,
        last_column_id,
        schemas,
        current_schema_id,
        partition_specs,
        default_spec_id,
        last_partition_id,
        properties: dto.properties.unwrap_or_default(),
        current_snapshot_id,
        snapshots: dto
            .snapshots
            .unwrap_or_default()
            .into_iter()
            .map(SharedSnapshot::new)
            .collect(),
        snapshot_log: dto.snapshot_log.unwrap_or_default(),
        metadata_log: dto.metadata_log.unwrap_or_default(),
        sort_orders,
        default_sort_order_id,
        refs,
        statistics: dto.statistics.unwrap_or_default(),
        partition_statistics: dto.partition_statistics.unwrap_or_default(),
        next_row_id,
        encryption_keys: dto.encryption_keys.unwrap_or_default(),
    })
}

/// The document as written: borrowed fields in Java's key order, serialized straight to text
/// (no intermediate `Value` tree: at thousands of snapshots that tree dominated a commit).
#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct MetadataOut<'a> {
    format_version: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    table_uuid: Option<String>,
    location: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_sequence_number: Option<i64>,
    last_updated_ms: i64,
    last_column_id: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    schema: Option<Value>,
    current_schema_id: i32,
    schemas: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    partition_spec: Option<Value>,
    default_spec_id: i32,
    partition_specs: &'a [PartitionSpec],
    last_partition_id: i32,
    default_sort_order_id: i64,
    sort_orders: &'a [SortOrder],
    properties: &'a BTreeMap<String, String>,
    /// `null` in v3 when there is none, `-1` before.
    current_snapshot_id: Option<i64>,
    refs: &'a BTreeMap<String, SnapshotRef>,
    #[serde(serialize_with = "memoized_snapshots")]
    snapshots: &'a [SharedSnapshot],
    statistics: &'a [StatisticsFile],
    partition_statistics: &'a [PartitionStatisticsFile],
    snapshot_log: &'a [SnapshotLogEntry],
    metadata_log: &'a [MetadataLogEntry],
    #[serde(skip_serializing_if = "Option::is_none")]
    next_row_id: Option<i64>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    encryption_keys: &'a [EncryptionKey],
}

/// Writes each snapshot's memoized text: a commit repeats every earlier snapshot, and
/// rendering them anew each time made its cost grow with the history.
fn memoized_snapshots<S: serde::Serializer>(
    snapshots: &&[SharedSnapshot],
    serializer: S,
) -> std::result::Result<S::Ok, S::Error> {
    use serde::ser::{Error as _, SerializeSeq};
    let mut seq = serializer.serialize_seq(Some(snapshots.len()))?;
    for s in *snapshots {
        seq.serialize_element(s.metadata_json().map_err(S::Error::custom)?)?;
    }
    seq.end()
}

/// Writes the document in Java's key order with the fields the version carries.
pub(super) fn write(meta: &TableMetadata) -> Result<String> {
    let v = meta.format_version;
    let v1 = v == FormatVersion::V1;
    let out = MetadataOut {
        format_version: v.number(),
        table_uuid: meta.table_uuid.map(|u| u.to_string()),
        location: &meta.location,
        last_sequence_number: (v >= FormatVersion::V2).then_some(meta.last_sequence_number),
        last_updated_ms: meta.last_updated_ms,
        last_column_id: meta.last_column_id,
        schema: if v1 {
            meta.current_schema().ok().map(Schema::to_json)
        } else {
            None
        },
        current_schema_id: meta.current_schema_id,
        schemas: meta.schemas.iter().map(Schema::to_json).collect(),
        partition_spec: if v1 {
            meta.default_spec().ok().map(PartitionSpec::fields_json)
        } else {
            None
        },
        default_spec_id: meta.default_spec_id,
        partition_specs: &meta.partition_specs,
        last_partition_id: meta.last_partition_id,
        default_sort_order_id: meta.default_sort_order_id,
        sort_orders: &meta.sort_orders,
        properties: &meta.properties,
        current_snapshot_id: match (meta.current_snapshot_id, v) {
            (Some(id), _) => Some(id),
            (None, FormatVersion::V3) => None,
            (None, _) => Some(-1),
        },
        refs: &meta.refs,
        snapshots: &meta.snapshots,
        statistics: &meta.statistics,
        partition_statistics: &meta.partition_statistics,
        snapshot_log: &meta.snapshot_log,
        metadata_log: &meta.metadata_log,
        next_row_id: meta.next_row_id,
        encryption_keys: &meta.encryption_keys,
    };
    let failed =
        |e: String| Error::invalid_metadata("metadata.json", format!("cannot serialize: {e}"));
    // Sized up front: at thousands of snapshots, growing the buffer by doubling copied the
    // document several times over.
    let mut snapshots_len = 0;
    for s in &meta.snapshots {
        snapshots_len += s
            .metadata_json()
            .map_err(|e| failed(e.to_string()))?
            .get()
            .len()
            + 8;
    }
    let logs_len = 96 * (meta.snapshot_log.len() + meta.metadata_log.len());
    let mut buf = Vec::with_capacity(snapshots_len + logs_len + 16 * 1024);
    // Plain data with string keys: a failure here is a bug, reported rather than written.
    serde_json::to_writer_pretty(&mut buf, &out).map_err(|e| failed(e.to_string()))?;
    String::from_utf8(buf).map_err(|e| failed(e.to_string()))
}
