//! The committed fixture tables are exactly what the generator writes today (the check of
//! `cargo xtask fixtures --check`), and they are left at `/tmp/iceberg-fixtures` for the
//! interop readers.

use std::path::Path;

use iceberg_tests::fixtures::{ROOT, compare, generate};

#[tokio::test]
async fn committed_fixtures_match_the_generator() {
    let root = Path::new(ROOT);
    let n = generate::generate(root).await.unwrap();
    assert!(n >= 50, "{n} tables");
    // A second generation is byte-identical: nothing depends on time, randomness or order.
    let again = Path::new("/tmp/iceberg-fixtures-again");
    let copied = compare::replace(root, again).unwrap();
    generate::generate(root).await.unwrap();
    assert_eq!(compare::files_under(root).unwrap().len(), copied);
    for rel in compare::files_under(root).unwrap() {
        assert_eq!(
            std::fs::read(root.join(&rel)).unwrap(),
            std::fs::read(again.join(&rel)).unwrap(),
            "{} differs between two generations",
            rel.display()
        );
    }
    std::fs::remove_dir_all(again).unwrap();
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tables");
    let diffs = compare::compare(root, &committed).unwrap();
    assert!(
        diffs.is_empty(),
        "committed fixtures differ from the generator (run `cargo xtask fixtures`):\n{}",
        diffs.join("\n")
    );
}
