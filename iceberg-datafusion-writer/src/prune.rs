//! Which data files a scan may skip: those whose column bounds show that a filter DataFusion
//! pushed down cannot hold for any of their rows. Conservative: a filter this does not
//! understand, a column without bounds or a bound it cannot decode keeps the file, and
//! DataFusion applies every filter to the rows again.

use std::cmp::Ordering;

use datafusion::logical_expr::{BinaryExpr, Expr, Operator};
use datafusion::scalar::ScalarValue;
use iceberg_spec::{DataFile, Datum, PrimitiveType, Schema};

/// One `column <op> literal` condition on a table column.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Condition {
    field_id: i32,
    op: Operator,
    value: Datum,
}

/// The conditions of `filters` (and of their `AND`s) this pruning understands.
pub(crate) fn conditions(filters: &[Expr], schema: &Schema) -> Vec<Condition> {
    let mut out = Vec::new();
    for f in filters {
        collect(f, schema, &mut out);
    }
    out
}

fn collect(expr: &Expr, schema: &Schema, out: &mut Vec<Condition>) {
    let Expr::BinaryExpr(BinaryExpr { left, op, right }) = expr else {
        return;
    };
    if *op == Operator::And {
        collect(left, schema, out);
        collect(right, schema, out);
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
    let Some(field) = schema.field_by_name(&column.name) else {
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
    let cmp = |bound: &Option<Datum>| bound.as_ref().and_then(|b| b.compare(&c.value));
    let (lo, hi) = (cmp(&lower), cmp(&upper));
    match c.op {
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::BTreeMap;

    use datafusion::prelude::{col, lit};
    use iceberg_spec::NestedField;

    use super::*;

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
        may_match(f, &schema(), &conditions(filters, &schema()))
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
