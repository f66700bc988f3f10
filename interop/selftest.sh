#!/usr/bin/env bash
# End-to-end check of the interop tools on tables written by PyIceberg (and, with JAVA_TABLES=1,
# by Iceberg Java through Spark), with the Java reader's result standing in for "expected".
#
#   interop/selftest.sh VENV_DIR CACHE_DIR OUT_DIR [READERS]
#
# Writes OUT_DIR/{pyiceberg,java}-tables/, OUT_DIR/results-*/<reader>.json and matrix-*.md.
# Exits non-zero only when a reader fails to start; mismatches are reported, not fatal.
set -euo pipefail
VENV=${1:?usage: selftest.sh VENV_DIR CACHE_DIR OUT_DIR [READERS]}
CACHE=${2:?}
OUT=${3:?}
READERS=${4:-java,pyiceberg,duckdb}
HERE=$(cd "$(dirname "$0")" && pwd)
PY=$VENV/bin/python

"$HERE/setup.sh" "$VENV" "$CACHE"
"$PY" "$HERE/make_pyiceberg_tables.py" "$OUT/pyiceberg-tables"
sets=(pyiceberg)
if [[ ${JAVA_TABLES:-0} == 1 ]]; then
  "$PY" "$HERE/make_java_tables.py" "$OUT/java-tables" --cache "$CACHE"
  sets+=(java)
fi
for s in "${sets[@]}"; do
  "$PY" "$HERE/read_tables.py" "$OUT/$s-tables/spec.json" --out "$OUT/results-$s" --readers "$READERS" --cache "$CACHE"
  results=()
  for r in ${READERS//,/ }; do results+=("$OUT/results-$s/$r.json"); done
  echo "## Tables written by $s, compared with the Java reader"
  "$PY" "$HERE/compare.py" --spec "$OUT/$s-tables/spec.json" --expected "$OUT/results-$s/java.json" \
    "${results[@]}" --markdown "$OUT/matrix-$s.md" || true
done
# a reader that could not start at all is an error of the setup, not of a table
"$PY" - "$OUT"/results-*/*.json <<'PY'
import json, sys
bad = [p for p in sys.argv[1:] if "error" in json.load(open(p))]
sys.exit(f"readers that could not start: {bad}" if bad else 0)
PY
