//! `make-fixtures write|check`: regenerates the golden fixture tables at
//! `/tmp/iceberg-fixtures` and either copies them to `tests/fixtures/tables/` (`write`) or
//! fails when the committed copy differs (`check`). `cargo xtask fixtures [--check]` runs it.

use std::path::Path;
use std::process::ExitCode;

use iceberg_tests::fixtures::{ROOT, compare, generate};

fn committed() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join("tables")
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let root = Path::new(ROOT);
    let result = async {
        let n = generate::generate(root).await?;
        match mode.as_str() {
            "write" => {
                let files = compare::replace(root, &committed())?;
                println!(
                    "wrote {n} tables ({files} files) to {}",
                    committed().display()
                );
                Ok(true)
            }
            "check" => {
                let diffs = compare::compare(root, &committed())?;
                for d in &diffs {
                    eprintln!("{d}");
                }
                if diffs.is_empty() {
                    println!("the {n} committed fixture tables match the generator");
                } else {
                    eprintln!(
                        "{} differences: run `cargo xtask fixtures` and commit the result",
                        diffs.len()
                    );
                }
                Ok(diffs.is_empty())
            }
            _ => Err("usage: make-fixtures write|check".into()),
        }
    }
    .await;
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            let e: iceberg_tests::fixtures::BoxError = e;
            eprintln!("make-fixtures: {e}");
            ExitCode::FAILURE
        }
    }
}
