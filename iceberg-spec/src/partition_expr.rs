//! Partition and sort expressions as Spark and PyIceberg users write them:
//! `c`, `identity(c)`, `bucket(16, c)`, `truncate(4, c)`, `year(c)`, `month(c)`, `day(c)`,
//! `hour(c)`, `void(c)` (Spark's plurals `years`, `months`, `days`, `hours` too), with a
//! nested source by its dotted path (`st.x`); sort keys add `asc|desc` and
//! `nulls first|nulls last`. A name part that is not a plain word is quoted with backticks as
//! Spark writes it (``identity(`user id`)``, `` `event-time` ``, a backtick doubled inside).
//!
//! Errors ([`Error::InvalidExpression`]) quote the expression and point at the offending
//! part. The CLI's `--partition`/`--sort` and SQL's `CREATE EXTERNAL TABLE ... STORED AS
//! ICEBERG` take these.

use crate::error::{Error, Result};
use crate::{NullOrder, PartitionSpec, Schema, SortDirection, SortField, SortOrder, Transform};

/// A parsed term: a transform of a source column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// The transform.
    pub transform: Transform,
    /// The source column's dotted path.
    pub column: String,
}

const TRANSFORMS: &str = "identity, bucket, truncate, year, month, day, hour, void";

/// Parses one term, without checking it against a schema.
///
/// # Errors
/// [`Error::InvalidExpression`] quoting `text` and naming the bad part.
pub fn parse_term(text: &str) -> Result<Term> {
    parse(text).map_err(Error::expression)
}

fn parse(text: &str) -> Result<Term, String> {
    let s = text.trim();
    let err = |why: String| format!("`{s}`: {why}");
    let Some(open) = find_unquoted(s, |c| c == '(') else {
        return Ok(Term {
            transform: Transform::Identity,
            column: column_name(s).map_err(err)?,
        });
    };
    let name = s[..open].trim().to_ascii_lowercase();
    let inner = s[open + 1..]
        .strip_suffix(')')
        .ok_or_else(|| err("missing closing `)`".into()))?;
    let args: Vec<&str> = split_unquoted(inner, ',')
        .into_iter()
        .map(str::trim)
        .collect();
    let one_column = |args: &[&str]| -> Result<String, String> {
        match args {
            [c] => column_name(c).map_err(err),
            _ => Err(err(format!(
                "`{name}` takes one column, found {}",
                args.len()
            ))),
        }
    };
    let with_param = |args: &[&str], what: &str| -> Result<(u32, String), String> {
        let [n, c] = args else {
            return Err(err(format!(
                "`{name}` takes a {what} and a column: {name}(N, column)"
            )));
        };
        // Java reads the parameter as an int.
        let n = match n.parse::<u32>() {
            Ok(n) if n > 0 && n <= i32::MAX as u32 => n,
            _ => return Err(err(format!("`{n}` is not an integer in 1..=2147483647"))),
        };
        Ok((n, column_name(c).map_err(err)?))
    };
    let (transform, column) = match name.as_str() {
        "identity" => (Transform::Identity, one_column(&args)?),
        "year" | "years" => (Transform::Year, one_column(&args)?),
        "month" | "months" => (Transform::Month, one_column(&args)?),
        "day" | "days" | "date" => (Transform::Day, one_column(&args)?),
        "hour" | "hours" | "date_hour" => (Transform::Hour, one_column(&args)?),
        "void" => (Transform::Void, one_column(&args)?),
        "bucket" => {
            let (n, c) = with_param(&args, "bucket count")?;
            (Transform::Bucket(n), c)
        }
        "truncate" => {
            let (w, c) = with_param(&args, "width")?;
            (Transform::Truncate(w), c)
        }
        other => {
            return Err(err(format!(
                "unknown transform `{other}` (expected one of {TRANSFORMS})"
            )));
        }
    };
    Ok(Term { transform, column })
}

/// The byte index of the first character outside backticks that matches `pred`.
fn find_unquoted(s: &str, pred: impl Fn(char) -> bool) -> Option<usize> {
    let mut quoted = false;
    for (i, c) in s.char_indices() {
        if c == '`' {
            // A doubled backtick inside quotes toggles twice: it stays quoted.
            quoted = !quoted;
        } else if !quoted && pred(c) {
            return Some(i);
        }
    }
    None
}

/// Splits at `sep` outside backticks.
fn split_unquoted(s: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(i) = find_unquoted(rest, |c| c == sep) {
        out.push(&rest[..i]);
        rest = &rest[i + sep.len_utf8()..];
    }
    out.push(rest);
    out
}

/// The column a reference names, as the schema's dotted full name: parts separated by `.`,
/// each a plain word or backtick-quoted (a doubled backtick is a backtick).
fn column_name(c: &str) -> Result<String, String> {
    let c = c.trim();
    if c.is_empty() {
        return Err("a column name is missing".into());
    }
    let bad = || format!("`{c}` is not a column name (quote names with backticks: `a b`)");
    let mut parts = Vec::new();
    let mut chars = c.chars().peekable();
    loop {
        let mut part = String::new();
        if chars.peek() == Some(&'`') {
            chars.next();
            loop {
                match chars.next() {
                    Some('`') if chars.peek() == Some(&'`') => {
                        chars.next();
                        part.push('`');
                    }
                    Some('`') => break,
                    Some(ch) => part.push(ch),
                    None => return Err(format!("`{c}`: a backtick quote is not closed")),
                }
            }
        } else {
            while let Some(&ch) = chars.peek() {
                if ch == '.' {
                    break;
                }
                if "(),`".contains(ch) || ch.is_whitespace() {
                    return Err(bad());
                }
                part.push(ch);
                chars.next();
            }
        }
        if part.is_empty() {
            return Err(bad());
        }
        parts.push(part);
        match chars.next() {
            None => return Ok(parts.join(".")),
            Some('.') => {}
            Some(_) => return Err(bad()),
        }
    }
}

/// Checks `term` against `schema`; returns the source column id.
fn resolve(text: &str, term: &Term, schema: &Schema) -> Result<i32, String> {
    let s = text.trim();
    let id = schema.field_id_by_name(&term.column).ok_or_else(|| {
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name.as_str()).collect();
        format!(
            "`{s}`: no column `{}` in the schema (top-level columns: {})",
            term.column,
            names.join(", ")
        )
    })?;
    let field = schema
        .field_by_id(id)
        .ok_or_else(|| format!("`{s}`: no column `{}`", term.column))?;
    let ty = field.field_type.as_primitive().ok_or_else(|| {
        format!(
            "`{s}`: column `{}` is a {}, not a primitive column",
            term.column, field.field_type
        )
    })?;
    if !term.transform.can_transform(ty) {
        return Err(format!(
            "`{s}`: {} cannot be applied to column `{}` of type {ty}",
            term.transform, term.column
        ));
    }
    Ok(id)
}

/// The partition spec of `exprs` (each may hold several comma-separated terms) over
/// `schema`, with Java's field names and ids.
///
/// # Errors
/// [`Error::InvalidExpression`] naming the first bad expression.
pub fn partition_spec(exprs: &[String], schema: &Schema) -> Result<PartitionSpec> {
    spec(exprs, schema).map_err(Error::expression)
}

fn spec(exprs: &[String], schema: &Schema) -> Result<PartitionSpec, String> {
    let mut builder = PartitionSpec::builder(schema);
    // Comma-separated or repeated, as `--sort` takes them.
    for text in exprs.iter().flat_map(|e| split_top_level(e)) {
        let text = text.as_str();
        let term = parse(text).map_err(|e| format!("partition {e}"))?;
        resolve(text, &term, schema).map_err(|e| format!("partition {e}"))?;
        builder = builder
            .add(&term.column, term.transform)
            .map_err(|e| format!("partition `{}`: {e}", text.trim()))?;
    }
    builder
        .build()
        .map_err(|e| format!("partition spec {}: {e}", exprs.join(", ")))
}

/// The sort order of `exprs` (each may hold several comma-separated keys), id 1; the
/// unsorted order when there are none.
///
/// # Errors
/// [`Error::InvalidExpression`] naming the first bad key.
pub fn sort_order(exprs: &[String], schema: &Schema) -> Result<SortOrder> {
    order(exprs, schema).map_err(Error::expression)
}

fn order(exprs: &[String], schema: &Schema) -> Result<SortOrder, String> {
    let mut fields = Vec::new();
    for key in exprs.iter().flat_map(|e| split_top_level(e)) {
        fields.push(sort_field(&key, schema).map_err(|e| format!("sort {e}"))?);
    }
    if fields.is_empty() {
        return Ok(SortOrder::unsorted());
    }
    Ok(SortOrder {
        order_id: 1,
        fields,
    })
}

fn sort_field(key: &str, schema: &Schema) -> Result<SortField, String> {
    let s = key.trim();
    // The term ends at its closing parenthesis, or at the first space for a bare column.
    let split = match find_unquoted(s, |c| c == '(') {
        Some(_) => find_unquoted(s, |c| c == ')').map_or(s.len(), |i| i + 1),
        None => find_unquoted(s, char::is_whitespace).unwrap_or(s.len()),
    };
    let (term_text, rest) = s.split_at(split);
    let term = parse(term_text)?;
    let source_id = resolve(term_text, &term, schema)?;
    let words: Vec<String> = rest
        .split_whitespace()
        .map(str::to_ascii_lowercase)
        .collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let (direction, tail) = match words.as_slice() {
        ["asc", tail @ ..] => (SortDirection::Asc, tail),
        ["desc", tail @ ..] => (SortDirection::Desc, tail),
        tail => (SortDirection::Asc, tail),
    };
    let null_order = match tail {
        [] if direction == SortDirection::Asc => NullOrder::NullsFirst,
        [] => NullOrder::NullsLast,
        ["nulls", "first"] => NullOrder::NullsFirst,
        ["nulls", "last"] => NullOrder::NullsLast,
        other => {
            return Err(format!(
                "`{s}`: `{}` is not `asc`, `desc`, `nulls first` or `nulls last`",
                other.join(" ")
            ));
        }
    };
    Ok(SortField {
        transform: term.transform,
        source_id,
        direction,
        null_order,
    })
}

/// Splits at commas outside parentheses and backticks.
fn split_top_level(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut quoted = false;
    let mut cur = String::new();
    for ch in s.chars() {
        match ch {
            '`' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => depth -= 1,
            ',' if depth == 0 && !quoted => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    out.push(cur);
    out.into_iter().filter(|k| !k.trim().is_empty()).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::types::StructType;
    use crate::{NestedField, PrimitiveType, Type};

    fn schema() -> Schema {
        Schema::new(
            0,
            vec![
                NestedField::required(1, "id", PrimitiveType::Long),
                NestedField::optional(2, "ts", PrimitiveType::Timestamptz),
                NestedField::optional(3, "name", PrimitiveType::String),
                NestedField::optional(
                    4,
                    "st",
                    Type::Struct(StructType::new(vec![NestedField::optional(
                        5,
                        "x",
                        PrimitiveType::Int,
                    )])),
                ),
            ],
        )
        .unwrap()
    }

    #[test]
    fn terms_as_spark_writes_them() {
        let t = |s: &str| parse_term(s).unwrap();
        assert_eq!(t("id").transform, Transform::Identity);
        assert_eq!(t("identity(id)").column, "id");
        assert_eq!(t("bucket(16, id)").transform, Transform::Bucket(16));
        assert_eq!(t(" truncate( 4 ,name) ").transform, Transform::Truncate(4));
        assert_eq!(t("days(ts)").transform, Transform::Day);
        assert_eq!(t("day(st.x)").column, "st.x");
    }

    #[test]
    fn errors_point_at_the_part() {
        let e = parse_term("bucket(x, id)").unwrap_err().to_string();
        assert_eq!(
            e,
            "`bucket(x, id)`: `x` is not an integer in 1..=2147483647"
        );
        assert!(
            parse_term("bucket(0, id)")
                .unwrap_err()
                .to_string()
                .contains("`0`")
        );
        assert!(
            parse_term("dya(ts)")
                .unwrap_err()
                .to_string()
                .contains("unknown transform `dya`")
        );
        assert!(
            parse_term("day(ts")
                .unwrap_err()
                .to_string()
                .contains("closing")
        );
        assert!(
            parse_term("day(a, b)")
                .unwrap_err()
                .to_string()
                .contains("one column")
        );
        let e = partition_spec(&["day(tss)".into()], &schema())
            .unwrap_err()
            .to_string();
        assert!(e.contains("no column `tss`"), "{e}");
        let e = partition_spec(&["day(name)".into()], &schema())
            .unwrap_err()
            .to_string();
        assert!(e.contains("type string"), "{e}");
    }

    #[test]
    fn backtick_quoted_names_as_spark_writes_them() {
        let t = |s: &str| parse_term(s).unwrap().column;
        assert_eq!(t("identity(`user id`)"), "user id");
        assert_eq!(t("`event-time`"), "event-time");
        assert_eq!(t("day(`event-time`)"), "event-time");
        assert_eq!(t("bucket(4, `a,b`)"), "a,b");
        assert_eq!(t("`st`.x"), "st.x");
        assert_eq!(t("`we``ird`"), "we`ird");
        assert_eq!(t("`a(b)`"), "a(b)");
        assert!(
            parse_term("identity(`user id)")
                .unwrap_err()
                .to_string()
                .contains("not closed")
        );
        assert!(parse_term("user id").is_err(), "an unquoted space");
        let schema = Schema::new(
            0,
            vec![
                NestedField::optional(1, "user id", PrimitiveType::Long),
                NestedField::optional(2, "event-time", PrimitiveType::Timestamptz),
            ],
        )
        .unwrap();
        let spec = partition_spec(
            &["identity(`user id`)".into(), "day(`event-time`)".into()],
            &schema,
        )
        .unwrap();
        let names: Vec<&str> = spec.fields().iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["user id", "event-time_day"]);
        let order = sort_order(&["`user id` desc, `event-time`".into()], &schema).unwrap();
        assert_eq!(order.fields[0].source_id, 1);
        assert_eq!(order.fields[0].direction, SortDirection::Desc);
        assert_eq!(order.fields[1].source_id, 2);
    }

    /// Structure-aware mutations of valid expressions (pieces swapped, cut, repeated, quoted)
    /// and arbitrary text never panic: a spec, an order, or an error quoting the input.
    #[test]
    fn mutated_expressions_never_panic() {
        use proptest::prelude::*;
        let pieces = prop::sample::select(vec![
            "identity(",
            "bucket(",
            "truncate(",
            "day(",
            "years(",
            "void(",
            ")",
            "(",
            ",",
            " ",
            "`",
            "``",
            ".",
            "id",
            "ts",
            "st",
            "x",
            "name",
            "16",
            "0",
            "-1",
            "99999999999",
            "asc",
            "desc",
            "nulls",
            "first",
            "last",
            "é",
            "\u{0}",
        ]);
        let text = prop_oneof![
            prop::collection::vec(pieces, 0..12).prop_map(|p| p.concat()),
            "\\PC{0,24}",
        ];
        let schema = schema();
        proptest!(ProptestConfig::with_cases(2000), |(t in text)| {
            match parse_term(&t) {
                Ok(term) => prop_assert!(!term.column.is_empty()),
                Err(e) => prop_assert!(e.to_string().contains(t.trim()) || t.trim().is_empty(), "{e}"),
            }
            let _ = partition_spec(std::slice::from_ref(&t), &schema);
            let _ = sort_order(std::slice::from_ref(&t), &schema);
        });
    }

    #[test]
    fn specs_and_orders() {
        let s = schema();
        let spec = partition_spec(
            &["day(ts)".into(), "bucket(8, id)".into(), "st.x".into()],
            &s,
        )
        .unwrap();
        let names: Vec<&str> = spec.fields().iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["ts_day", "id_bucket", "st.x"]);
        assert_eq!(spec.fields()[2].source_id, 5);
        let order = sort_order(&["ts desc nulls last, bucket(4, id)".into()], &s).unwrap();
        assert_eq!(order.fields.len(), 2);
        assert_eq!(order.fields[0].direction, SortDirection::Desc);
        assert_eq!(order.fields[1].null_order, NullOrder::NullsFirst);
        assert!(sort_order(&["ts sideways".into()], &s).is_err());
        assert!(sort_order(&[], &s).unwrap().is_unsorted());
    }
}
