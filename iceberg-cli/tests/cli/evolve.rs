//! `append --evolve`: the table's schema takes the inputs' new columns and wider types in
//! the same commit as the rows; refused changes name the column and leave the table as it
//! was; PyIceberg reads old files with nulls for added columns and widened values.

use std::sync::Arc;

use arrow_array::{Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{Field, Schema as ArrowSchema};

use crate::{Env, fixtures, pyiceberg_read};

fn parquet(env: &Env, name: &str, columns: Vec<(&str, arrow_array::ArrayRef)>) -> String {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
        .collect();
    let batch = RecordBatch::try_new(
        Arc::new(ArrowSchema::new(fields)),
        columns.into_iter().map(|(_, a)| a).collect(),
    )
    .unwrap();
    let path = env.path(name);
    fixtures::write_parquet(&path, &[batch]);
    path.display().to_string()
}

#[test]
fn evolve_adds_columns_and_widens_in_the_commit_of_the_rows() {
    let env = Env::new();
    let a = env.write("a.csv", "id,qty\n1,5\n2,6\n");
    env.ok(&[
        "append",
        "db.t",
        a.to_str().unwrap(),
        "--create",
        "--column",
        "qty=int",
    ]);

    // Without --evolve a new column is refused, and the message says what would take it.
    let b = env.write("b.csv", "id,qty,note\n3,7,hi\n");
    let b = b.to_str().unwrap();
    let before = env.state("db.t");
    let err = env.fail(&["append", "db.t", b]);
    assert!(err.contains("`note`") && err.contains("--evolve"), "{err}");
    assert_eq!(env.state("db.t"), before, "nothing changed");

    let out = env.ok(&["append", "db.t", b, "--evolve"]);
    assert!(out.contains("added `note` (id 3)"), "{out}");
    // Text values are read into the table's type: an int column stays int...
    let c = env.write("c.csv", "id,qty\n4,8000000000\n");
    let c = c.to_str().unwrap();
    let err = env.fail(&["append", "db.t", c, "--evolve"]);
    assert!(err.contains("qty") && err.contains("8000000000"), "{err}");
    // ...unless --column asks for the wider type.
    let v = env.json(&["append", "db.t", c, "--evolve", "--column", "qty=long"]);
    assert_eq!(
        v["schema_changes"],
        serde_json::json!(["widened `qty` int -> long"])
    );
    // A typed input widens and adds with its own types.
    let d = parquet(
        &env,
        "d.parquet",
        vec![
            ("id", Arc::new(Int64Array::from(vec![5]))),
            ("score", Arc::new(Float64Array::from(vec![0.5]))),
            ("note", Arc::new(StringArray::from(vec!["pq"]))),
        ],
    );
    let out = env.ok(&["append", "db.t", &d, "--evolve"]);
    assert!(out.contains("added `score` (id 4)"), "{out}");
    // Inputs that fit change nothing.
    let v = env.json(&["append", "db.t", b, "--evolve"]);
    assert_eq!(v["schema_changes"], serde_json::json!([]));

    let schema = env.json(&["schema", "db.t"]);
    let fields: Vec<(i64, String, String, bool)> = schema["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["id"].as_i64().unwrap(),
                f["name"].as_str().unwrap().to_string(),
                f["type"].as_str().unwrap().to_string(),
                f["required"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        fields,
        [
            (1, "id".into(), "long".into(), false),
            (4, "score".into(), "double".into(), false),
            (2, "qty".into(), "long".into(), false),
            (3, "note".into(), "string".into(), false),
        ],
        "score sits where the Parquet input has it, after id"
    );
    let inspect = env.json(&["inspect", "db.t"]);
    assert_eq!(inspect["snapshots"].as_array().unwrap().len(), 5);

    if let Some(v) = pyiceberg_read(&env, "db.t") {
        assert_eq!(v["types"]["qty"], "long");
        assert_eq!(v["types"]["score"], "double");
        let rows = v["rows"].as_array().unwrap();
        let row = |id: i64| rows.iter().filter(|r| r["id"] == id).collect::<Vec<_>>();
        assert_eq!(rows.len(), 6);
        // Old files: null for the added columns, their int values read as long.
        assert_eq!(row(1)[0]["qty"], 5);
        assert!(row(1)[0]["note"].is_null() && row(1)[0]["score"].is_null());
        assert_eq!(row(3).len(), 2);
        assert!(row(3).iter().all(|r| r["note"] == "hi"));
        assert_eq!(row(4)[0]["qty"], 8_000_000_000i64);
        assert_eq!(row(5)[0]["score"], 0.5);
        assert!(row(5)[0]["qty"].is_null());
    }
}

#[test]
fn refused_evolutions_name_the_column_and_change_nothing() {
    let env = Env::new();
    let a = parquet(
        &env,
        "a.parquet",
        vec![
            ("id", Arc::new(Int64Array::from(vec![1]))),
            ("score", Arc::new(Float64Array::from(vec![1.0]))),
        ],
    );
    env.ok(&["append", "db.t", &a, "--create"]);
    let before = env.state("db.t");
    // A string for a double is no promotion.
    let bad = parquet(
        &env,
        "bad.parquet",
        vec![
            ("id", Arc::new(Int64Array::from(vec![2]))),
            ("score", Arc::new(StringArray::from(vec!["high"]))),
        ],
    );
    let err = env.fail(&["append", "db.t", &bad, "--evolve"]);
    assert!(
        err.contains("`score`") && err.contains("double") && err.contains("string"),
        "{err}"
    );
    // A narrowing through --column is refused the same way.
    let csv = env.write("n.csv", "id,score\n3,1.5\n");
    let err = env.fail(&[
        "append",
        "db.t",
        csv.to_str().unwrap(),
        "--evolve",
        "--column",
        "id=int",
        "--column",
        "score=string",
    ]);
    assert!(err.contains("`score`"), "{err}");
    // --column still only shapes new tables without --evolve.
    let err = env.fail(&[
        "append",
        "db.t",
        csv.to_str().unwrap(),
        "--column",
        "id=long",
    ]);
    assert!(err.contains("--column"), "{err}");
    assert_eq!(env.state("db.t"), before, "nothing changed");
    // A text id for the long id column.
    let text_id = fixtures::parquet_with_text_id(&env, "text_id.parquet");
    let err = env.fail(&["append", "db.t", text_id.to_str().unwrap(), "--evolve"]);
    assert!(err.contains("`id`") && err.contains("string"), "{err}");
    assert_eq!(env.state("db.t"), before, "nothing changed");
}

/// Two processes append to one table at once, one of them adding a column each round: every
/// append lands, no column is lost, and every row reads back under the final schema.
#[test]
fn evolving_and_plain_appends_race_without_losing_a_column() {
    const ROUNDS: usize = 50;
    let env = Arc::new(Env::new());
    let first = env.write("first.csv", "id,who\n0,seed\n");
    env.ok(&["append", "db.t", first.to_str().unwrap(), "--create"]);
    let evolving = {
        let env = env.clone();
        std::thread::spawn(move || {
            for r in 0..ROUNDS {
                let path = env.write(
                    &format!("e{r}.csv"),
                    &format!("id,who,c{r}\n{},evolve,{r}\n", 1000 + r),
                );
                env.ok(&["append", "db.t", path.to_str().unwrap(), "--evolve"]);
            }
        })
    };
    let plain = {
        let env = env.clone();
        std::thread::spawn(move || {
            for r in 0..ROUNDS {
                let path = env.write(
                    &format!("p{r}.csv"),
                    &format!("id,who\n{},plain\n", 2000 + r),
                );
                env.ok(&["append", "db.t", path.to_str().unwrap()]);
            }
        })
    };
    evolving.join().unwrap();
    plain.join().unwrap();
    let schema = env.json(&["schema", "db.t"]);
    let names: Vec<&str> = schema["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    for r in 0..ROUNDS {
        assert!(
            names.contains(&format!("c{r}").as_str()),
            "c{r} lost: {names:?}"
        );
    }
    assert_eq!(crate::total_records(&env, "db.t"), 1 + 2 * ROUNDS as i64);
    if let Some(v) = pyiceberg_read(&env, "db.t") {
        let rows = v["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 1 + 2 * ROUNDS);
        for r in 0..ROUNDS {
            let row = rows.iter().find(|x| x["id"] == 1000 + r as i64).unwrap();
            assert_eq!(row[format!("c{r}")], r as i64, "{row}");
            assert_eq!(row["who"], "evolve");
        }
    }
}
