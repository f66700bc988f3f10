//! The Python writers of the write matrix (pyarrow and PyIceberg, `bench.py`), one process
//! per run.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::write::RunOutput;
use crate::write_one::Layout;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const SCRIPT: &str = include_str!("bench.py");

/// The python to use: `ICEBERG_TEST_PYTHON`, else `target/pyenv/bin/python`, if it imports
/// pyiceberg and pyarrow.
pub(crate) fn find_python(root: &Path) -> Option<PathBuf> {
    let candidates = std::env::var_os("ICEBERG_TEST_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain(std::iter::once(root.join("target/pyenv/bin/python")));
    candidates.into_iter().find(|p| {
        Command::new(p)
            .args(["-c", "import pyiceberg, pyarrow"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    })
}

/// `pyiceberg <version>, pyarrow <version>` of `python`.
pub(crate) fn versions(python: &Path) -> Result<(String, String), BoxError> {
    let out = Command::new(python)
        .args([
            "-c",
            "import pyiceberg, pyarrow; print(pyiceberg.__version__, pyarrow.__version__)",
        ])
        .output()?;
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let mut words = text.split_whitespace();
    Ok((
        words.next().unwrap_or("?").to_string(),
        words.next().unwrap_or("?").to_string(),
    ))
}

/// Writes `bench.py` into `work` and returns its path.
pub(crate) fn install_script(work: &Path) -> Result<PathBuf, BoxError> {
    let script = work.join("bench.py");
    std::fs::write(&script, SCRIPT)?;
    Ok(script)
}

/// One run of `writer` (`pyarrow` or `pyiceberg`) on `input` into `out`.
pub(crate) fn run_one(
    python: &Path,
    script: &Path,
    writer: &str,
    layout: Layout,
    input: &Path,
    out: &Path,
) -> Result<RunOutput, BoxError> {
    let mut cmd = Command::new(python);
    cmd.arg(script)
        .arg(writer)
        .arg(layout.name())
        .arg(input)
        .arg(out);
    RunOutput::from_command(&mut cmd)
}
