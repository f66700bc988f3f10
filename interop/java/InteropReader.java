// Reads Iceberg tables with the plain Iceberg Java API (no Spark), many tables per JVM.
//
//   java -cp <classes>:<jars> InteropReader REQUEST.json
//
// REQUEST.json: {"tables": [{"name", "metadata", "filters": {name: expr}}]} where each filter leaf
// carries "type" (the column's Iceberg type) and a canonical "value"/"values" (read_tables.py's
// readers/java_reader.py prepares it). Prints one JSON object per line:
//   {"table", "part": "scan"|"filter"|"snapshots"|"files", "filter"?, "data"|"error"}
// Values are emitted untyped (timestamps as ISO with 9 fraction digits, decimals as strings,
// bytes as hex, partition values and bounds in Iceberg's internal representation) and made
// canonical on the Python side with the table's types.

import java.io.File;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.data.GenericDeleteFilter;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.IdentityPartitionConverters;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.parquet.GenericParquetReaders;
import org.apache.iceberg.expressions.Evaluator;
import org.apache.iceberg.mapping.NameMapping;
import org.apache.iceberg.mapping.NameMappingParser;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.util.PartitionUtil;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.JsonNode;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

public class InteropReader {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final DateTimeFormatter TS = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSSSSS");
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSSSSS");
  private static final HexFormat HEX = HexFormat.of();
  private static PrintStream out;
  /** Metadata columns' ids, e.g. a position delete file's file_path and pos. */
  private static final Map<Integer, Type> RESERVED = Map.of(
      MetadataColumns.DELETE_FILE_PATH.fieldId(), Types.StringType.get(),
      MetadataColumns.DELETE_FILE_POS.fieldId(), Types.LongType.get(),
      MetadataColumns.ROW_ID.fieldId(), Types.LongType.get(),
      MetadataColumns.LAST_UPDATED_SEQUENCE_NUMBER.fieldId(), Types.LongType.get());

  public static void main(String[] args) throws Exception {
    out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);
    System.setOut(System.err); // keep library chatter off our JSON lines
    JsonNode request = JSON.readTree(new File(args[0]));
    FileIO io = new HadoopFileIO(new Configuration());
    for (JsonNode t : request.get("tables")) {
      String name = t.get("name").asText();
      Table table;
      try {
        table = new BaseTable(new StaticTableOperations(t.get("metadata").asText(), io), name);
      } catch (Exception e) {
        emit(name, "scan", null, null, e);
        continue;
      }
      part(name, "scan", null, () -> rows(table, Expressions.alwaysTrue()));
      var filters = t.path("filters").fields();
      while (filters.hasNext()) {
        var f = filters.next();
        part(name, "filter", f.getKey(), () -> rows(table, expr(f.getValue())));
      }
      part(name, "snapshots", null, () -> snapshots(table));
      part(name, "files", null, () -> files(table));
    }
    out.flush();
  }

  interface Part {
    Object get() throws Exception;
  }

  private static void part(String table, String part, String filter, Part p) {
    try {
      emit(table, part, filter, p.get(), null);
    } catch (Throwable e) {
      if (System.getenv("INTEROP_TRACE") != null) e.printStackTrace();
      emit(table, part, filter, null, e);
    }
  }

  private static void emit(String table, String part, String filter, Object data, Throwable err) {
    Map<String, Object> line = new LinkedHashMap<>();
    line.put("table", table);
    line.put("part", part);
    if (filter != null) line.put("filter", filter);
    if (err != null) {
      line.put("error", err.getClass().getSimpleName() + ": " + err.getMessage());
    } else {
      line.put("data", data);
    }
    try {
      out.println(JSON.writeValueAsString(line));
    } catch (Exception e) {
      out.println("{\"table\":" + JSON.valueToTree(table) + ",\"part\":\"" + part + "\",\"error\":\"cannot encode\"}");
    }
  }

  private static List<Object> rows(Table table, Expression filter) throws Exception {
    String mapping = table.properties().get(TableProperties.DEFAULT_NAME_MAPPING);
    if (mapping != null) return rowsByNameMapping(table, filter, NameMappingParser.fromJson(mapping));
    List<Object> rows = new ArrayList<>();
    try (CloseableIterable<Record> records = IcebergGenerics.read(table).where(filter).build()) {
      for (Record r : records) rows.add(value(r));
    }
    return rows;
  }

  /**
   * The rows of a table whose Parquet files may lack field ids, read as Spark's reader reads
   * them: IcebergGenerics (GenericReader) never applies the table's name mapping and falls back
   * to ids by column position (apache/iceberg#6122), so this plans the scan with the Java API
   * and reads each task as GenericReader does plus {@code withNameMapping} (what Spark's
   * RowDataReader adds): identity-partition constants, the residual as row-group filter and
   * per row, and the task's deletes.
   */
  private static List<Object> rowsByNameMapping(Table table, Expression filter, NameMapping mapping)
      throws Exception {
    List<Object> rows = new ArrayList<>();
    Schema schema = table.schema();
    try (CloseableIterable<FileScanTask> tasks = table.newScan().filter(filter).planFiles()) {
      for (FileScanTask task : tasks) {
        if (task.file().format() != FileFormat.PARQUET) {
          throw new UnsupportedOperationException("not Parquet: " + task.file().location());
        }
        GenericDeleteFilter deletes = new GenericDeleteFilter(table.io(), task, schema, schema);
        Schema read = deletes.requiredSchema();
        Map<Integer, ?> constants =
            PartitionUtil.constantsMap(task, IdentityPartitionConverters::convertConstant);
        CloseableIterable<Record> records =
            Parquet.read(table.io().newInputFile(task.file().location()))
                .project(read)
                .createReaderFunc(fs -> GenericParquetReaders.buildReader(read, fs, constants))
                .split(task.start(), task.length())
                .filter(task.residual())
                .withNameMapping(mapping)
                .build();
        Evaluator residual = new Evaluator(read.asStruct(), task.residual(), true);
        InternalRecordWrapper wrapper = new InternalRecordWrapper(read.asStruct());
        try (CloseableIterable<Record> kept = deletes.filter(records)) {
          for (Record r : kept) {
            if (residual.eval(wrapper.wrap(r))) rows.add(value(r));
          }
        }
      }
    }
    return rows;
  }

  private static List<Object> snapshots(Table table) {
    List<Object> list = new ArrayList<>();
    for (Snapshot s : table.snapshots()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("snapshot_id", s.snapshotId());
      m.put("parent_id", s.parentId());
      m.put("sequence_number", s.sequenceNumber());
      m.put("timestamp_ms", s.timestampMillis());
      m.put("operation", s.operation());
      m.put("summary", s.summary());
      list.add(m);
    }
    return list;
  }

  private static List<Object> files(Table table) throws Exception {
    List<Object> list = new ArrayList<>();
    Snapshot snap = table.currentSnapshot();
    if (snap == null) return list;
    for (ManifestFile mf : snap.dataManifests(table.io())) {
      try (ManifestReader<DataFile> r = ManifestFiles.read(mf, table.io(), table.specs())) {
        for (DataFile f : r) list.add(file(table, f));
      }
    }
    for (ManifestFile mf : snap.deleteManifests(table.io())) {
      try (ManifestReader<DeleteFile> r = ManifestFiles.readDeleteManifest(mf, table.io(), table.specs())) {
        for (DeleteFile f : r) list.add(file(table, f));
      }
    }
    return list;
  }

  private static Map<String, Object> file(Table table, ContentFile<?> f) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("content", f.content().id());
    m.put("path", f.location());
    m.put("file_format", f.format().name());
    m.put("spec_id", f.specId());
    PartitionSpec spec = table.specs().get(f.specId());
    Map<String, Object> partition = new LinkedHashMap<>();
    StructLike p = f.partition();
    List<Types.NestedField> pfields = spec.partitionType().fields();
    for (int i = 0; i < pfields.size(); i++) partition.put(pfields.get(i).name(), value(p.get(i, Object.class)));
    m.put("partition", partition);
    m.put("record_count", f.recordCount());
    m.put("file_size_in_bytes", f.fileSizeInBytes());
    m.put("column_sizes", f.columnSizes());
    m.put("value_counts", f.valueCounts());
    m.put("null_value_counts", f.nullValueCounts());
    m.put("nan_value_counts", f.nanValueCounts());
    m.put("lower_bounds", bounds(table, f.lowerBounds()));
    m.put("upper_bounds", bounds(table, f.upperBounds()));
    m.put("sort_order_id", f.sortOrderId());
    m.put("split_offsets", f.splitOffsets());
    m.put("first_row_id", f.firstRowId());
    m.put("equality_ids", f.equalityFieldIds());
    return m;
  }

  private static Map<Integer, Object> bounds(Table table, Map<Integer, ByteBuffer> raw) {
    if (raw == null) return null;
    Map<Integer, Object> m = new LinkedHashMap<>();
    raw.forEach((id, buf) -> {
      // The current type first: Conversions reads a promoted column's old 4-byte bounds
      // (int as long, float as double); an older schema's type would misread new 8-byte ones.
      // A dropped column: its newest type, for the same reason.
      Type type = RESERVED.get(id);
      if (type == null) type = table.schema().findType(id);
      List<Integer> newestFirst = new ArrayList<>(table.schemas().keySet());
      newestFirst.sort(java.util.Comparator.reverseOrder());
      for (Integer schemaId : newestFirst) {
        if (type == null) type = table.schemas().get(schemaId).findType(id);
      }
      m.put(id, type == null || !type.isPrimitiveType()
          ? HEX.formatHex(bytes(buf)) : value(Conversions.fromByteBuffer(type, buf.duplicate())));
    });
    return m;
  }

  /** A Java value from Iceberg (generic record data or internal representation) as JSON-able. */
  private static Object value(Object v) {
    if (v == null || v instanceof Boolean || v instanceof Integer || v instanceof Long) return v;
    if (v instanceof Float f) return value((double) f);
    if (v instanceof Double d) return d.isNaN() || d.isInfinite() ? d.toString() : d;
    if (v instanceof BigDecimal d) return d.toPlainString();
    if (v instanceof CharSequence || v instanceof UUID) return v.toString();
    if (v instanceof ByteBuffer b) return HEX.formatHex(bytes(b));
    if (v instanceof byte[] b) return HEX.formatHex(b);
    if (v instanceof LocalDate d) return d.toString();
    if (v instanceof LocalTime t) return TIME.format(t);
    if (v instanceof LocalDateTime t) return TS.format(t);
    if (v instanceof OffsetDateTime t) return TS.format(t.withOffsetSameInstant(ZoneOffset.UTC)) + "+00:00";
    if (v instanceof Record r) {
      Map<String, Object> m = new LinkedHashMap<>();
      List<Types.NestedField> fields = r.struct().fields();
      for (int i = 0; i < fields.size(); i++) m.put(fields.get(i).name(), value(r.get(i)));
      return m;
    }
    if (v instanceof List<?> l) {
      List<Object> out = new ArrayList<>();
      for (Object x : l) out.add(value(x));
      return out;
    }
    if (v instanceof Map<?, ?> map) {
      List<Object> pairs = new ArrayList<>();
      map.forEach((k, x) -> pairs.add(java.util.Arrays.asList(value(k), value(x))));
      return pairs;
    }
    return v.toString();
  }

  private static byte[] bytes(ByteBuffer b) {
    ByteBuffer d = b.duplicate();
    byte[] a = new byte[d.remaining()];
    d.get(a);
    return a;
  }

  /** The spec's filter format (FORMAT.md), leaves annotated with "type", as an Iceberg expression. */
  private static Expression expr(JsonNode e) {
    String op = e.get("op").asText();
    switch (op) {
      case "and", "or": {
        Expression acc = null;
        for (JsonNode a : e.get("args")) {
          Expression x = expr(a);
          acc = acc == null ? x : op.equals("and") ? Expressions.and(acc, x) : Expressions.or(acc, x);
        }
        return acc;
      }
      case "not":
        return Expressions.not(expr(e.get("arg")));
      default:
        break;
    }
    String col = e.get("col").asText();
    String type = e.path("type").asText();
    switch (op) {
      case "is_null": return Expressions.isNull(col);
      case "not_null": return Expressions.notNull(col);
      case "is_nan": return Expressions.isNaN(col);
      case "not_nan": return Expressions.notNaN(col);
      case "starts_with": return Expressions.startsWith(col, e.get("value").asText());
      case "in", "not_in": {
        List<Object> vals = new ArrayList<>();
        for (JsonNode v : e.get("values")) vals.add(literal(v, type));
        return op.equals("in") ? Expressions.in(col, vals) : Expressions.notIn(col, vals);
      }
      default:
        break;
    }
    Object v = literal(e.get("value"), type);
    return switch (op) {
      case "=" -> Expressions.equal(col, v);
      case "!=" -> Expressions.notEqual(col, v);
      case "<" -> Expressions.lessThan(col, v);
      case "<=" -> Expressions.lessThanOrEqual(col, v);
      case ">" -> Expressions.greaterThan(col, v);
      case ">=" -> Expressions.greaterThanOrEqual(col, v);
      default -> throw new IllegalArgumentException("unknown filter op " + op);
    };
  }

  private static Object literal(JsonNode v, String type) {
    if (type.equals("int") || type.equals("long")) return v.asLong();
    if (type.equals("float")) return (float) Double.parseDouble(v.asText());
    if (type.equals("double")) return Double.parseDouble(v.asText());
    if (type.equals("boolean")) return v.asBoolean();
    if (type.startsWith("decimal")) return new BigDecimal(v.asText());
    if (type.equals("binary") || type.startsWith("fixed")) return ByteBuffer.wrap(HEX.parseHex(v.asText()));
    if (type.equals("uuid")) return UUID.fromString(v.asText());
    return v.asText(); // string, date, time, timestamp(tz): Iceberg converts ISO string literals
  }
}
