"""Runs a reader's read(table, meta) in a child process, so that a reader which aborts the whole
process costs one table, not the rest of the run.

DuckDB's iceberg extension throws some C++ exceptions past its Python binding ("terminate
called after throwing an instance of 'duckdb::Exception'", e.g. on an Avro name it refuses),
which ends the process with SIGABRT. `read_all` starts one worker for the tables, takes its
results line by line, and when the worker dies, records the table it was on as that error and
starts a new worker for the tables after it.

    python readers/isolated.py READER TABLES.json    (the worker: one JSON line per table)
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def read_all(reader: str, tables: list[dict]) -> dict:
    results: dict[str, dict] = {}
    todo = list(tables)
    while todo:
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump(todo, f)
            f.flush()
            proc = subprocess.run([sys.executable, str(HERE / "isolated.py"), reader, f.name],
                                  capture_output=True, text=True)
        for line in proc.stdout.splitlines():
            msg = json.loads(line)
            results[msg["table"]] = msg["result"]
        todo = [t for t in todo if t["name"] not in results]
        if proc.returncode == 0 or not todo:
            break
        # the worker died on the first table it did not finish
        tail = " ".join(proc.stderr.strip().splitlines()[-3:])[-400:]
        results[todo[0]["name"]] = {"error": f"{reader} ended the process (exit {proc.returncode}): {tail}"}
        todo = todo[1:]
    return results


def _worker(reader: str, tables_file: str) -> None:
    sys.path.insert(0, str(HERE.parent))
    import importlib

    import table_meta
    from readers import attempt

    mod = importlib.import_module(f"readers.{reader}_reader")
    for t in json.loads(Path(tables_file).read_text()):
        result = attempt(lambda t=t: mod.read(t, table_meta.load(t["metadata"])))
        print(json.dumps({"table": t["name"], "result": result}, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    _worker(sys.argv[1], sys.argv[2])
