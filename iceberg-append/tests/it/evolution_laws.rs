//! A property of evolution: random sequences of schema changes (columns added, renamed,
//! dropped, widened) interleaved with appends of matching data; reading every live data file
//! by field id under the final schema gives exactly the rows appended, projected onto it,
//! with nulls where a column did not exist yet.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;

use iceberg_append::manifest::decode_manifest;
use iceberg_append::{
    Catalog, DeterministicEnvironment, InMemoryCatalog, TableCreation, TableIdent, TableUpdate,
    commit_append, commit_table_update, read_manifest_list,
};
use iceberg_io::FileIo;
use iceberg_spec::evolution::UpdateSchema;
use iceberg_spec::{ManifestStatus, NestedField, PrimitiveType as P, Schema};
use iceberg_write::arrow_array::cast::AsArray;
use iceberg_write::arrow_array::types::{Int32Type, Int64Type};
use iceberg_write::arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use iceberg_write::arrow_schema::DataType;
use iceberg_write::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Step {
    Add(bool),
    Rename(usize),
    Drop(usize),
    Widen(usize),
    Append(u8),
}

fn arb_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        any::<bool>().prop_map(Step::Add),
        any::<usize>().prop_map(Step::Rename),
        any::<usize>().prop_map(Step::Drop),
        any::<usize>().prop_map(Step::Widen),
        (1u8..5).prop_map(Step::Append),
    ]
}

#[derive(Debug, Clone, PartialEq)]
enum Value {
    Int(i64),
    Text(String),
}

/// A column of the model: its id, name, type and one value per row appended so far.
#[derive(Debug, Clone)]
struct Col {
    id: i32,
    name: String,
    ty: P,
    values: Vec<Option<Value>>,
}

fn value(ty: &P, row: usize, id: i32) -> Option<Value> {
    if (row + id as usize).is_multiple_of(4) {
        return None;
    }
    Some(match ty {
        P::String => Value::Text(format!("s{row}_{id}")),
        _ => Value::Int(row as i64 * 7 + i64::from(id)),
    })
}

async fn run(steps: Vec<Step>) {
    let env = Arc::new(DeterministicEnvironment::new(1_700_000_000_000, 3, 7));
    let catalog = InMemoryCatalog::new(FileIo::memory(), env.clone());
    let ident = TableIdent::parse("db.t").unwrap();
    let schema = Schema::new(0, vec![NestedField::required(1, "id", P::Long)]).unwrap();
    catalog
        .create_table(&ident, TableCreation::new("memory://wh/db/t", schema))
        .await
        .unwrap();
    let mut cols = vec![Col {
        id: 1,
        name: "id".into(),
        ty: P::Long,
        values: Vec::new(),
    }];
    let mut rows = 0usize;
    let mut counter = 0;
    for step in steps {
        let table = catalog.load_table(&ident).await.unwrap();
        let meta = &table.metadata;
        let mut update = UpdateSchema::new(meta.current_schema().unwrap(), meta.last_column_id);
        let others = cols.len() - 1;
        counter += 1;
        match step {
            Step::Add(text) => {
                let name = format!("c{counter}");
                let ty = if text { P::String } else { P::Int };
                update
                    .add_column(None, &name, ty.clone().into(), None)
                    .unwrap();
                let id = update.changes().iter().find_map(|c| match c {
                    iceberg_spec::evolution::SchemaChange::Added { id, .. } => Some(*id),
                    _ => None,
                });
                cols.push(Col {
                    id: id.unwrap(),
                    name,
                    ty,
                    values: vec![None; rows],
                });
            }
            Step::Rename(i) if others > 0 => {
                let col = &mut cols[1 + i % others];
                let new = format!("r{counter}");
                update.rename_column(&col.name, &new).unwrap();
                col.name = new;
            }
            Step::Drop(i) if others > 0 => {
                let col = cols.remove(1 + i % others);
                update.delete_column(&col.name).unwrap();
            }
            Step::Widen(i) if others > 0 => {
                let col = &mut cols[1 + i % others];
                if col.ty != P::Int {
                    continue;
                }
                update.widen_column(&col.name, P::Long).unwrap();
                col.ty = P::Long;
            }
            Step::Append(n) => {
                let schema = meta.current_schema().unwrap();
                let n = usize::from(n);
                let arrays: Vec<ArrayRef> =
                    cols.iter_mut()
                        .map(|c| {
                            let new: Vec<Option<Value>> = (rows..rows + n)
                                .map(|r| {
                                    if c.id == 1 {
                                        Some(Value::Int(r as i64))
                                    } else {
                                        value(&c.ty, r, c.id)
                                    }
                                })
                                .collect();
                            c.values.extend(new.iter().cloned());
                            let ints = || {
                                new.iter().map(|v| match v {
                                    Some(Value::Int(x)) => Some(*x),
                                    _ => None,
                                })
                            };
                            match c.ty {
                                P::Int => Arc::new(Int32Array::from_iter(
                                    ints().map(|x| x.map(|x| x as i32)),
                                )) as ArrayRef,
                                P::Long => Arc::new(Int64Array::from_iter(ints())) as ArrayRef,
                                _ => Arc::new(StringArray::from_iter(new.iter().map(|v| match v {
                                    Some(Value::Text(s)) => Some(s.clone()),
                                    _ => None,
                                }))) as ArrayRef,
                            }
                        })
                        .collect();
                rows += n;
                let arrow = Arc::new(iceberg_write::arrow_schema(schema).unwrap());
                let batch = RecordBatch::try_new(arrow, arrays).unwrap();
                let files = iceberg_write::write_data_files(
                    catalog.io(),
                    &meta.location,
                    &[batch],
                    schema,
                    meta.default_spec().unwrap(),
                    None,
                    &Default::default(),
                )
                .await
                .unwrap();
                commit_append(&catalog, &ident, files, BTreeMap::new(), env.as_ref())
                    .await
                    .unwrap();
                continue;
            }
            _ => continue,
        }
        let change = TableUpdate::new().with_schema(meta, update.apply().unwrap());
        commit_table_update(&catalog, &ident, &change, env.as_ref())
            .await
            .unwrap();
    }

    // The final schema is the model's.
    let table = catalog.load_table(&ident).await.unwrap();
    let schema = table.metadata.current_schema().unwrap();
    let got: Vec<(i32, &str, P)> = schema
        .fields()
        .iter()
        .map(|f| {
            (
                f.id,
                f.name.as_str(),
                f.field_type.as_primitive().unwrap().clone(),
            )
        })
        .collect();
    let want: Vec<(i32, &str, P)> = cols
        .iter()
        .map(|c| (c.id, c.name.as_str(), c.ty.clone()))
        .collect();
    assert_eq!(got, want);

    // Every row, read by field id from the files, is the model's row.
    let mut read: BTreeMap<i64, Vec<Option<Value>>> = BTreeMap::new();
    let lists = table
        .metadata
        .current_snapshot()
        .and_then(|s| s.manifest_list.clone());
    let manifests = read_manifest_list(catalog.io(), lists.as_deref())
        .await
        .unwrap();
    for m in manifests {
        let bytes = catalog.io().read(&m.manifest_path).await.unwrap();
        for entry in decode_manifest(&m.manifest_path, &bytes).unwrap().entries {
            if entry.status == ManifestStatus::Deleted {
                continue;
            }
            let data = catalog.io().read(&entry.data_file.file_path).await.unwrap();
            let reader = ParquetRecordBatchReaderBuilder::try_new(data)
                .unwrap()
                .build()
                .unwrap();
            for batch in reader {
                let batch = batch.unwrap();
                let by_id: BTreeMap<i32, usize> = batch
                    .schema()
                    .fields()
                    .iter()
                    .enumerate()
                    .map(|(i, f)| (f.metadata()["PARQUET:field_id"].parse().unwrap(), i))
                    .collect();
                for r in 0..batch.num_rows() {
                    let cell = |c: &Col| -> Option<Value> {
                        let a = batch.column(*by_id.get(&c.id)?);
                        if a.is_null(r) {
                            return None;
                        }
                        Some(match a.data_type() {
                            DataType::Int32 => {
                                Value::Int(i64::from(a.as_primitive::<Int32Type>().value(r)))
                            }
                            DataType::Int64 => Value::Int(a.as_primitive::<Int64Type>().value(r)),
                            _ => Value::Text(a.as_string::<i32>().value(r).to_string()),
                        })
                    };
                    let row: Vec<Option<Value>> = cols.iter().map(cell).collect();
                    let Some(Value::Int(id)) = row[0] else {
                        panic!("no id")
                    };
                    assert!(read.insert(id, row).is_none(), "row {id} twice");
                }
            }
        }
    }
    assert_eq!(read.len(), rows);
    for (id, row) in read {
        let expected: Vec<Option<Value>> =
            cols.iter().map(|c| c.values[id as usize].clone()).collect();
        assert_eq!(row, expected, "row {id}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn evolved_tables_read_back_every_row_projected_onto_the_final_schema(
        steps in proptest::collection::vec(arb_step(), 1..14),
    ) {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(run(steps));
    }
}
