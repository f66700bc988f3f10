"""Apache Iceberg Java (iceberg-spark-runtime jar's core API, no Spark): one JVM for all tables.

setup.sh compiles java/InteropReader.java into CACHE/java/classes and writes the classpath to
CACHE/java/classpath.txt.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from canon import canon, canon_row, sort_rows
from stats import canon_file, canon_snapshot, sort_files, sort_snapshots
from table_meta import TableMeta

NAME = "java"
JAVA_OPTS = ["-Xmx2g", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Dlog4j2.level=warn"]


def version() -> str:
    return "Apache Iceberg Java 1.10.2 (iceberg-spark-runtime-3.5_2.12-1.10.2.jar, core API)"


def _annotate(e: dict, meta: TableMeta) -> dict:
    """Adds each leaf's column type and canonical literals, which the Java side converts."""
    e = dict(e)
    if e["op"] in ("and", "or"):
        e["args"] = [_annotate(a, meta) for a in e["args"]]
    elif e["op"] == "not":
        e["arg"] = _annotate(e["arg"], meta)
    else:
        t = meta.column_type(e["col"])
        e["type"] = t if isinstance(t, str) else t["type"]
        if "value" in e and e["op"] != "starts_with":
            e["value"] = canon(e["value"], t)
        if "values" in e:
            e["values"] = [canon(v, t) for v in e["values"]]
    return e


def _canon_part(part: str, data, meta: TableMeta):
    if part in ("scan", "filter"):
        return sort_rows([canon_row(r, meta.fields) for r in data])
    if part == "snapshots":
        return sort_snapshots([canon_snapshot(s) for s in data])
    return sort_files([canon_file(f, meta) for f in data])


def read_all(tables: list[dict], metas: dict[str, TableMeta], cache: Path) -> dict:
    java = cache / "java"
    classpath = f"{java / 'classes'}:{(java / 'classpath.txt').read_text().strip()}"
    request = {"tables": [{"name": t["name"], "metadata": metas[t["name"]].path,
                           "filters": {k: _annotate(e, metas[t["name"]]) for k, e in t.get("filters", {}).items()}}
                          for t in tables]}
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(request, f)
        f.flush()
        proc = subprocess.run(["java", *JAVA_OPTS, "-cp", classpath, "InteropReader", f.name],
                              capture_output=True, text=True)
    if os.environ.get("INTEROP_TRACE"):
        sys.stderr.write(proc.stderr)
    results: dict[str, dict] = {t["name"]: {"filters": {}} for t in tables}
    for line in proc.stdout.splitlines():
        msg = json.loads(line)
        meta, res = metas[msg["table"]], results[msg["table"]]
        try:
            value = {"error": msg["error"]} if "error" in msg else _canon_part(msg["part"], msg["data"], meta)
        except Exception as e:  # noqa: BLE001
            value = {"error": f"canonicalising: {type(e).__name__}: {e}"}
        if msg["part"] == "filter":
            res["filters"][msg["filter"]] = value
        else:
            res[msg["part"]] = value
    if proc.returncode != 0:
        raise RuntimeError(f"java exited {proc.returncode}: {proc.stderr[-2000:]}")
    return results
