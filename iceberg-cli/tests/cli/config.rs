//! One `.pyiceberg.yaml` configures both tools: the binary finds its catalog, warehouse and
//! file IO settings there (and in `PYICEBERG_CATALOG__*` variables), and PyIceberg, given
//! the same file, reads what it wrote.

use std::process::Command;

use crate::Env;

#[test]
fn the_pyiceberg_configuration_names_the_catalog_for_both_tools() {
    let env = Env::new();
    let lake = env.path("lake");
    std::fs::create_dir_all(&lake).unwrap();
    env.write(
        ".pyiceberg.yaml",
        &format!(
            "default-catalog: lake\ncatalog:\n  lake:\n    type: sql\n    uri: sqlite:///{0}/catalog.db\n    \
             warehouse: file://{0}\n",
            lake.display()
        ),
    );
    let csv = env.write("a.csv", "id,name\n1,a\n2,b\n");
    let out = env
        .command()
        .args(["--json", "append", "db.t"])
        .arg(&csv)
        .arg("--create")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(lake.join("catalog.db").is_file(), "the configured catalog");
    assert!(
        lake.join("db").join("t").join("metadata").is_dir(),
        "the configured warehouse"
    );
    assert!(!env.warehouse().exists(), "not the default one");

    // A variable wins over the file; a name nobody configured is refused.
    let other = env.path("other");
    let out = env
        .command()
        .env(
            "PYICEBERG_CATALOG__LAKE__WAREHOUSE",
            format!("file://{}", other.display()),
        )
        .args(["append", "db.u"])
        .arg(&csv)
        .arg("--create")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(other.join("db").join("u").is_dir());
    let out = env
        .command()
        .args(["--catalog-name", "sea", "list"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("sea") && err.contains("lake"), "{err}");

    let Some(python) = crate::python("PyIceberg's half of the shared configuration") else {
        return;
    };
    let rows = crate::run_python(
        Command::new(python)
            .env("PYICEBERG_HOME", env.dir.path())
            .arg("-c")
            .arg(
                "from pyiceberg.catalog import load_catalog\n\
                 t = load_catalog('lake').load_table('db.t')\n\
                 print(t.scan().to_arrow().num_rows)",
            ),
    );
    assert_eq!(rows, 2);
}
