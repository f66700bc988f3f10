"""What the Parquet data files themselves say, read with pyarrow and no Iceberg at all.

Not an Iceberg reader: a sanity check of the manifests' stats. For every live file of the
current snapshot (the manifests decoded with fastavro, manifest_files.py) it recomputes from the
file: record_count and file_size_in_bytes, split_offsets (each row group's first page, as
Java's ParquetUtil.getSplitOffsets), column_sizes (compressed size of the column chunks, as
Java's ParquetMetrics), value/null/NaN counts of the leaves outside lists and maps (inside
them Parquet counts levels, not values), and the data's min/max of every leaf. compare.py holds
the min/max against the bounds with data_check.py: a bound may be truncated, so lower <= min and
upper >= max under Iceberg's ordering (canon.order_key), and equality for the types Iceberg
never truncates.
"""

import json
import math
import os
from importlib.metadata import version as _version

import pyarrow as pa
import pyarrow.parquet as pq

import manifest_files
from canon import canon, order_key
from readers import attempt
from stats import sort_files
from table_meta import TableMeta, read_metadata, strip_scheme

NAME = "data_files"
BOUNDS_FROM_DATA = True  # compare.py: "lower_bounds"/"upper_bounds" are the data's min/max


def version() -> str:
    return f"pyarrow {_version('pyarrow')} on the Parquet files (no Iceberg)"


def _field_id(field: pa.Field) -> int | None:
    raw = (field.metadata or {}).get(b"PARQUET:field_id")
    return int(raw) if raw is not None else None


def _mapped_schema(schema: pa.Schema, mapping: list | None) -> pa.Schema:
    """A file's Arrow schema with field ids from the table's name mapping when the file has
    none (files registered with add-files), as readers resolve them: by name, with list and
    map children named element, key and value."""
    def has_ids(f: pa.Field) -> bool:
        t = f.type
        kids = ([t.field(i) for i in range(t.num_fields)] if pa.types.is_struct(t) else
                [t.key_field, t.item_field] if pa.types.is_map(t) else
                [t.value_field] if pa.types.is_list(t) or pa.types.is_large_list(t) else [])
        return _field_id(f) is not None or any(has_ids(k) for k in kids)

    if mapping is None or any(has_ids(f) for f in schema):
        return schema

    def find(entries: list, name: str) -> dict | None:
        return next((e for e in entries if name in e.get("names", [])), None)

    def attach(field: pa.Field, m: dict | None) -> pa.Field:
        kids, t = (m or {}).get("fields", []), field.type
        if pa.types.is_struct(t):
            t = pa.struct([attach(t.field(i), find(kids, t.field(i).name)) for i in range(t.num_fields)])
        elif pa.types.is_map(t):
            t = pa.map_(attach(t.key_field, find(kids, "key")), attach(t.item_field, find(kids, "value")))
        elif pa.types.is_list(t):
            t = pa.list_(attach(t.value_field, find(kids, "element")))
        md = dict(field.metadata or {})
        if m and m.get("field-id") is not None:
            md[b"PARQUET:field_id"] = str(m["field-id"]).encode()
        return pa.field(field.name, t, field.nullable, md)

    return pa.schema([attach(f, find(mapping, f.name)) for f in schema], metadata=schema.metadata)


def _name_mapping(meta: TableMeta) -> list | None:
    raw = read_metadata(meta.path).get("properties", {}).get("schema.name-mapping.default")
    return json.loads(raw) if raw else None


def _leaves(arr: pa.Array, field: pa.Field, repeated: bool, out: list) -> None:
    """(field id, values, inside a list/map) for every primitive leaf; a struct's null rows
    count as nulls of its leaves, as Parquet's definition levels do."""
    t = arr.type
    if pa.types.is_struct(t):
        for i, child in enumerate(arr.flatten()):
            _leaves(child, t.field(i), repeated, out)
    elif pa.types.is_map(t):
        _leaves(arr.keys, t.key_field, True, out)
        _leaves(arr.items, t.item_field, True, out)
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        _leaves(arr.flatten(), t.value_field, True, out)
    else:
        out.append((_field_id(field), arr, repeated))


def _python_values(arr: pa.Array) -> list:
    if isinstance(arr.type, pa.BaseExtensionType):  # arrow.uuid: its fixed[16] storage
        arr = arr.storage
    if pa.types.is_timestamp(arr.type) and arr.type.unit == "ns":
        arr = arr.cast(pa.int64())  # canon takes integer nanos; datetime cannot hold them
    return arr.to_pylist()


def _file(path: str, meta: TableMeta, file_format: str = "PARQUET") -> dict:
    local = strip_scheme(path)
    if file_format != "PARQUET":  # a v3 deletion vector's Puffin file: only its size is checked
        return {"path": meta.relative(path), "file_size_in_bytes": os.path.getsize(local)}
    pf = pq.ParquetFile(local)
    md = pf.metadata
    mapped = _mapped_schema(pf.schema_arrow, _name_mapping(meta))
    table = pf.read().cast(mapped)
    splits, sizes = [], {}
    for rg in range(md.num_row_groups):
        g = md.row_group(rg)
        first = g.column(0)
        splits.append(first.dictionary_page_offset if first.has_dictionary_page else first.data_page_offset)
        for c in range(g.num_columns):
            col = g.column(c)
            sizes[col.path_in_schema] = sizes.get(col.path_in_schema, 0) + col.total_compressed_size
    leaf_ids = _parquet_leaf_ids(pf, mapped)
    column_sizes = {leaf_ids[k]: v for k, v in sizes.items() if leaf_ids.get(k) is not None}
    counts = {"value_counts": {}, "null_value_counts": {}, "nan_value_counts": {}}
    lower, upper = {}, {}
    leaves: list = []
    for name in table.column_names:
        _leaves(table.column(name).combine_chunks(), table.schema.field(name), False, leaves)
    for fid, arr, repeated in leaves:
        t = meta.types_by_id.get(fid)
        if fid is None or t is None or isinstance(t, dict):
            continue
        values = _python_values(arr)
        present = [v for v in values if v is not None]
        nans = [v for v in present if isinstance(v, float) and math.isnan(v)]
        if not repeated:
            counts["value_counts"][fid] = len(values)
            counts["null_value_counts"][fid] = len(values) - len(present)
            if t in ("float", "double"):
                counts["nan_value_counts"][fid] = len(nans)
        ordered = [canon(v, t) for v in present if not (isinstance(v, float) and math.isnan(v))]
        if ordered:
            lower[fid] = min(ordered, key=lambda v: order_key(v, t))
            upper[fid] = max(ordered, key=lambda v: order_key(v, t))
    return {"path": meta.relative(path), "record_count": table.num_rows,
            "file_size_in_bytes": os.path.getsize(local), "split_offsets": splits,
            "column_sizes": {str(k): v for k, v in column_sizes.items()},
            **{k: {str(f): n for f, n in v.items()} for k, v in counts.items()},
            "lower_bounds": {str(k): v for k, v in lower.items()},
            "upper_bounds": {str(k): v for k, v in upper.items()}}


def _parquet_leaf_ids(pf: pq.ParquetFile, schema: pa.Schema) -> dict[str, int | None]:
    """Parquet leaf column path ("s.element" ...) -> Iceberg field id, from the Arrow schema."""
    out: dict[str, int | None] = {}
    arrow_leaves: list = []

    def walk(field: pa.Field, into: list) -> None:
        t = field.type
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                walk(t.field(i), into)
        elif pa.types.is_map(t):
            walk(t.key_field, into)
            walk(t.item_field, into)
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            walk(t.value_field, into)
        else:
            into.append(_field_id(field))

    for f in schema:
        walk(f, arrow_leaves)
    for i in range(len(pf.schema)):  # the leaves, in the same depth-first order
        out[pf.schema.column(i).path] = arrow_leaves[i] if i < len(arrow_leaves) else None
    return out


def read(spec: dict, meta: TableMeta) -> dict:
    def files():
        return sort_files([_file(f["path"] if f["path"].startswith("/") else
                                 strip_scheme(meta.location).rstrip("/") + "/" + f["path"], meta,
                                 f["file_format"])
                           for f in manifest_files.live_files(meta)])

    return {"files": attempt(files)}
