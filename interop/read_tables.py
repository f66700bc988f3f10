"""Reads Iceberg tables with external readers and writes canonical results (FORMAT.md).

    python read_tables.py SPEC.json [SPEC2.json …] --out DIR [--readers java,pyiceberg,iceberg_rust,duckdb,chdb,polars]
                          [--cache CACHE_DIR]

writes DIR/<reader>.json for each reader. Compare them with an expected result with compare.py.
"""

import argparse
import importlib
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import table_meta  # noqa: E402
from readers import READERS, attempt  # noqa: E402

DEFAULT_READERS = "java,pyiceberg,iceberg_rust,duckdb"


def run_reader(name: str, tables: list[dict], metas: dict, cache: Path) -> dict:
    started = time.monotonic()
    try:
        mod = importlib.import_module(f"readers.{name}_reader")
        result = {"reader": name, "version": mod.version()}
        if getattr(mod, "BOUNDS_FROM_DATA", False):  # compare.py checks these with data_check
            result["bounds_from_data"] = True
        if hasattr(mod, "read_all"):
            result["tables"] = mod.read_all(tables, metas, cache)
        else:
            result["tables"] = {t["name"]: attempt(lambda t=t: mod.read(t, metas[t["name"]]))
                                for t in tables}
    except Exception as e:  # noqa: BLE001 - a reader that cannot start is a result too
        result = {"reader": name, "error": f"{type(e).__name__}: {e}"[:2000]}
    result["seconds"] = round(time.monotonic() - started, 2)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("spec", type=Path, nargs="+")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--readers", default=DEFAULT_READERS)
    ap.add_argument("--cache", type=Path, default=Path(__file__).resolve().parent.parent / "target" / "interop-cache",
                    help="setup.sh's cache dir (Java reader classes and jars)")
    args = ap.parse_args()
    tables = [t for p in args.spec for t in json.loads(p.read_text())["tables"]]
    metas = {t["name"]: table_meta.load(t["metadata"]) for t in tables}
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.readers.split(","):
        if name not in READERS:
            sys.exit(f"unknown reader {name!r}; known: {', '.join(READERS)}")
        result = run_reader(name, tables, metas, args.cache.resolve())
        (args.out / f"{name}.json").write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
        status = result.get("error") or f"{len(result['tables'])} tables"
        print(f"{name}: {status} ({result['seconds']} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
