//! The binary through a REST catalog (a rustberg server): `--catalog http://...` with
//! `--catalog-property`, as a user whose tables live behind Polaris or Unity runs it.

use iceberg_catalog::testing::{Fault, FaultProxy, RestServer};

use crate::Env;

#[test]
fn append_and_read_back_through_a_rest_catalog() {
    let env = Env::new();
    let wh = env.path("server-warehouse");
    std::fs::create_dir_all(&wh).unwrap();
    let Some(server) = RestServer::start(
        "append_and_read_back_through_a_rest_catalog",
        &format!("file://{}", wh.display()),
        None,
    ) else {
        return;
    };
    let rest = ["--catalog", server.uri.as_str()];
    let with =
        |args: &[&str]| -> Vec<String> { rest.iter().chain(args).map(|s| s.to_string()).collect() };
    let json = |args: &[&str]| {
        let all = with(args);
        env.json(&all.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let first = env.write("a.csv", "id,category\n1,x\n2,y\n3,x\n");
    let second = env.write("b.csv", "id,category\n4,z\n5,x\n");
    // A header the server ignores: `header.*` properties travel as HTTP headers.
    json(&[
        "--catalog-property",
        "header.X-Client=iceberg-cli-test",
        "append",
        "db.events",
        first.to_str().unwrap(),
        "--create",
        "--partition",
        "category",
    ]);
    json(&["append", "db.events", second.to_str().unwrap()]);
    let log = json(&["log", "db.events"]);
    let snapshots = log["snapshots"].as_array().unwrap();
    assert_eq!(snapshots.len(), 2, "{log}");
    let current = snapshots.iter().find(|s| s["current"] == true).unwrap();
    assert_eq!(current["total_records"], 5, "{log}");
    // The server chose the location, in its warehouse; nothing went to `--warehouse`.
    let inspect = json(&["inspect", "db.events", "--files"]);
    let location = inspect["metadata_location"].as_str().unwrap();
    assert!(
        location.starts_with(&format!("file://{}/db/events/metadata/", wh.display())),
        "{location}"
    );
    assert!(
        !env.warehouse().exists(),
        "the local default warehouse was made"
    );

    // A failed `append --create` leaves no table behind the server either (staged create).
    let bad = crate::fixtures::parquet_with_text_id(&env, "bad.parquet");
    let out = env.run(
        &with(&[
            "append",
            "db.staged",
            first.to_str().unwrap(),
            bad.to_str().unwrap(),
            "--create",
        ])
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>(),
    );
    assert!(!out.status.success(), "{out:?}");
    let out = env.run(
        &with(&["inspect", "db.staged"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(out.status.code(), Some(4), "{out:?}");

    // An unknown table is the CLI's table error (exit 4), naming it.
    let out = env.run(
        &with(&["inspect", "db.nope"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("db.nope"),
        "{out:?}"
    );
}

#[test]
fn catalog_properties_without_a_rest_catalog_are_refused() {
    let env = Env::new();
    let out = env.run(&["--catalog-property", "token=t", "log", "db.events"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--catalog-property token"), "{stderr}");
}

/// `add-files --create` whose commit's outcome the catalog cannot tell (every commit request
/// answered 503, so the client cannot know whether one landed) keeps the table it created:
/// the files may be in it. Exit 5, and nothing claims the table unchanged.
#[test]
fn an_unknown_add_files_outcome_keeps_the_table_it_created() {
    let env = Env::new();
    let wh = env.path("server-warehouse");
    std::fs::create_dir_all(&wh).unwrap();
    let Some(server) = RestServer::start(
        "an_unknown_add_files_outcome_keeps_the_table_it_created",
        &format!("file://{}", wh.display()),
        None,
    ) else {
        return;
    };
    let proxy = FaultProxy::start(&server.uri);
    proxy.inject("POST", "/namespaces/db/tables/t", Fault::Unavailable, 1000);
    let file = crate::fixtures::parquet(&env, "a.parquet", &[1, 2, 3]);
    let run = |uri: &str, args: &[&str]| {
        let all: Vec<&str> = ["--catalog", uri].iter().chain(args).copied().collect();
        env.run(&all)
    };
    let out = run(
        &proxy.uri,
        &[
            "add-files",
            "db.t",
            file.to_str().unwrap(),
            "--create",
            "--table-property",
            "commit.retry.num-retries=1",
            "--table-property",
            "commit.retry.min-wait-ms=1",
        ],
    );
    assert_eq!(out.status.code(), Some(5), "{out:?}\n{:#?}", proxy.log());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("unchanged"), "{stderr}");
    let kept = run(&server.uri, &["inspect", "db.t"]);
    assert!(kept.status.success(), "the table was dropped: {kept:?}");
}
