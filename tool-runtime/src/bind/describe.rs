//! The sentences of binding problems: what a shape accepts
//! (`an integer from 1 to 10000`) and what a value was (`the string "abc"`).

use std::fmt::Write as _;

use serde_json::Value;

use crate::schema::{Kind, Shape};
use crate::text::QUOTE_CHARS;

/// What a shape accepts, as a phrase: `an integer from 1 to 10000`,
/// `one of "read", "write"`, `a list of strings`.
pub(crate) fn expected(shape: &Shape) -> String {
    let c = &shape.constraints;
    let mut out = match &shape.kind {
        Kind::String => "a string".to_owned(),
        Kind::Boolean => "true or false".to_owned(),
        Kind::Integer { min, max } => {
            // A type's own limit is worth saying only when it is narrow
            // (an `u8`'s 255, not an `u64`'s 18446744073709551615).
            const WIDE: i128 = 1 << 53;
            let lo = c
                .minimum
                .as_ref()
                .map(ToString::to_string)
                .or_else(|| (*min > -WIDE).then(|| min.to_string()));
            let hi = c
                .maximum
                .as_ref()
                .map(ToString::to_string)
                .or_else(|| (*max < WIDE).then(|| max.to_string()))
                // A wide unsigned type states its upper limit too, rather
                // than "at least 0" (values carry 64 bits at most here).
                .or_else(|| (c.minimum.is_none() && *min == 0).then(|| (*max).min(i128::from(u64::MAX)).to_string()));
            match (lo, hi) {
                (Some(lo), Some(hi)) => format!("an integer from {lo} to {hi}"),
                (Some(lo), None) => format!("an integer of at least {lo}"),
                (None, Some(hi)) => format!("an integer of at most {hi}"),
                (None, None) => "an integer".to_owned(),
            }
        }
        Kind::Number { single } => {
            let mut s = "a number".to_owned();
            match (&c.minimum, &c.maximum) {
                (Some(lo), Some(hi)) => {
                    let _ = write!(s, " from {lo} to {hi}");
                }
                (Some(lo), None) => {
                    let _ = write!(s, " of at least {lo}");
                }
                (None, Some(hi)) => {
                    let _ = write!(s, " of at most {hi}");
                }
                (None, None) if *single => s.push_str(" within the range of a 32-bit float"),
                (None, None) => {}
            }
            s
        }
        Kind::Enum(values) => {
            let quoted: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
            format!("one of {}", quoted.join(", "))
        }
        Kind::Array { items, unique } => {
            let what = if *unique { "a list of distinct" } else { "a list of" };
            format!("{what} {}", plural(items))
        }
        Kind::Map { values } => format!("an object whose values are {}", plural(values)),
        Kind::Object(object) => {
            let names: Vec<&str> = object.fields.iter().map(|f| f.name.as_str()).collect();
            format!("an object with the fields {}", names.join(", "))
        }
        Kind::Any => "any JSON value".to_owned(),
    };
    let bounds = |lo: Option<u64>, hi: Option<u64>, unit: &str| match (lo, hi) {
        (Some(lo), Some(hi)) => format!(" of {lo} to {hi} {unit}"),
        (Some(lo), None) => format!(" of at least {lo} {unit}"),
        (None, Some(hi)) => format!(" of at most {hi} {unit}"),
        (None, None) => String::new(),
    };
    if matches!(shape.kind, Kind::String) {
        out.push_str(&bounds(c.min_length, c.max_length, "characters"));
    }
    if matches!(shape.kind, Kind::Array { .. }) {
        out.push_str(&bounds(c.min_items, c.max_items, "items"));
    }
    if matches!(shape.kind, Kind::Map { .. }) {
        out.push_str(&bounds(c.min_items, c.max_items, "keys"));
    }
    out
}

/// What a list's items or a map's values must be, in the plural:
/// `strings`, `integers from 1 to 5`, `lists of numbers`, `true or false
/// values`, `values, each one of "a", "b"`, `JSON values of any kind`.
fn plural(shape: &Shape) -> String {
    match &shape.kind {
        Kind::Boolean => "true or false values".to_owned(),
        Kind::Enum(_) => format!("values, each {}", expected(shape)),
        Kind::Any => "JSON values of any kind".to_owned(),
        _ => {
            // `a string of ...`, `an integer from ...`, `a list of ...`,
            // `an object with ...`: drop the article, pluralize the noun.
            let singular = expected(shape);
            let rest = singular
                .strip_prefix("a ")
                .or_else(|| singular.strip_prefix("an "))
                .unwrap_or(&singular);
            match rest.split_once(' ') {
                Some((noun, tail)) => format!("{noun}s {tail}"),
                None => format!("{rest}s"),
            }
        }
    }
}

/// How a value reads in a sentence: `the string "abc"`, `the number 0.5`,
/// `true`, `a list`, `an object`, `null`.
pub(crate) fn describe_value(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => describe_str(s),
        Value::Array(_) => "a list".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

/// `the string "abc"`; a string past 64 characters is quoted cut, with a
/// marker saying how long it was.
pub(crate) fn describe_str(s: &str) -> String {
    match s.char_indices().nth(QUOTE_CHARS) {
        Some((cut, _)) => format!(
            "the string {:?}...(cut, {} characters in all)",
            &s[..cut],
            s.chars().count()
        ),
        None => format!("the string {s:?}"),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;
    use crate::ToolParam;

    #[test]
    fn lists_and_maps_read_in_the_plural_for_every_kind() {
        assert_eq!(expected(&Vec::<String>::shape()), "a list of strings");
        assert_eq!(expected(&Vec::<bool>::shape()), "a list of true or false values");
        assert_eq!(expected(&Vec::<u8>::shape()), "a list of integers from 0 to 255");
        assert_eq!(expected(&Vec::<f64>::shape()), "a list of numbers");
        assert_eq!(expected(&u64::shape()), "an integer from 0 to 18446744073709551615");
        assert_eq!(expected(&u128::shape()), "an integer from 0 to 18446744073709551615");
        assert_eq!(expected(&i64::shape()), "an integer");
        assert_eq!(
            expected(&Vec::<Vec<i32>>::shape()),
            "a list of lists of integers from -2147483648 to 2147483647"
        );
        assert_eq!(expected(&BTreeSet::<String>::shape()), "a list of distinct strings");
        assert_eq!(expected(&Vec::<Value>::shape()), "a list of JSON values of any kind");
        assert_eq!(
            expected(&BTreeMap::<String, bool>::shape()),
            "an object whose values are true or false values"
        );
        assert_eq!(
            expected(&Vec::<BTreeMap<String, u64>>::shape()),
            "a list of objects whose values are integers from 0 to 18446744073709551615"
        );
        let choice = Shape::new(Kind::Enum(vec!["a".into(), "b".into()]));
        let list = Shape::new(Kind::Array {
            items: Box::new(choice),
            unique: false,
        });
        assert_eq!(expected(&list), "a list of values, each one of \"a\", \"b\"");
    }
}
