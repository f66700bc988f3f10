#!/usr/bin/env bash
# Installs the external Iceberg readers of the interop matrix, offline-registry only.
#
#   interop/setup.sh VENV_DIR CACHE_DIR        (INTEROP_EXTRAS=1 adds chDB and Polars)
#
# - VENV_DIR: a Python venv with requirements.txt (the xtask pins plus pyspark, the Iceberg
#   runtime jar wheel and DuckDB with its extension wheels); target/pyenv can be shared.
# - CACHE_DIR/java: Jackson 2.15.2 relocated to org.apache.iceberg.shaded.com.fasterxml with
#   Debian's jarjar (the runtime jar lacks its shaded Jackson), the compiled InteropReader and
#   classpath.txt for readers/java_reader.py.
# Idempotent: stamp files skip finished steps.
set -euo pipefail

VENV=$(realpath -m "${1:?usage: setup.sh VENV_DIR CACHE_DIR}")
CACHE=$(realpath -m "${2:?usage: setup.sh VENV_DIR CACHE_DIR}")
HERE=$(cd "$(dirname "$0")" && pwd)
PYTHON=${PYTHON:-python3}
JACKSON=2.15.2
RUNTIME_JAR=iceberg-spark-runtime-3.5_2.12-1.10.2.jar
mkdir -p "$CACHE/java"
step() { echo "setup.sh: $* (${SECONDS}s)" >&2; }

# 1. Python packages
wanted=$(cat "$HERE/requirements.txt")
if [[ ${INTEROP_EXTRAS:-0} == 1 ]]; then wanted+=$'\n'$(cat "$HERE/requirements-extra.txt"); fi
stamp="$VENV/interop-requirements.txt"
if [[ -x $VENV/bin/python && -f $stamp && $(cat "$stamp") == "$wanted" ]]; then
  step "venv up to date"
else
  step "installing Python packages into $VENV"
  [[ -x $VENV/bin/python ]] || "$PYTHON" -m venv "$VENV"
  reqs=(-r "$HERE/requirements.txt")
  [[ ${INTEROP_EXTRAS:-0} == 1 ]] && reqs+=(-r "$HERE/requirements-extra.txt")
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${reqs[@]}"
  printf '%s' "$wanted" > "$stamp"
fi
SITE=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
SPARK_JARS=$SITE/pyspark/jars
RUNTIME=$SITE/snowpark_connect_deps_iceberg/jars/$RUNTIME_JAR

# 2. Jackson relocated for the Iceberg runtime jar
shaded=("$CACHE"/java/shaded-jackson-{core,databind,annotations}-$JACKSON.jar)
if [[ -f ${shaded[0]} && -f ${shaded[1]} && -f ${shaded[2]} ]]; then
  step "relocated Jackson present"
else
  JARJAR=/usr/share/java/jarjar.jar
  if [[ ! -f $JARJAR ]]; then
    step "fetching Debian's jarjar and asm (apt-get download, unpacked with dpkg -x)"
    mkdir -p "$CACHE/deb" && chmod 777 "$CACHE/deb"  # apt's _apt user writes there
    (cd "$CACHE/deb" && { apt-get download -qq libjarjar-java libasm-java 2>/dev/null \
      || { apt-get update -qq && apt-get download -qq libjarjar-java libasm-java; }; })
    for deb in "$CACHE"/deb/*.deb; do dpkg -x "$deb" "$CACHE/deb/root"; done
    JARJAR=$CACHE/deb/root/usr/share/java/jarjar.jar
  fi
  step "relocating Jackson $JACKSON"
  echo "rule com.fasterxml.** org.apache.iceberg.shaded.com.fasterxml.@1" > "$CACHE/java/jarjar-rules.txt"
  for part in core databind annotations; do
    src=$SPARK_JARS/jackson-$part-$JACKSON.jar
    # jarjar maps META-INF/versions/N/com/... onto the same names: drop the multi-release copies
    "$VENV/bin/python" - "$src" "$CACHE/java/plain-$part.jar" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as zi, zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED) as zo:
    for info in zi.infolist():
        if not info.filename.startswith("META-INF/versions/"):
            zo.writestr(info, zi.read(info))
PY
    java -jar "$JARJAR" process "$CACHE/java/jarjar-rules.txt" "$CACHE/java/plain-$part.jar" \
      "$CACHE/java/shaded-jackson-$part-$JACKSON.jar"
    rm "$CACHE/java/plain-$part.jar"
  done
fi

# 3. The Java reader
CLASSPATH_JARS="$RUNTIME:$(IFS=:; echo "${shaded[*]}"):$SPARK_JARS/*"
src_sum=$(cat "$HERE/java/InteropReader.java" <(echo "$CLASSPATH_JARS") | sha256sum | cut -c1-16)
if [[ -f $CACHE/java/classes/InteropReader.class && $(cat "$CACHE/java/classes.stamp" 2>/dev/null) == "$src_sum" ]]; then
  step "Java reader up to date"
else
  step "compiling InteropReader.java"
  rm -rf "$CACHE/java/classes" && mkdir -p "$CACHE/java/classes"
  javac -nowarn -d "$CACHE/java/classes" -cp "$CLASSPATH_JARS" "$HERE/java/InteropReader.java"
  echo "$src_sum" > "$CACHE/java/classes.stamp"
fi
echo "$CLASSPATH_JARS" > "$CACHE/java/classpath.txt"
step "done"
