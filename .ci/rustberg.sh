# The REST catalog tests' server: rustberg 0.3.0 from crates.io, installed outside the
# checkout, with its S3 storage, so the tests run it on a `file://` and on a moto warehouse.
# A debug build without debug info: 6m50s on 2 idle cores, a 100 MB binary (the release
# profile's LTO takes ~23 minutes). Sourced by .ci/run.
RUSTBERG_VERSION=0.3.0
RUSTBERG_ROOT="${ICEBERG_CI_CACHE:-$HOME/.cache/iceberg-ci}/rustberg-$RUSTBERG_VERSION-s3"
RUSTBERG_BIN="$RUSTBERG_ROOT/bin/rustberg"

# Installs rustberg unless it is there; idempotent.
install_rustberg() {
  if [ -x "$RUSTBERG_BIN" ]; then
    echo "rustberg: $RUSTBERG_BIN is installed"
    return 0
  fi
  mkdir -p "$RUSTBERG_ROOT"
  # Its own target folder, outside the checkout, and at low priority: the workspace build
  # in front of it is what CI waits on. No debug info: it would make the build folder and
  # binary several times larger (570 MB with it) and the link slower.
  CARGO_TARGET_DIR="$RUSTBERG_ROOT/build" CARGO_PROFILE_DEV_DEBUG=0 nice -n 10 cargo install rustberg \
    --version "$RUSTBERG_VERSION" --locked --no-default-features --features cli,storage-s3 \
    --debug --root "$RUSTBERG_ROOT"
  rm -rf "$RUSTBERG_ROOT/build"
}
