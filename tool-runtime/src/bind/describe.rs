//! The sentences of binding problems: what a shape accepts
//! (`an integer from 1 to 10000`) and what a value was (`the string "abc"`).

use std::fmt::Write as _;

use serde_json::{Number, Value};

use crate::schema::{Kind, ObjectShape, Shape};
use crate::text::{QUOTE_CHARS, clip};

/// What a shape accepts, as a phrase: `an integer from 1 to 10000`,
/// `one of "read", "write"`, `a list of strings`.
pub(crate) fn expected(shape: &Shape) -> String {
    let mut out = String::new();
    write_expected(&mut out, shape);
    out
}

/// A numeric bound in a phrase: as written in the schema, or a type's own
/// limit.
enum Bound<'a> {
    Written(&'a Number),
    Limit(i128),
}

impl Bound<'_> {
    fn write(&self, out: &mut String) {
        match self {
            Bound::Written(n) => write_number(out, n),
            Bound::Limit(n) => write_integer(out, *n),
        }
    }
}

/// A problem's sentence, built by appending its pieces into one buffer:
/// `Sentence::new("expected ").expected(shape).text(", got ").value(v)`.
pub(crate) struct Sentence(String);

impl Sentence {
    pub(crate) fn new(text: &str) -> Self {
        // Most sentences fit, so most take one allocation.
        let mut out = String::with_capacity(80);
        out.push_str(text);
        Sentence(out)
    }

    pub(crate) fn text(mut self, text: &str) -> Self {
        self.0.push_str(text);
        self
    }

    /// What `shape` accepts ([`expected`]).
    pub(crate) fn expected(mut self, shape: &Shape) -> Self {
        write_expected(&mut self.0, shape);
        self
    }

    /// How `value` reads ([`describe_value`]).
    pub(crate) fn value(mut self, value: &Value) -> Self {
        write_value(&mut self.0, value);
        self
    }

    /// `the string "..."` ([`describe_str`]).
    pub(crate) fn string(mut self, s: &str) -> Self {
        write_str(&mut self.0, s);
        self
    }

    /// `s` as `{s:?}` writes it.
    pub(crate) fn quoted(mut self, s: &str) -> Self {
        write_quoted(&mut self.0, s);
        self
    }

    pub(crate) fn integer(mut self, n: i128) -> Self {
        write_integer(&mut self.0, n);
        self
    }

    pub(crate) fn done(self) -> String {
        self.0
    }
}

/// The most values or fields an expectation lists: a sentence stays short
/// however many a schema has, and so does the work of writing one for
/// each wrong value.
const LISTED: usize = 20;

/// Appends `items`, comma-separated: at most [`LISTED`], then how many
/// more there are.
fn write_listed<T>(out: &mut String, items: &[T], mut write_one: impl FnMut(&mut String, &T)) {
    for (i, item) in items.iter().take(LISTED).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_one(out, item);
    }
    if items.len() > LISTED {
        let _ = write!(out, " and {} more", items.len() - LISTED);
    }
}

/// The fields of `object` as the sentence of an unknown key lists them.
pub(super) fn listed_fields(object: &ObjectShape) -> String {
    let mut parameters = String::new();
    if object.fields.is_empty() {
        parameters.push_str("none");
    }
    write_listed(&mut parameters, &object.fields, |out, field| {
        out.push('`');
        out.push_str(&clip(&field.name));
        out.push('`');
    });
    parameters
}

/// Appends [`expected`]'s phrase to `out`: the sentences of binding
/// problems are built by appending, without a `format!` and a copy per
/// piece.
pub(crate) fn write_expected(out: &mut String, shape: &Shape) {
    let c = &shape.constraints;
    if let Some(values) = &c.values {
        out.push_str("one of ");
        write_listed(out, values, |out, value| {
            let _ = write!(out, "{}", clip(&value.to_string()));
        });
        return;
    }
    match &shape.kind {
        Kind::String => out.push_str("a string"),
        Kind::Boolean => out.push_str("true or false"),
        Kind::Integer { min, max } => {
            // A type's own limit is worth saying only when it is narrow
            // (an `u8`'s 255, not an `u64`'s 18446744073709551615).
            const WIDE: i128 = 1 << 53;
            let lo = c
                .minimum
                .as_ref()
                .map(Bound::Written)
                .or_else(|| (*min > -WIDE).then_some(Bound::Limit(*min)));
            let hi = c
                .maximum
                .as_ref()
                .map(Bound::Written)
                .or_else(|| (*max < WIDE).then_some(Bound::Limit(*max)))
                // A wide unsigned type states its upper limit too, rather
                // than "at least 0" (values carry 64 bits at most here).
                .or_else(|| (c.minimum.is_none() && *min == 0).then(|| Bound::Limit((*max).min(i128::from(u64::MAX)))));
            match (lo, hi) {
                (Some(lo), Some(hi)) => {
                    out.push_str("an integer from ");
                    lo.write(out);
                    out.push_str(" to ");
                    hi.write(out);
                }
                (Some(lo), None) => {
                    out.push_str("an integer of at least ");
                    lo.write(out);
                }
                (None, Some(hi)) => {
                    out.push_str("an integer of at most ");
                    hi.write(out);
                }
                (None, None) => out.push_str("an integer"),
            }
        }
        Kind::Number { single } => {
            out.push_str("a number");
            match (&c.minimum, &c.maximum) {
                (Some(lo), Some(hi)) => {
                    out.push_str(" from ");
                    write_number(out, lo);
                    out.push_str(" to ");
                    write_number(out, hi);
                }
                (Some(lo), None) => {
                    out.push_str(" of at least ");
                    write_number(out, lo);
                }
                (None, Some(hi)) => {
                    out.push_str(" of at most ");
                    write_number(out, hi);
                }
                (None, None) if *single => out.push_str(" within the range of a 32-bit float"),
                (None, None) => {}
            }
        }
        // A schema of `"type": "null"` (or one no value fits).
        Kind::Enum(values) if values.is_empty() => out.push_str(if shape.nullable { "null" } else { "no value" }),
        Kind::Enum(values) => {
            out.push_str("one of ");
            write_listed(out, values, |out, value| write_quoted_cut(out, value));
        }
        Kind::Array { items, unique } => {
            out.push_str(if *unique { "a list of distinct " } else { "a list of " });
            write_plural(out, items);
        }
        Kind::Map { values } => {
            out.push_str("an object whose values are ");
            write_plural(out, values);
        }
        Kind::Object(object) => {
            out.push_str("an object with the fields ");
            write_listed(out, &object.fields, |out, field| out.push_str(&clip(&field.name)));
        }
        Kind::Any => out.push_str("any JSON value"),
    }
    let unit = match shape.kind {
        Kind::String => Some((c.min_length, c.max_length, "character")),
        Kind::Array { .. } => Some((c.min_items, c.max_items, "item")),
        Kind::Map { .. } => Some((c.min_items, c.max_items, "key")),
        _ => None,
    };
    if let Some((lo, hi, unit)) = unit {
        match (lo, hi) {
            (Some(lo), Some(hi)) => {
                out.push_str(" of ");
                write_integer(out, i128::from(lo));
                out.push_str(" to ");
                write_integer(out, i128::from(hi));
            }
            (Some(lo), None) => {
                out.push_str(" of at least ");
                write_integer(out, i128::from(lo));
            }
            (None, Some(hi)) => {
                out.push_str(" of at most ");
                write_integer(out, i128::from(hi));
            }
            (None, None) => return,
        }
        let last = hi.or(lo).unwrap_or_default();
        out.push(' ');
        out.push_str(&counted(last, unit));
    }
}

/// `unit` after a count of `n`: "character" for one, "characters" else.
pub(crate) fn counted(n: u64, unit: &str) -> String {
    if n == 1 { unit.to_owned() } else { format!("{unit}s") }
}

/// What a list's items or a map's values must be, in the plural:
/// `strings`, `integers from 1 to 5`, `lists of numbers`, `true or false
/// values`, `values, each one of "a", "b"`, `JSON values of any kind`.
fn write_plural(out: &mut String, shape: &Shape) {
    match &shape.kind {
        Kind::Boolean => out.push_str("true or false values"),
        Kind::Enum(_) => {
            out.push_str("values, each ");
            write_expected(out, shape);
        }
        Kind::Any => out.push_str("JSON values of any kind"),
        _ => {
            // `a string of ...`, `an integer from ...`, `a list of ...`,
            // `an object with ...`: drop the article, pluralize the noun.
            let start = out.len();
            write_expected(out, shape);
            let article = ["a ", "an "]
                .into_iter()
                .find(|article| out[start..].starts_with(article))
                .map_or(0, str::len);
            out.replace_range(start..start + article, "");
            match out[start..].find(' ') {
                Some(space) => out.insert(start + space, 's'),
                None => out.push('s'),
            }
        }
    }
}

/// How a value reads in a sentence: `the string "abc"`, `the number 0.5`,
/// `true`, `a list`, `an object`, `null`.
pub(crate) fn describe_value(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

/// Appends [`describe_value`]'s phrase to `out`.
pub(crate) fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            out.push_str("the number ");
            write_number(out, n);
        }
        Value::String(s) => write_str(out, s),
        Value::Array(_) => out.push_str("a list"),
        Value::Object(_) => out.push_str("an object"),
    }
}

/// `the string "abc"`; a string past 64 characters is quoted cut, with a
/// marker saying how long it was.
pub(crate) fn describe_str(s: &str) -> String {
    let mut out = String::new();
    write_str(&mut out, s);
    out
}

/// Appends [`describe_str`]'s phrase to `out`.
pub(crate) fn write_str(out: &mut String, s: &str) {
    out.push_str("the string ");
    match s.char_indices().nth(QUOTE_CHARS) {
        Some((cut, _)) => {
            write_quoted(out, &s[..cut]);
            out.push_str("...(cut, ");
            write_integer(out, s.chars().count() as i128);
            out.push_str(" characters in all)");
        }
        None => write_quoted(out, s),
    }
}

/// Appends `s` quoted, cut to [`QUOTE_CHARS`] characters with `...` after
/// the quote when longer: a value a schema lists, which may be long.
fn write_quoted_cut(out: &mut String, s: &str) {
    match s.char_indices().nth(QUOTE_CHARS) {
        Some((cut, _)) => {
            write_quoted(out, &s[..cut]);
            out.push_str("...");
        }
        None => write_quoted(out, s),
    }
}

/// Appends `s` as `{s:?}` writes it; plain printable ASCII, the common
/// case, without the formatting machinery.
pub(crate) fn write_quoted(out: &mut String, s: &str) {
    if s.bytes().all(|b| matches!(b, b' '..=b'~') && b != b'"' && b != b'\\') {
        out.reserve(s.len() + 2);
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        let _ = write!(out, "{s:?}");
    }
}

/// Appends an integer in decimal, as `Display` writes it.
pub(crate) fn write_integer(out: &mut String, n: i128) {
    let Ok(mut magnitude) = u64::try_from(n.unsigned_abs()) else {
        let _ = write!(out, "{n}");
        return;
    };
    if n < 0 {
        out.push('-');
    }
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (magnitude % 10) as u8;
        magnitude /= 10;
        if magnitude == 0 {
            break;
        }
    }
    out.push_str(std::str::from_utf8(&digits[at..]).unwrap_or_default());
}

/// A float as `Display` writes it (`0.5`, `42`), or with an exponent
/// (`1e300`) where that would run to dozens of digits: what the model reads
/// stays short whatever number it sent.
pub(crate) fn float_text(f: f64) -> String {
    let plain = f.to_string();
    if plain.len() <= 24 {
        return plain;
    }
    Number::from_f64(f).map_or(plain, |n| n.to_string())
}

/// Appends a JSON number as `Display` writes it.
pub(crate) fn write_number(out: &mut String, n: &Number) {
    if let Some(i) = n.as_i64() {
        write_integer(out, i128::from(i));
    } else if let Some(u) = n.as_u64() {
        write_integer(out, i128::from(u));
    } else {
        let _ = write!(out, "{n}");
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;
    use crate::ToolParam;

    #[test]
    fn appended_pieces_read_as_the_formatting_machinery_writes_them() {
        for s in [
            "",
            "abc",
            "say \"hi\"",
            "back\\slash",
            "tab\there",
            "é",
            "\u{7f}",
            "~ !",
        ] {
            let mut out = String::new();
            write_quoted(&mut out, s);
            assert_eq!(out, format!("{s:?}"));
        }
        for n in [
            0,
            7,
            -7,
            10,
            255,
            -2147483648,
            i128::from(u64::MAX),
            -i128::from(u64::MAX),
            i128::MAX,
            i128::MIN,
        ] {
            let mut out = String::new();
            write_integer(&mut out, n);
            assert_eq!(out, n.to_string());
        }
        for n in [
            serde_json::json!(0.5),
            serde_json::json!(-3),
            serde_json::json!(u64::MAX),
            serde_json::json!(1e300),
        ] {
            let Value::Number(n) = n else { unreachable!() };
            let mut out = String::new();
            write_number(&mut out, &n);
            assert_eq!(out, n.to_string());
        }
    }

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
