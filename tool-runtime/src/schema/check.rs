//! The bounds a value must meet, checked in one place for both ways a call
//! is bound: the full binder (on JSON values) and the typed fast path (on
//! the values as they are parsed). Each check answers only "does it fit";
//! the binder turns a "no" into an error the model reads.

use std::cmp::Ordering;
use std::collections::HashMap;

use serde_json::{Number, Value};

use super::{Constraints, Kind, Shape};

/// Deepest nesting accepted inside a `serde_json::Value` parameter. Deeper
/// values are an `out_of_range` error rather than a risk to the stack.
pub(crate) const MAX_DEPTH: usize = 64;

/// Why a string does not fit its shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TextProblem {
    /// Too few or too many characters (the count is given).
    Length(u64),
    /// The pattern does not match.
    Pattern,
}

/// Which constraints the binder checks on a value of one kind: numeric
/// bounds on numbers, length and pattern on strings, item counts on lists
/// and maps, listed values on numbers and booleans. One rule, for what a
/// schema read from elsewhere keeps and for what registration refuses.
struct ChecksOf {
    bounds: bool,
    text: bool,
    count: bool,
    values: bool,
}

impl ChecksOf {
    fn kind(kind: &Kind) -> Self {
        let (bounds, text, count, values) = match kind {
            Kind::Integer { .. } | Kind::Number { .. } => (true, false, false, true),
            Kind::Boolean => (false, false, false, true),
            Kind::String => (false, true, false, false),
            Kind::Array { .. } | Kind::Map { .. } => (false, false, true, false),
            Kind::Enum(_) | Kind::Object(_) | Kind::Any => (false, false, false, false),
        };
        ChecksOf {
            bounds,
            text,
            count,
            values,
        }
    }
}

impl Constraints {
    /// These constraints less those a value of `kind` is not checked
    /// against (JSON Schema's keywords each constrain one type of value:
    /// a `minLength` beside an array's `items` says nothing of its items).
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn applying_to(self, kind: &Kind) -> Constraints {
        let checks = ChecksOf::kind(kind);
        Constraints {
            minimum: self.minimum.filter(|_| checks.bounds),
            maximum: self.maximum.filter(|_| checks.bounds),
            min_length: self.min_length.filter(|_| checks.text),
            max_length: self.max_length.filter(|_| checks.text),
            pattern: self.pattern.filter(|_| checks.text),
            min_items: self.min_items.filter(|_| checks.count),
            max_items: self.max_items.filter(|_| checks.count),
            values: self.values.filter(|_| checks.values),
        }
    }

    /// The first constraint set here that a value of `kind` is not
    /// checked against, as JSON Schema names it.
    pub(crate) fn unchecked_by(&self, kind: &Kind) -> Option<&'static str> {
        let checks = ChecksOf::kind(kind);
        [
            ("minimum", self.minimum.is_some() && !checks.bounds),
            ("maximum", self.maximum.is_some() && !checks.bounds),
            ("minLength", self.min_length.is_some() && !checks.text),
            ("maxLength", self.max_length.is_some() && !checks.text),
            ("pattern", self.pattern.is_some() && !checks.text),
            ("minItems", self.min_items.is_some() && !checks.count),
            ("maxItems", self.max_items.is_some() && !checks.count),
            ("enum", self.values.is_some() && !checks.values),
        ]
        .into_iter()
        .find_map(|(keyword, unchecked)| unchecked.then_some(keyword))
    }
}

impl Shape {
    /// A constraint of this shape, or of one inside it, that the binder
    /// cannot check on a value of its kind (`min_length` on a number,
    /// `minimum` on a `serde_json::Value` or a struct): the keyword, as
    /// JSON Schema names it. The macro refuses such constraints where it
    /// knows the type; this catches the rest (a type alias, say).
    pub(crate) fn unchecked_constraint(&self) -> Option<&'static str> {
        if let Some(keyword) = self.constraints.unchecked_by(&self.kind) {
            return Some(keyword);
        }
        match &self.kind {
            Kind::Array { items: inner, .. } | Kind::Map { values: inner } => inner.unchecked_constraint(),
            Kind::Object(object) => object.fields.iter().find_map(|f| f.shape.unchecked_constraint()),
            _ => None,
        }
    }

    /// Whether an integer fits the type's range and the declared bounds.
    #[inline]
    pub(crate) fn integer_fits(&self, n: i128) -> bool {
        let Kind::Integer { min, max } = self.kind else {
            return false;
        };
        let c = &self.constraints;
        (min..=max).contains(&n)
            && c.minimum.as_ref().is_none_or(|b| compare_int(n, b).is_ge())
            && c.maximum.as_ref().is_none_or(|b| compare_int(n, b).is_le())
    }

    /// Whether a number fits the declared bounds, as the tool receives it:
    /// an `f32` is rounded first, and must stay finite, and is compared
    /// with its bounds rounded alike (`max = 0.1` takes `0.1`, though the
    /// `f32` nearest `0.1` is a little more than it).
    pub(crate) fn number_fits(&self, n: f64) -> bool {
        let single = matches!(self.kind, Kind::Number { single: true });
        let received = |n: f64| if single { f64::from(n as f32) } else { n };
        let value = received(n);
        let c = &self.constraints;
        value.is_finite()
            && c.minimum
                .as_ref()
                .and_then(Number::as_f64)
                .is_none_or(|b| value >= received(b))
            && c.maximum
                .as_ref()
                .and_then(Number::as_f64)
                .is_none_or(|b| value <= received(b))
    }

    /// Checks a string's length (in characters) and pattern.
    #[inline]
    pub(crate) fn check_text(&self, s: &str) -> Result<(), TextProblem> {
        let c = &self.constraints;
        // Most strings have no bound: that case costs two tests.
        if c.min_length.is_none() && c.max_length.is_none() && c.pattern.is_none() {
            return Ok(());
        }
        self.check_bounded_text(s)
    }

    fn check_bounded_text(&self, s: &str) -> Result<(), TextProblem> {
        let c = &self.constraints;
        if c.min_length.is_some() || c.max_length.is_some() {
            let len = s.chars().count() as u64;
            if c.min_length.is_some_and(|m| len < m) || c.max_length.is_some_and(|m| len > m) {
                return Err(TextProblem::Length(len));
            }
        }
        match &c.pattern {
            Some(p) if !p.is_match(s) => Err(TextProblem::Pattern),
            _ => Ok(()),
        }
    }

    /// Whether a string is one of an enum's values, exactly.
    pub(crate) fn enum_has(&self, s: &str) -> bool {
        matches!(&self.kind, Kind::Enum(values) if values.iter().any(|v| v == s))
    }

    /// Whether `value` is one of the values the shape lists, when it lists
    /// any; numbers compare by value (`2` and `2.0` are the same number).
    pub(crate) fn value_listed(&self, value: &Value) -> bool {
        let Some(values) = &self.constraints.values else {
            return true;
        };
        values.iter().any(|listed| match (listed, value) {
            (Value::Number(a), Value::Number(b)) => same_number(a, b),
            (a, b) => a == b,
        })
    }

    /// Whether a list's or map's item count fits the item bounds.
    #[inline]
    pub(crate) fn items_fit(&self, len: usize) -> bool {
        let c = &self.constraints;
        let len = len as u64;
        c.min_items.is_none_or(|m| len >= m) && c.max_items.is_none_or(|m| len <= m)
    }
}

/// A long list of values, indexed for [`Shape::value_listed`]'s rule: the
/// numbers by their value as a float, which any two numbers that rule finds
/// the same share, each candidate then compared by the rule itself.
pub(crate) struct ListedNumbers(HashMap<u64, Vec<usize>>);

impl ListedNumbers {
    pub(crate) fn new(values: &[Value]) -> Self {
        let mut index: HashMap<u64, Vec<usize>> = HashMap::new();
        for (i, value) in values.iter().enumerate() {
            if let Value::Number(n) = value {
                index.entry(float_key(n)).or_default().push(i);
            }
        }
        ListedNumbers(index)
    }

    /// Whether `n` is one of `values`, the list this index was made of.
    pub(crate) fn contains(&self, values: &[Value], n: &Number) -> bool {
        self.0.get(&float_key(n)).is_some_and(|places| {
            places
                .iter()
                .any(|&i| matches!(&values[i], Value::Number(m) if same_number(m, n)))
        })
    }
}

/// A number's value as a float, `-0` and `0` alike, as a hash key.
fn float_key(n: &Number) -> u64 {
    let f = n.as_f64().unwrap_or(f64::NAN);
    if f == 0.0 { 0 } else { f.to_bits() }
}

/// Whether two JSON numbers are the same number: exactly for integers,
/// as floats otherwise.
fn same_number(a: &Number, b: &Number) -> bool {
    match (a.as_i64(), b.as_i64(), a.as_u64(), b.as_u64()) {
        (Some(a), Some(b), _, _) => a == b,
        (_, _, Some(a), Some(b)) => a == b,
        _ => a.as_f64() == b.as_f64(),
    }
}

/// Compares an integer with a bound that may be any JSON number.
fn compare_int(n: i128, bound: &Number) -> Ordering {
    if let Some(b) = bound.as_i64() {
        n.cmp(&i128::from(b))
    } else if let Some(b) = bound.as_u64() {
        n.cmp(&i128::from(b))
    } else {
        let b = bound.as_f64().unwrap_or(f64::NAN);
        (n as f64).partial_cmp(&b).unwrap_or(Ordering::Equal)
    }
}

/// Whether `value` nests deeper than `limit` levels; never recurses past it.
pub(crate) fn nesting_exceeds(value: &Value, limit: usize) -> bool {
    match value {
        Value::Array(items) => limit == 0 || items.iter().any(|v| nesting_exceeds(v, limit - 1)),
        Value::Object(map) => limit == 0 || map.values().any(|v| nesting_exceeds(v, limit - 1)),
        _ => false,
    }
}
