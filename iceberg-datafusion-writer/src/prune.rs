//! Which manifests and data files a scan may skip: those whose partition summaries or
//! column bounds show that a filter DataFusion pushed down cannot hold for any of their
//! rows. Conservative: a filter this does not understand, a column without bounds or a
//! bound it cannot decode keeps the manifest or file, and DataFusion applies every filter
//! to the rows again.

use std::cmp::Ordering;

use datafusion::arrow::datatypes::Schema as ArrowSchema;
use datafusion::logical_expr::{BinaryExpr, Expr, Operator};
use datafusion::scalar::ScalarValue;
use iceberg_spec::{
    DataFile, Datum, FieldSummary, PartitionField, PartitionSpec, PrimitiveType, Schema, Transform,
};

/// One `column <op> literal` condition on a table column.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Condition {
    field_id: i32,
    op: Operator,
    value: Datum,
}

/// The conditions of `filters` (and of their `AND`s) this pruning understands. Column names
/// are those of `columns` (the table's columns as DataFusion was told them, with their
/// field ids), resolved by id in `schema` (the snapshot's): a column renamed or re-added
/// since still prunes on its own bounds.
pub(crate) fn conditions(
    filters: &[Expr],
    columns: &ArrowSchema,
    schema: &Schema,
) -> Vec<Condition> {
    let mut out = Vec::new();
    for f in filters {
        collect(f, columns, schema, &mut out);
    }
    out
}

fn collect(expr: &Expr, columns: &ArrowSchema, schema: &Schema, out: &mut Vec<Condition>) {
    let Expr::BinaryExpr(BinaryExpr { left, op, right }) = expr else {
        return;
    };
    if *op == Operator::And {
        collect(left, columns, schema, out);
        collect(right, columns, schema, out);
        return;
    }
    let (column, op, literal) = match (left.as_ref(), right.as_ref()) {
        (Expr::Column(c), Expr::Literal(v, _)) => (c, *op, v),
        (Expr::Literal(v, _), Expr::Column(c)) => match op.swap() {
            Some(op) => (c, op, v),
            None => return,
        },
        _ => return,
    };
    if !matches!(
        op,
        Operator::Eq | Operator::Lt | Operator::LtEq | Operator::Gt | Operator::GtEq
    ) {
        return;
    }
    let id = columns
        .field_with_name(&column.name)
        .ok()
        .and_then(crate::field_ids::field_id);
    let Some(field) = id.and_then(|id| schema.field_by_id(id)) else {
        return;
    };
    let Some(ty) = field.field_type.as_primitive() else {
        return;
    };
    if let Some(value) = datum(literal, ty) {
        out.push(Condition {
            field_id: field.id,
            op,
            value,
        });
    }
}

/// `v` as a value of `ty`, for the types whose order DataFusion and Iceberg bounds agree on
/// (not floats: DataFusion orders NaN above every number, and bounds leave NaN out).
fn datum(v: &ScalarValue, ty: &PrimitiveType) -> Option<Datum> {
    Some(match (ty, v) {
        (PrimitiveType::Int, ScalarValue::Int32(Some(x))) => Datum::Int(*x),
        (PrimitiveType::Long, ScalarValue::Int64(Some(x))) => Datum::Long(*x),
        (PrimitiveType::Long, ScalarValue::Int32(Some(x))) => Datum::Long(i64::from(*x)),
        (PrimitiveType::Date, ScalarValue::Date32(Some(x))) => Datum::Date(*x),
        (PrimitiveType::Timestamp, ScalarValue::TimestampMicrosecond(Some(x), None)) => {
            Datum::Timestamp(*x)
        }
        (PrimitiveType::Timestamptz, ScalarValue::TimestampMicrosecond(Some(x), Some(_))) => {
            Datum::Timestamptz(*x)
        }
        (
            PrimitiveType::String,
            ScalarValue::Utf8(Some(s))
            | ScalarValue::LargeUtf8(Some(s))
            | ScalarValue::Utf8View(Some(s)),
        ) => Datum::String(s.clone()),
        _ => return None,
    })
}

/// False only when the file's bounds prove that some condition holds for none of its rows.
pub(crate) fn may_match(file: &DataFile, schema: &Schema, conditions: &[Condition]) -> bool {
    conditions.iter().all(|c| may_hold(file, schema, c))
}

fn may_hold(file: &DataFile, schema: &Schema, c: &Condition) -> bool {
    let id = c.field_id;
    // A column of nulls only: no comparison holds.
    if let (Some(nulls), Some(values)) =
        (file.null_value_counts.get(&id), file.value_counts.get(&id))
        && nulls == values
        && *values > 0
    {
        return false;
    }
    let lower = file.lower_bound(schema, id).ok().flatten();
    let upper = file.upper_bound(schema, id).ok().flatten();
    bounds_allow(c.op, lower.as_ref(), upper.as_ref(), &c.value)
}

/// False only when every value lies in `[lower, upper]` and none can be `op value`.
fn bounds_allow(op: Operator, lower: Option<&Datum>, upper: Option<&Datum>, value: &Datum) -> bool {
    let lo = lower.and_then(|b| b.compare(value));
    let hi = upper.and_then(|b| b.compare(value));
    match op {
        // Some row equals v: lower <= v <= upper.
        Operator::Eq => lo != Some(Ordering::Greater) && hi != Some(Ordering::Less),
        // Some row < v: lower < v.
        Operator::Lt => !matches!(lo, Some(Ordering::Greater | Ordering::Equal)),
        Operator::LtEq => lo != Some(Ordering::Greater),
        // Some row > v: upper > v.
        Operator::Gt => !matches!(hi, Some(Ordering::Less | Ordering::Equal)),
        Operator::GtEq => hi != Some(Ordering::Less),
        _ => true,
    }
}

/// False only when a manifest's partition summaries (`summaries`, one per field of `spec`)
/// prove that some condition holds for none of its files. A condition on a column that a
/// partition field transforms in order (identity, truncate, year, month, day, hour) is
/// projected through the transform: `x >= v` implies `t(x) >= t(v)`, `x = v` implies
/// `t(x) = t(v)`; anything else keeps the manifest.
pub(crate) fn manifest_may_match(
    spec: &PartitionSpec,
    summaries: &[FieldSummary],
    schema: &Schema,
    conditions: &[Condition],
) -> bool {
    conditions.iter().all(|c| {
        spec.fields()
            .iter()
            .zip(summaries)
            .all(|(field, summary)| summary_may_hold(field, summary, schema, c))
    })
}

fn summary_may_hold(
    field: &PartitionField,
    summary: &FieldSummary,
    schema: &Schema,
    c: &Condition,
) -> bool {
    if field.source_id != c.field_id || !field.transform.preserves_order() {
        return true;
    }
    let Some(source) = schema
        .field_by_id(c.field_id)
        .and_then(|f| f.field_type.as_primitive())
    else {
        return true;
    };
    // A strict comparison on an integral value is the inclusive one on its neighbour, as
    // Java projects it (`x < v` is `x <= v - 1`); on others it weakens through the
    // transform (`x > v` allows `t(x) = t(v)`).
    let (op, value) = match (c.op, step(&c.value, c.op)) {
        (Operator::Lt, Some(v)) => (Operator::LtEq, v),
        (Operator::Gt, Some(v)) => (Operator::GtEq, v),
        (Operator::Gt | Operator::GtEq, None) => (Operator::GtEq, c.value.clone()),
        (Operator::Lt | Operator::LtEq, None) => (Operator::LtEq, c.value.clone()),
        (op, _) => (op, c.value.clone()),
    };
    let (Ok(result), Ok(Some(projected))) = (
        field.transform.result_type(source),
        field.transform.apply(Some(&value)),
    ) else {
        return true;
    };
    let bound = |b: &Option<Vec<u8>>| {
        b.as_deref()
            .and_then(|bytes| Datum::from_bytes(&result, bytes).ok())
    };
    let (lower, upper) = (bound(&summary.lower_bound), bound(&summary.upper_bound));
    let (lower, upper) = (lower.as_ref(), upper.as_ref());
    let temporal = matches!(
        field.transform,
        Transform::Year | Transform::Month | Transform::Day | Transform::Hour
    );
    if let (true, Some(below), Some(above)) = (
        temporal,
        step(&projected, Operator::Lt),
        step(&projected, Operator::Gt),
    ) && matches!(projected, Datum::Int(v) | Datum::Date(v) if v < 0)
    {
        // Java writers put some rows before 1970 one unit off the floor: older ones one
        // above it, 1.10 one below for values 0.999999 s past a unit boundary
        // (`DateTimeUtil.convertMicros`). Java's reader widens its projection for them
        // (`ProjectionUtil.fixInclusiveTimeProjection`); so does this, both ways.
        return match op {
            Operator::Eq => {
                bounds_allow(Operator::GtEq, lower, upper, &below)
                    && bounds_allow(Operator::LtEq, lower, upper, &above)
            }
            Operator::LtEq => bounds_allow(Operator::LtEq, lower, upper, &above),
            Operator::GtEq => bounds_allow(Operator::GtEq, lower, upper, &below),
            _ => true,
        };
    }
    bounds_allow(op, lower, upper, &projected)
}

/// For `x < v`, the largest value below `v`; for `x > v`, the smallest above (integral
/// types only; `None` at the type's end or for other types).
fn step(value: &Datum, op: Operator) -> Option<Datum> {
    let up = op == Operator::Gt;
    let next32 = |v: i32| {
        if up {
            v.checked_add(1)
        } else {
            v.checked_sub(1)
        }
    };
    let next64 = |v: i64| {
        if up {
            v.checked_add(1)
        } else {
            v.checked_sub(1)
        }
    };
    match (op, value) {
        (Operator::Lt | Operator::Gt, Datum::Int(v)) => next32(*v).map(Datum::Int),
        (Operator::Lt | Operator::Gt, Datum::Date(v)) => next32(*v).map(Datum::Date),
        (Operator::Lt | Operator::Gt, Datum::Long(v)) => next64(*v).map(Datum::Long),
        (Operator::Lt | Operator::Gt, Datum::Timestamp(v)) => next64(*v).map(Datum::Timestamp),
        (Operator::Lt | Operator::Gt, Datum::Timestamptz(v)) => next64(*v).map(Datum::Timestamptz),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::BTreeMap;

    use datafusion::prelude::{col, lit};
    use iceberg_spec::NestedField;

    use super::*;

    fn arrow(schema: &Schema) -> ArrowSchema {
        iceberg_write::arrow_schema(schema).unwrap()
    }

    fn schema() -> Schema {
        Schema::new(
            0,
            vec![
                NestedField::required(1, "id", PrimitiveType::Long),
                NestedField::optional(2, "name", PrimitiveType::String),
                NestedField::optional(3, "x", PrimitiveType::Double),
            ],
        )
        .unwrap()
    }

    /// A file whose ids run from `lo` to `hi`, with `nulls` of 10 names null.
    fn file(lo: i64, hi: i64, nulls: i64) -> DataFile {
        DataFile {
            file_path: format!("f-{lo}-{hi}"),
            record_count: 10,
            lower_bounds: BTreeMap::from([
                (1, Datum::Long(lo).to_bytes()),
                (2, Datum::String("b".into()).to_bytes()),
            ]),
            upper_bounds: BTreeMap::from([
                (1, Datum::Long(hi).to_bytes()),
                (2, Datum::String("d".into()).to_bytes()),
            ]),
            value_counts: BTreeMap::from([(1, 10), (2, 10)]),
            null_value_counts: BTreeMap::from([(1, 0), (2, nulls)]),
            ..Default::default()
        }
    }

    fn keeps(filters: &[Expr], f: &DataFile) -> bool {
        may_match(
            f,
            &schema(),
            &conditions(filters, &arrow(&schema()), &schema()),
        )
    }

    #[test]
    fn a_file_is_skipped_only_when_its_bounds_rule_a_filter_out() {
        let f = file(10, 20, 0);
        for (expr, kept) in [
            (col("id").eq(lit(15i64)), true),
            (col("id").eq(lit(21i64)), false),
            (col("id").lt(lit(10i64)), false),
            (col("id").lt_eq(lit(10i64)), true),
            (col("id").gt(lit(20i64)), false),
            (col("id").gt_eq(lit(20i64)), true),
            (lit(25i64).lt(col("id")), false),
            (lit(15i64).lt(col("id")), true),
            (col("name").eq(lit("a")), false),
            (col("name").gt_eq(lit("c")), true),
            (col("id").gt(lit(5i64)).and(col("id").lt(lit(9i64))), false),
            // Not understood: kept.
            (col("id").gt(lit(30i64)).or(col("id").lt(lit(0i64))), true),
            (col("x").gt(lit(1e9)), true),
            (col("id").not_eq(lit(15i64)), true),
        ] {
            assert_eq!(keeps(std::slice::from_ref(&expr), &f), kept, "{expr}");
        }
        // Every filter applies.
        assert!(!keeps(
            &[col("id").gt(lit(15i64)), col("id").gt(lit(25i64))],
            &f
        ));
    }

    #[test]
    fn manifests_are_skipped_by_their_partition_summaries_through_the_transform() {
        let schema = Schema::new(
            0,
            vec![
                NestedField::required(1, "id", PrimitiveType::Long),
                NestedField::optional(2, "ts", PrimitiveType::Timestamptz),
            ],
        )
        .unwrap();
        let by_day = PartitionSpec::builder(&schema)
            .add("ts", iceberg_spec::Transform::Day)
            .unwrap()
            .build()
            .unwrap();
        let by_bucket = PartitionSpec::builder(&schema)
            .add("id", iceberg_spec::Transform::Bucket(4))
            .unwrap()
            .build()
            .unwrap();
        const DAY: i64 = 86_400_000_000;
        // Days 10 to 12.
        let days = [FieldSummary {
            contains_null: false,
            contains_nan: None,
            lower_bound: Some(Datum::Date(10).to_bytes()),
            upper_bound: Some(Datum::Date(12).to_bytes()),
        }];
        let ts = |v: i64| {
            lit(ScalarValue::TimestampMicrosecond(
                Some(v),
                Some("UTC".into()),
            ))
        };
        let keeps = |spec: &PartitionSpec, filter: Expr| {
            manifest_may_match(
                spec,
                &days,
                &schema,
                &conditions(&[filter], &arrow(&schema), &schema),
            )
        };
        for (filter, kept) in [
            (col("ts").gt_eq(ts(13 * DAY)), false),
            (col("ts").gt_eq(ts(12 * DAY + 5)), true),
            // Later on day 12: the day is the same, so the manifest may hold it.
            (col("ts").gt(ts(12 * DAY)), true),
            (col("ts").gt(ts(13 * DAY - 1)), false),
            (col("ts").lt(ts(10 * DAY)), false),
            (col("ts").lt(ts(10 * DAY + 1)), true),
            (col("ts").eq(ts(11 * DAY + 7)), true),
            (col("ts").eq(ts(9 * DAY + 7)), false),
            (col("id").eq(lit(5i64)), true),
        ] {
            assert_eq!(keeps(&by_day, filter.clone()), kept, "{filter}");
        }
        // Bucket does not keep order: never skipped.
        assert!(keeps(&by_bucket, col("id").eq(lit(5i64))));
    }

    /// Java writers put pre-1970 rows one day off the floor (1.10: one below it for values
    /// 0.999999 s past midnight; older ones one above): their manifests must not be skipped
    /// for them, as Java's reader widens its projection for negative values.
    #[test]
    fn manifests_of_java_pre_1970_days_are_kept_one_day_either_way() {
        let schema = Schema::new(
            0,
            vec![NestedField::optional(2, "ts", PrimitiveType::Timestamptz)],
        )
        .unwrap();
        let by_day = PartitionSpec::builder(&schema)
            .add("ts", iceberg_spec::Transform::Day)
            .unwrap()
            .build()
            .unwrap();
        const DAY: i64 = 86_400_000_000;
        let ts = |v: i64| {
            lit(ScalarValue::TimestampMicrosecond(
                Some(v),
                Some("UTC".into()),
            ))
        };
        let keeps = |day: i32, filter: Expr| {
            let summary = [FieldSummary {
                contains_null: false,
                contains_nan: None,
                lower_bound: Some(Datum::Date(day).to_bytes()),
                upper_bound: Some(Datum::Date(day).to_bytes()),
            }];
            manifest_may_match(
                &by_day,
                &summary,
                &schema,
                &conditions(&[filter], &arrow(&schema), &schema),
            )
        };
        // 1969-12-31T00:00:00.999999: day -1, which Java 1.10 writes as day -2.
        let row = -DAY + 999_999;
        assert!(keeps(-2, col("ts").eq(ts(row))));
        assert!(keeps(-2, col("ts").gt_eq(ts(row))));
        // 1969-12-31T12:00: day -1, which older Java writers wrote as day 0.
        assert!(keeps(0, col("ts").eq(ts(-DAY / 2))));
        assert!(keeps(0, col("ts").lt_eq(ts(-DAY / 2))));
        // Two days off is still skipped, and days after 1970 are not widened.
        assert!(!keeps(-3, col("ts").eq(ts(row))));
        assert!(!keeps(1, col("ts").eq(ts(-DAY / 2))));
        assert!(!keeps(4, col("ts").eq(ts(3 * DAY))));
        assert!(!keeps(2, col("ts").eq(ts(3 * DAY))));
    }

    #[test]
    fn files_without_bounds_are_kept_and_null_only_columns_skipped() {
        let bare = DataFile {
            record_count: 10,
            ..Default::default()
        };
        assert!(keeps(&[col("id").eq(lit(1i64))], &bare));
        assert!(!keeps(&[col("name").eq(lit("c"))], &file(1, 2, 10)));
        assert!(keeps(&[col("name").eq(lit("c"))], &file(1, 2, 9)));
    }
}
