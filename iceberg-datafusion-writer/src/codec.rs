//! Plans that travel to other processes (Ballista's scheduler and executors, or any
//! runner that ships DataFusion plans with `datafusion-proto`): our table provider and plan
//! nodes as small descriptions, never live handles.
//!
//! A description names its catalog by the name a [`CatalogRegistry`] gives it; every
//! process that decodes plans holds a registry with a catalog of that name (connected to
//! the same shared catalog: a PostgreSQL URL, a REST server, a bucket), and the table's IO
//! comes from it there. The rest is the table's identifier, the metadata file the plan was
//! made on (with its metadata, so no process reads it again), and for the nodes what they
//! do: the insert's operation id, the commit's snapshot id (fixed, so a commit stage run
//! twice lands once), the scan's projection, limit and predicate (its files are its input
//! plan's rows, which DataFusion's codec ships).
//!
//! Anything else is passed to the codec this one wraps: DataFusion's default, or Ballista's
//! own (its shuffle nodes).

use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::TableProvider;
use datafusion::common::{Result as DfResult, TableReference};
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::error::DataFusionError;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{AggregateUDF, Extension, LogicalPlan, ScalarUDF, WindowUDF};
use datafusion::physical_expr_common::physical_expr::PhysicalExpr;
use datafusion::physical_expr_common::physical_expr::proto_decode::PhysicalExprDecodeCtx;
use datafusion::physical_expr_common::physical_expr::proto_encode::PhysicalExprEncodeCtx;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::{DefaultLogicalExtensionCodec, LogicalExtensionCodec};
use datafusion_proto::physical_plan::from_proto::parse_physical_expr;
use datafusion_proto::physical_plan::to_proto::serialize_physical_expr;
use datafusion_proto::physical_plan::{
    DefaultPhysicalExtensionCodec, PhysicalExtensionCodec, PhysicalProtoConverterExtension,
};
use datafusion_proto::protobuf::PhysicalExprNode;
use iceberg_append::{Catalog, Table, TableIdent};
use iceberg_spec::TableMetadata;
use prost::Message;
use serde::{Deserialize, Serialize};

use crate::commit::IcebergCommitExec;
use crate::error::Error;
use crate::partition_key::{PARTITION_KEY_FUNCTION, partition_key_udf};
use crate::provider::IcebergTableProvider;
use crate::scan_exec::{IcebergScanExec, ScanDescription};
use crate::write::{IcebergWriteExec, WriteTarget, only_child};

/// The catalogs plans name, by name. Each process that encodes or decodes plans holds one,
/// the same names for the same shared catalogs.
#[derive(Debug, Clone, Default)]
pub struct CatalogRegistry {
    catalogs: BTreeMap<String, Arc<dyn Catalog>>,
}

impl CatalogRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// This registry with `catalog` under `name`.
    #[must_use]
    pub fn with_catalog(mut self, name: impl Into<String>, catalog: Arc<dyn Catalog>) -> Self {
        self.catalogs.insert(name.into(), catalog);
        self
    }

    /// The catalog registered as `name`.
    ///
    /// # Errors
    /// [`Error::UnknownCatalog`] when there is none.
    pub fn get(&self, name: &str) -> Result<Arc<dyn Catalog>, Error> {
        self.catalogs
            .get(name)
            .cloned()
            .ok_or_else(|| Error::UnknownCatalog {
                name: name.to_string(),
                known: self.catalogs.keys().cloned().collect::<Vec<_>>().join(", "),
            })
    }

    /// The catalogs and their names, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Arc<dyn Catalog>)> {
        self.catalogs.iter().map(|(name, c)| (name.as_str(), c))
    }

    /// The name `catalog` (this very instance) is registered under.
    fn name_of(&self, catalog: &Arc<dyn Catalog>, table: &TableIdent) -> Result<String, Error> {
        let wanted = Arc::as_ptr(catalog).cast::<()>();
        self.catalogs
            .iter()
            .find(|(_, c)| std::ptr::eq(Arc::as_ptr(c).cast::<()>(), wanted))
            .map(|(name, _)| name.clone())
            .ok_or_else(|| Error::CatalogNotRegistered {
                table: table.to_string(),
            })
    }
}

/// What every description starts with: a buffer without it is the wrapped codec's.
const MAGIC: &[u8] = b"iceberg-datafusion-writer/1\n";

/// A table's name, as descriptions carry it.
#[derive(Debug, Serialize, Deserialize)]
struct TableName {
    namespace: Vec<String>,
    name: String,
}

impl From<&TableIdent> for TableName {
    fn from(ident: &TableIdent) -> Self {
        Self {
            namespace: ident.namespace.clone(),
            name: ident.name.clone(),
        }
    }
}

impl From<TableName> for TableIdent {
    fn from(t: TableName) -> Self {
        Self {
            namespace: t.namespace,
            name: t.name,
        }
    }
}

/// The table a node works on: its catalog, name and the metadata file it was planned on.
#[derive(Debug, Serialize, Deserialize)]
struct TableAt {
    catalog: String,
    table: TableName,
    metadata_location: Option<String>,
    /// That file's content (metadata JSON), so no process reads it again.
    metadata: String,
}

impl TableAt {
    fn new(catalog: String, ident: &TableIdent, table: &Table) -> DfResult<Self> {
        Ok(Self {
            catalog,
            table: ident.into(),
            metadata_location: table.metadata_location.clone(),
            metadata: table.metadata.to_json().map_err(Error::from)?,
        })
    }

    fn resolve(
        self,
        registry: &CatalogRegistry,
    ) -> DfResult<(Arc<dyn Catalog>, TableIdent, Table)> {
        let catalog = registry.get(&self.catalog)?;
        let table = Table {
            metadata_location: self.metadata_location,
            metadata: TableMetadata::from_json(&self.metadata).map_err(Error::from)?,
        };
        Ok((catalog, self.table.into(), table))
    }
}

/// One of our plan nodes, described.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "node", rename_all = "snake_case")]
enum NodeDescription {
    Write {
        at: TableAt,
        operation_id: uuid::Uuid,
    },
    Commit {
        catalog: String,
        table: TableName,
        snapshot_id: i64,
    },
    Scan {
        at: TableAt,
        schema_id: i32,
        projection: Option<Vec<usize>>,
        limit: Option<usize>,
        /// The predicate as DataFusion's protobuf bytes.
        predicate: Option<Vec<u8>>,
    },
}

/// Our table provider, described.
#[derive(Debug, Serialize, Deserialize)]
struct ProviderDescription {
    catalog: String,
    table: TableName,
    schema_id: i32,
}

fn encode_json<T: Serialize>(node: &str, value: &T, buf: &mut Vec<u8>) -> DfResult<()> {
    buf.extend_from_slice(MAGIC);
    serde_json::to_writer(buf, value).map_err(|source| {
        Error::PlanDescription {
            node: node.to_string(),
            source,
        }
        .into()
    })
}

fn decode_json<T: for<'de> Deserialize<'de>>(node: &str, json: &[u8]) -> DfResult<T> {
    serde_json::from_slice(json).map_err(|source| {
        Error::PlanDescription {
            node: node.to_string(),
            source,
        }
        .into()
    })
}

/// Encodes and decodes our plan nodes ([`IcebergWriteExec`], [`IcebergCommitExec`],
/// [`IcebergScanExec`]) and the partition key function; everything else goes to the codec
/// it wraps.
#[derive(Debug)]
pub struct IcebergPhysicalCodec {
    registry: CatalogRegistry,
    inner: Arc<dyn PhysicalExtensionCodec>,
}

impl IcebergPhysicalCodec {
    /// Our nodes, their catalogs named by `registry`; other nodes by DataFusion's default.
    pub fn new(registry: CatalogRegistry) -> Self {
        Self {
            registry,
            inner: Arc::new(DefaultPhysicalExtensionCodec {}),
        }
    }

    /// Other nodes by `inner` (Ballista's codec, for its shuffle nodes).
    #[must_use]
    pub fn with_inner(mut self, inner: Arc<dyn PhysicalExtensionCodec>) -> Self {
        self.inner = inner;
        self
    }

    fn describe(&self, node: &dyn ExecutionPlan) -> DfResult<Option<NodeDescription>> {
        if let Some(write) = node.downcast_ref::<IcebergWriteExec>() {
            let target = write.target();
            let table = Table {
                metadata_location: target.metadata_location.clone(),
                metadata: target.metadata.clone(),
            };
            let catalog = self.registry.name_of(write.catalog(), &target.ident)?;
            return Ok(Some(NodeDescription::Write {
                at: TableAt::new(catalog, &target.ident, &table)?,
                operation_id: target.operation_id,
            }));
        }
        if let Some(commit) = node.downcast_ref::<IcebergCommitExec>() {
            return Ok(Some(NodeDescription::Commit {
                catalog: self.registry.name_of(commit.catalog(), commit.ident())?,
                table: commit.ident().into(),
                snapshot_id: commit.snapshot_id(),
            }));
        }
        if let Some(scan) = node.downcast_ref::<IcebergScanExec>() {
            let d = scan.description();
            let catalog = self.registry.name_of(scan.catalog(), &d.ident)?;
            let predicate = match &d.predicate {
                Some(p) => Some(serialize_physical_expr(p, self)?.encode_to_vec()),
                None => None,
            };
            return Ok(Some(NodeDescription::Scan {
                at: TableAt::new(catalog, &d.ident, &d.table)?,
                schema_id: d.schema_id,
                projection: d.projection.clone(),
                limit: d.limit,
                predicate,
            }));
        }
        Ok(None)
    }

    fn rebuild(
        &self,
        description: NodeDescription,
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        match description {
            NodeDescription::Write { at, operation_id } => {
                let (catalog, ident, table) = at.resolve(&self.registry)?;
                let target = WriteTarget {
                    ident,
                    metadata_location: table.metadata_location,
                    metadata: table.metadata,
                    operation_id,
                };
                let input = only_child(inputs.to_vec(), "IcebergWriteExec")?;
                Ok(Arc::new(IcebergWriteExec::try_new(
                    input,
                    Arc::new(target),
                    catalog,
                )?))
            }
            NodeDescription::Commit {
                catalog,
                table,
                snapshot_id,
            } => {
                let catalog = self.registry.get(&catalog)?;
                let input = only_child(inputs.to_vec(), "IcebergCommitExec")?;
                Ok(Arc::new(IcebergCommitExec::new(
                    input,
                    catalog,
                    table.into(),
                    snapshot_id,
                )))
            }
            NodeDescription::Scan {
                at,
                schema_id,
                projection,
                limit,
                predicate,
            } => {
                let (catalog, ident, table) = at.resolve(&self.registry)?;
                let predicate = match predicate {
                    Some(bytes) => {
                        let node = PhysicalExprNode::decode(bytes.as_slice()).map_err(|e| {
                            DataFusionError::Internal(format!(
                                "scan of {ident}: predicate bytes: {e}"
                            ))
                        })?;
                        let schema = table.metadata.schema_by_id(schema_id).ok_or_else(|| {
                            Error::SchemaMissing {
                                table: ident.to_string(),
                                schema_id,
                            }
                        })?;
                        let columns = iceberg_write::arrow_schema(schema).map_err(Error::from)?;
                        Some(parse_physical_expr(&node, ctx, &columns, self)?)
                    }
                    None => None,
                };
                let description = ScanDescription {
                    ident,
                    table: Arc::new(table),
                    schema_id,
                    projection,
                    limit,
                    predicate,
                };
                let files = only_child(inputs.to_vec(), "IcebergScanExec")?;
                Ok(Arc::new(IcebergScanExec::with_file_list(
                    description,
                    files,
                    catalog,
                )?))
            }
        }
    }
}

impl PhysicalExtensionCodec for IcebergPhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        match buf.strip_prefix(MAGIC) {
            Some(json) => self.rebuild(decode_json("plan node", json)?, inputs, ctx),
            None => self.inner.try_decode(buf, inputs, ctx, proto_converter),
        }
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DfResult<()> {
        match self.describe(node.as_ref())? {
            Some(description) => encode_json(node.name(), &description, buf),
            None => self.inner.try_encode(node, buf, proto_converter),
        }
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> DfResult<Arc<ScalarUDF>> {
        if name == PARTITION_KEY_FUNCTION {
            return Ok(partition_key_udf());
        }
        self.inner.try_decode_udf(name, buf)
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> DfResult<()> {
        self.inner.try_encode_udf(node, buf)
    }

    fn try_decode_expr(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn PhysicalExpr>],
        ctx: &PhysicalExprDecodeCtx<'_>,
    ) -> DfResult<Arc<dyn PhysicalExpr>> {
        self.inner.try_decode_expr(buf, inputs, ctx)
    }

    fn try_encode_expr(
        &self,
        node: &Arc<dyn PhysicalExpr>,
        buf: &mut Vec<u8>,
        ctx: &PhysicalExprEncodeCtx<'_>,
    ) -> DfResult<()> {
        self.inner.try_encode_expr(node, buf, ctx)
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> DfResult<Arc<AggregateUDF>> {
        self.inner.try_decode_udaf(name, buf)
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> DfResult<()> {
        self.inner.try_encode_udaf(node, buf)
    }

    fn try_decode_udwf(&self, name: &str, buf: &[u8]) -> DfResult<Arc<WindowUDF>> {
        self.inner.try_decode_udwf(name, buf)
    }

    fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> DfResult<()> {
        self.inner.try_encode_udwf(node, buf)
    }
}

/// Encodes and decodes our table provider in logical plans (a Ballista client sends its
/// plans to the scheduler logical); everything else goes to the codec it wraps.
#[derive(Debug)]
pub struct IcebergLogicalCodec {
    registry: CatalogRegistry,
    inner: Arc<dyn LogicalExtensionCodec>,
}

impl IcebergLogicalCodec {
    /// Our tables, their catalogs named by `registry`; the rest by DataFusion's default.
    pub fn new(registry: CatalogRegistry) -> Self {
        Self {
            registry,
            inner: Arc::new(DefaultLogicalExtensionCodec {}),
        }
    }

    /// The rest by `inner` (Ballista's codec, for its file formats and nodes).
    #[must_use]
    pub fn with_inner(mut self, inner: Arc<dyn LogicalExtensionCodec>) -> Self {
        self.inner = inner;
        self
    }
}

impl LogicalExtensionCodec for IcebergLogicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> DfResult<Extension> {
        self.inner.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> DfResult<()> {
        self.inner.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> DfResult<Arc<dyn TableProvider>> {
        let Some(json) = buf.strip_prefix(MAGIC) else {
            return self
                .inner
                .try_decode_table_provider(buf, table_ref, schema, ctx);
        };
        let d: ProviderDescription = decode_json("table provider", json)?;
        let catalog = self.registry.get(&d.catalog)?;
        Ok(Arc::new(IcebergTableProvider::from_parts(
            catalog,
            d.table.into(),
            schema,
            d.schema_id,
        )))
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> DfResult<()> {
        let Some(provider) = node.downcast_ref::<IcebergTableProvider>() else {
            return self.inner.try_encode_table_provider(table_ref, node, buf);
        };
        let description = ProviderDescription {
            catalog: self
                .registry
                .name_of(provider.catalog(), provider.ident())?,
            table: provider.ident().into(),
            schema_id: provider.schema_id(),
        };
        encode_json("table provider", &description, buf)
    }

    fn try_decode_file_format(
        &self,
        buf: &[u8],
        ctx: &TaskContext,
    ) -> DfResult<Arc<dyn FileFormatFactory>> {
        self.inner.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(
        &self,
        buf: &mut Vec<u8>,
        node: Arc<dyn FileFormatFactory>,
    ) -> DfResult<()> {
        self.inner.try_encode_file_format(buf, node)
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> DfResult<Arc<ScalarUDF>> {
        if name == PARTITION_KEY_FUNCTION {
            return Ok(partition_key_udf());
        }
        self.inner.try_decode_udf(name, buf)
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> DfResult<()> {
        self.inner.try_encode_udf(node, buf)
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> DfResult<Arc<AggregateUDF>> {
        self.inner.try_decode_udaf(name, buf)
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> DfResult<()> {
        self.inner.try_encode_udaf(node, buf)
    }

    fn try_decode_udwf(&self, name: &str, buf: &[u8]) -> DfResult<Arc<WindowUDF>> {
        self.inner.try_decode_udwf(name, buf)
    }

    fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> DfResult<()> {
        self.inner.try_encode_udwf(node, buf)
    }
}
