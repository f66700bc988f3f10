//! Settings from PyIceberg's configuration, so one file configures both tools: the
//! `catalog:` section of `.pyiceberg.yaml` (in `$PYICEBERG_HOME`, the home folder, or the
//! current folder: the first found, as PyIceberg looks) and `PYICEBERG_CATALOG__<NAME>__<KEY>`
//! environment variables (`__` within a key is `.`, `_` is `-`, as PyIceberg reads them),
//! which win over the file. The command line wins over both.
//!
//! Of a catalog's keys: `uri` is `--catalog` (SQLAlchemy's forms: `postgresql+psycopg2://`,
//! `sqlite:////abs/path`, and `sqlite:///rel/path` in the current folder); `warehouse` is `--warehouse` (a REST catalog's
//! `warehouse` property); `s3.*`, `gcs.*`, `adls.*` and `client.*` are file IO settings; a
//! REST catalog's `token`, `credential`, `scope`, `oauth2-server-uri`, `prefix`, `audience`,
//! `resource` and `header.*` are catalog properties. `type` must be `sql` or `rest` when
//! given; PyIceberg's own keys (`py-io-impl`, `echo`, ...) are left to it. A SQL catalog's
//! rows are those of the catalog's name, as PyIceberg's `SqlCatalog(name, ...)` keeps them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use yaml_rust2::{Yaml, YamlLoader};

use crate::cli::Cli;
use crate::error::{Error, Result};

/// The configuration file PyIceberg reads.
const FILE: &str = ".pyiceberg.yaml";

/// One catalog's settings, keys lowercased.
pub(crate) type CatalogConfig = BTreeMap<String, String>;

/// Where the environment says to look: `PYICEBERG_HOME`, the home folder, the current one.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sources {
    /// `(name, value)` of the environment.
    pub(crate) vars: Vec<(String, String)>,
    /// Folders searched for the file, in order.
    pub(crate) dirs: Vec<PathBuf>,
}

impl Sources {
    /// This process's environment and folders.
    pub(crate) fn from_process() -> Self {
        let vars: Vec<(String, String)> = std::env::vars().collect();
        let get = |k: &str| {
            vars.iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| PathBuf::from(v))
        };
        let dirs = [
            get("PYICEBERG_HOME"),
            get("HOME"),
            std::env::current_dir().ok(),
        ]
        .into_iter()
        .flatten()
        .collect();
        Self { vars, dirs }
    }
}

/// The file's `catalog:` entries and `default-catalog`, merged with the environment's.
///
/// # Errors
/// A file that is not YAML or not shaped as PyIceberg's.
pub(crate) fn catalogs(
    sources: &Sources,
) -> Result<(BTreeMap<String, CatalogConfig>, Option<String>)> {
    let mut catalogs: BTreeMap<String, CatalogConfig> = BTreeMap::new();
    let mut default = None;
    if let Some(path) = sources
        .dirs
        .iter()
        .map(|d| d.join(FILE))
        .find(|p| p.is_file())
    {
        let (file_catalogs, file_default) = read_file(&path)?;
        catalogs = file_catalogs;
        default = file_default;
    }
    for (name, value) in &sources.vars {
        let lower = name.to_ascii_lowercase();
        let Some(rest) = lower.strip_prefix("pyiceberg_") else {
            continue;
        };
        let parts: Vec<String> = rest
            .splitn(3, "__")
            .map(|p| p.replace("__", ".").replace('_', "-"))
            .collect();
        match parts.as_slice() {
            [section, catalog, key] if section == "catalog" => {
                catalogs
                    .entry(catalog.clone())
                    .or_default()
                    .insert(key.clone(), value.clone());
            }
            [key] if key == "default-catalog" => default = Some(value.clone()),
            _ => {}
        }
    }
    Ok((catalogs, default))
}

fn read_file(path: &Path) -> Result<(BTreeMap<String, CatalogConfig>, Option<String>)> {
    let bad = |why: String| Error::Usage(format!("{}: {why}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| bad(format!("cannot read: {e}")))?;
    let docs = YamlLoader::load_from_str(&text).map_err(|e| bad(format!("not YAML: {e}")))?;
    let Some(root) = docs.first() else {
        return Ok((BTreeMap::new(), None));
    };
    let Yaml::Hash(root) = root else {
        return Err(bad("expected a mapping at the top".into()));
    };
    let mut catalogs = BTreeMap::new();
    let mut default = None;
    for (k, v) in root {
        match scalar(k).map(|k| k.to_ascii_lowercase()).as_deref() {
            Some("catalog") => {
                let Yaml::Hash(entries) = v else {
                    return Err(bad(
                        "`catalog:` must map catalog names to their settings".into()
                    ));
                };
                for (name, settings) in entries {
                    let name = scalar(name)
                        .ok_or_else(|| bad("a catalog name must be text".into()))?
                        .to_ascii_lowercase();
                    let Yaml::Hash(settings) = settings else {
                        return Err(bad(format!("catalog `{name}` must map keys to values")));
                    };
                    let mut config = CatalogConfig::new();
                    for (key, value) in settings {
                        let (Some(key), Some(value)) = (scalar(key), scalar(value)) else {
                            return Err(bad(format!(
                                "catalog `{name}`: keys and values must be text"
                            )));
                        };
                        config.insert(key.to_ascii_lowercase(), value);
                    }
                    catalogs.insert(name, config);
                }
            }
            Some("default-catalog") => default = scalar(v),
            _ => {}
        }
    }
    Ok((catalogs, default))
}

fn scalar(y: &Yaml) -> Option<String> {
    match y {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A catalog `uri` as `--catalog` takes it.
fn catalog_uri(uri: &str) -> String {
    // SQLAlchemy names a driver after the dialect: `postgresql+psycopg2://`.
    if let Some((scheme, rest)) = uri.split_once("://")
        && let Some((dialect, _driver)) = scheme.split_once('+')
    {
        return format!("{dialect}://{rest}");
    }
    uri.to_string()
}

const IO_PREFIXES: [&str; 4] = ["s3.", "gcs.", "adls.", "client."];
const REST_KEYS: [&str; 7] = [
    "token",
    "credential",
    "scope",
    "oauth2-server-uri",
    "prefix",
    "audience",
    "resource",
];

/// Fills what the command line left unset in `cli` from the catalog `--catalog-name` (or
/// the configured default) names.
///
/// # Errors
/// A bad file, a `--catalog-name` that is not configured, or a catalog type this tool cannot
/// open.
pub(crate) fn apply(cli: &mut Cli, sources: &Sources) -> Result<()> {
    let (catalogs, default) = catalogs(sources)?;
    // Looked up in any case, kept as given: PyIceberg's `load_catalog` lowercases the name to
    // find its settings but builds `SqlCatalog` (whose rows carry the name) with it as given.
    let given = cli
        .catalog_name
        .clone()
        .or(default)
        .unwrap_or_else(|| "default".into());
    let name = given.to_ascii_lowercase();
    let Some(config) = catalogs.get(&name) else {
        // With `--catalog` given, `--catalog-name` only names the SQL catalog's rows.
        if let Some(asked) = cli.catalog_name.as_ref().filter(|_| cli.catalog.is_none()) {
            let known: Vec<&str> = catalogs.keys().map(String::as_str).collect();
            return Err(Error::Usage(format!(
                "--catalog-name {asked}: no such catalog in {FILE} or PYICEBERG_CATALOG__* \
                 variables (configured: {})",
                if known.is_empty() {
                    "none".into()
                } else {
                    known.join(", ")
                }
            )));
        }
        return Ok(());
    };
    // PyIceberg lowercases the type (`CatalogType(type.lower())`): `REST` is `rest`.
    if let Some(kind) = config.get("type")
        && !matches!(kind.to_ascii_lowercase().as_str(), "sql" | "rest")
    {
        return Err(Error::Usage(format!(
            "catalog `{name}` is of type `{kind}`; this tool opens `sql` and `rest` catalogs"
        )));
    }
    if cli.catalog.is_none() {
        cli.catalog = config.get("uri").map(|u| catalog_uri(u));
    }
    // PyIceberg's SQL catalog keys its rows by the catalog's name: use the same rows.
    cli.catalog_name = Some(given);
    let rest = cli
        .catalog
        .as_deref()
        .is_some_and(|u| u.starts_with("http://") || u.starts_with("https://"));
    // Given on the command line, a key keeps its value: those come last and win.
    let mut io: Vec<(String, String)> = Vec::new();
    let mut props: Vec<(String, String)> = Vec::new();
    for (key, value) in config {
        let pair = (key.clone(), value.clone());
        if IO_PREFIXES.iter().any(|p| key.starts_with(p)) {
            io.push(pair);
        } else if rest && (REST_KEYS.contains(&key.as_str()) || key.starts_with("header.")) {
            props.push(pair);
        } else if key == "warehouse" {
            if rest {
                props.push(pair);
            } else if cli.warehouse.is_none() {
                cli.warehouse = Some(value.clone());
            }
        }
    }
    io.append(&mut cli.io_properties);
    cli.io_properties = io;
    props.append(&mut cli.catalog_properties);
    cli.catalog_properties = props;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use clap::Parser;

    use super::*;

    fn cli(args: &[&str]) -> Cli {
        let mut all = vec!["iceberg"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["log", "db.t"]);
        Cli::parse_from(all)
    }

    fn sources(dir: &Path, vars: &[(&str, &str)]) -> Sources {
        Sources {
            vars: vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            dirs: vec![dir.to_path_buf()],
        }
    }

    #[test]
    fn the_file_and_the_environment_as_pyiceberg_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(FILE),
            "default-catalog: lake\ncatalog:\n  lake:\n    uri: postgresql+psycopg2://u@h/db\n    \
             warehouse: s3://bucket/wh\n    s3.endpoint: http://localhost:9000\n    py-io-impl: x\n  \
             Rest:\n    type: REST\n    uri: http://localhost:8181\n    warehouse: main\n    token: t\n",
        )
        .unwrap();
        let env = [
            ("PYICEBERG_CATALOG__LAKE__S3__ACCESS_KEY_ID", "AK"),
            ("OTHER", "x"),
        ];
        let mut c = cli(&[]);
        apply(&mut c, &sources(dir.path(), &env)).unwrap();
        assert_eq!(c.catalog.as_deref(), Some("postgresql://u@h/db"));
        assert_eq!(c.warehouse.as_deref(), Some("s3://bucket/wh"));
        let io: BTreeMap<_, _> = c.io_properties.iter().cloned().collect();
        assert_eq!(
            io.get("s3.endpoint").map(String::as_str),
            Some("http://localhost:9000")
        );
        assert_eq!(io.get("s3.access-key-id").map(String::as_str), Some("AK"));
        assert!(!io.contains_key("py-io-impl"));
        assert!(c.catalog_properties.is_empty(), "not a REST catalog");

        // The command line wins; names are case-insensitive as in PyIceberg.
        let mut c = cli(&[
            "--catalog-name",
            "REST",
            "--catalog-property",
            "token=cli",
            "--warehouse",
            "here",
        ]);
        apply(&mut c, &sources(dir.path(), &[])).unwrap();
        assert_eq!(c.catalog.as_deref(), Some("http://localhost:8181"));
        // The SQL rows' catalog name stays as given, as PyIceberg's `SqlCatalog` gets it.
        assert_eq!(c.catalog_name.as_deref(), Some("REST"));
        assert_eq!(c.warehouse.as_deref(), Some("here"));
        let props: BTreeMap<_, _> = c.catalog_properties.iter().cloned().collect();
        assert_eq!(props.get("token").map(String::as_str), Some("cli"));
        assert_eq!(props.get("warehouse").map(String::as_str), Some("main"));

        let mut c = cli(&["--catalog-name", "nope"]);
        let e = apply(&mut c, &sources(dir.path(), &[]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("nope") && e.contains("lake, rest"), "{e}");
    }

    #[test]
    fn no_configuration_changes_nothing_and_bad_ones_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = cli(&[]);
        apply(&mut c, &sources(dir.path(), &[])).unwrap();
        assert!(c.catalog.is_none() && c.warehouse.is_none());
        std::fs::write(
            dir.path().join(FILE),
            "catalog:\n  default:\n    type: glue\n",
        )
        .unwrap();
        let e = apply(&mut cli(&[]), &sources(dir.path(), &[]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("glue"), "{e}");
        std::fs::write(dir.path().join(FILE), "catalog: [1, 2]\n").unwrap();
        let e = apply(&mut cli(&[]), &sources(dir.path(), &[]))
            .unwrap_err()
            .to_string();
        assert!(e.contains(".pyiceberg.yaml"), "{e}");
    }
}
