"""What the canonicaliser needs from a table's metadata.json: schema, field types, partition types.

This is read directly (plain JSON) so that every reader's output is canonicalised the same way;
it is not itself one of the readers under test.
"""

import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class TableMeta:
    path: str
    location: str
    format_version: int
    fields: list[dict]  # current schema's top-level fields
    types_by_id: dict[int, Any]  # every field id of every schema -> type
    partition_types: dict[int, list[dict]]  # spec id -> [{"name", "type"}]

    def column_type(self, name: str) -> Any:
        """Type of a top-level column, or of a struct member given as "a.b"."""
        fields, t = self.fields, None
        for part in name.split("."):
            f = next(f for f in fields if f["name"] == part)
            t = f["type"]
            fields = t["fields"] if isinstance(t, dict) and t["type"] == "struct" else []
        return t

    def relative(self, file_path: str) -> str:
        """A file's path relative to the table location (both without a file: scheme)."""
        p, loc = strip_scheme(file_path), strip_scheme(self.location).rstrip("/") + "/"
        return p[len(loc):] if p.startswith(loc) else p


def strip_scheme(p: str) -> str:
    for prefix in ("file://", "file:"):
        if p.startswith(prefix):
            return p[len(prefix):]
    return p


# Reserved field ids of metadata columns (spec: "Reserved Field IDs"), e.g. position delete files'.
RESERVED_TYPES = {2147483546: "string", 2147483545: "long", 2147483540: "long", 2147483539: "long"}


def _walk(t: Any, out: dict[int, Any]) -> None:
    if not isinstance(t, dict):
        return
    if t["type"] == "struct":
        for f in t["fields"]:
            out[f["id"]] = f["type"]
            _walk(f["type"], out)
    elif t["type"] == "list":
        out[t["element-id"]] = t["element"]
        _walk(t["element"], out)
    elif t["type"] == "map":
        out[t["key-id"]], out[t["value-id"]] = t["key"], t["value"]
        _walk(t["key"], out)
        _walk(t["value"], out)


def _result_type(transform: str, source: Any) -> Any:
    if transform in ("identity", "void") or transform.startswith("truncate"):
        return source
    if transform == "day":
        return "date"
    return "int"  # bucket, year, month, hour


def read_metadata(path: str) -> dict:
    """A metadata.json document; gzip-compressed ones (Java's `*.gz.metadata.json`) too."""
    raw = Path(strip_scheme(path)).read_bytes()
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


def load(path: str) -> TableMeta:
    m = read_metadata(path)
    schemas = m.get("schemas") or [m["schema"]]
    current_id = m.get("current-schema-id", schemas[-1].get("schema-id"))
    current = next((s for s in schemas if s.get("schema-id") == current_id), schemas[-1])
    types: dict[int, Any] = dict(RESERVED_TYPES)
    for s in schemas:
        _walk({"type": "struct", "fields": s["fields"]}, types)
    specs = m.get("partition-specs") or [{"spec-id": 0, "fields": m.get("partition-spec", [])}]
    partition_types = {
        s["spec-id"]: [{"name": f["name"], "type": _result_type(f["transform"], types[f["source-id"]])}
                       for f in s["fields"]]
        for s in specs
    }
    return TableMeta(path, m["location"], m["format-version"], current["fields"], types, partition_types)
