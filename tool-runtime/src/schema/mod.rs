//! The typed model of a tool's input, and the JSON Schema made from it.
//!
//! A [`Shape`] describes what one value may look like: its [`Kind`], whether
//! it may be `null`, its description and its [`Constraints`]. The binder walks
//! a shape to coerce and check what a model sent; [`Shape::to_json_schema`]
//! renders the portable schema of SPEC section 3 from the same model, so what
//! the model is told and what the binder enforces cannot drift apart.
//!
//! Types become shapes through [`ToolParam`](crate::ToolParam), implemented here for the
//! standard types and by `#[derive(ToolParam)]` for a user's own structs and
//! unit-variant enums.

mod check;
// Reading a JSON Schema written elsewhere (a mounted MCP tool's).
#[cfg(feature = "mcp")]
mod import;
// Local keys for a mounted tool's property keys a provider refuses.
#[cfg(feature = "mcp")]
mod local_keys;
mod ordered;
pub(crate) mod param;

pub(crate) use check::{ListedNumbers, MAX_DEPTH, TextProblem, nesting_exceeds};
#[cfg(feature = "mcp")]
pub(crate) use import::{cut_description, import_input_schema_with_local_keys};
#[cfg(feature = "mcp")]
pub(crate) use local_keys::LocalKeys;
pub use ordered::Schema;
pub(crate) use ordered::{object_shapes, read_object_shapes};

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Number, Value};

/// One value's shape: its kind, nullability, description and constraints.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Shape {
    /// What kind of JSON value this is.
    pub kind: Kind,
    /// `null` is accepted (the type is an `Option`).
    pub nullable: bool,
    /// The description the model reads.
    pub description: Option<String>,
    /// Bounds checked by the binder and emitted in the schema.
    pub constraints: Constraints,
    /// What each value of an enum means (`low: only when idle; ...`), from
    /// the variants' doc comments: added after the description, whichever
    /// description the shape ends up with, since the model sees no other
    /// trace of the variants' docs.
    value_docs: Option<String>,
    /// The kind serde writes, where it is not the kind serde reads (a
    /// derived type with fields it skips or names differently when
    /// serializing): what a tool's output schema shows.
    written: Option<Box<Kind>>,
}

/// The kinds of value a tool parameter can take.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Kind {
    /// A JSON string.
    String,
    /// A JSON boolean.
    Boolean,
    /// A JSON integer within the Rust type's range (inclusive).
    Integer {
        /// The type's smallest value.
        min: i128,
        /// The type's largest value.
        max: i128,
    },
    /// A JSON number; `single` for `f32`, whose range is smaller.
    Number {
        /// The value must fit an `f32`.
        single: bool,
    },
    /// A string that must be one of these values.
    Enum(Vec<String>),
    /// A list of `items`; `unique` for sets.
    Array {
        /// Each element's shape.
        items: Box<Shape>,
        /// The elements are distinct (a set).
        unique: bool,
    },
    /// An object with free keys and values of one shape (`HashMap<String, T>`).
    Map {
        /// Each value's shape.
        values: Box<Shape>,
    },
    /// An object with fixed fields (a struct, or a tool's parameters).
    Object(ObjectShape),
    /// Any JSON value (`serde_json::Value`).
    Any,
}

/// The fields of an object with fixed fields.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ObjectShape {
    /// The fields, in declaration order.
    pub fields: Vec<Field>,
    /// Its `Deserialize` refuses unknown keys (`#[serde(deny_unknown_fields)]`;
    /// always true of a tool's own parameters).
    pub rejects_unknown: bool,
    /// The shape of the values of keys no field names, when the object
    /// admits such keys by a schema (a remote tool's
    /// `"additionalProperties": {...}`): they are then bound as that shape,
    /// not ignored. Always `None` for a Rust type's fields, so not public.
    pub(crate) others: Option<Box<Shape>>,
    /// Keys no field names are warned about and kept, not removed: the
    /// object's schema admits them (a remote tool's object without
    /// `"additionalProperties": false`). Always false of a Rust type's
    /// fields, whose schema admits no other key.
    pub(crate) keeps_unknown: bool,
}

/// One field of an object, or one parameter of a tool.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Field {
    /// The name on the wire (after any rename).
    pub name: String,
    /// The field's shape, with its description and constraints.
    pub shape: Shape,
    /// Whether the field must be sent.
    pub presence: Presence,
    /// The default as JSON, for the schema and for completion; `None` when it
    /// has no default or the default could not be serialized.
    pub default: Option<Value>,
    /// The Rust type as written, for people reading completions.
    pub rust_type: &'static str,
}

/// Whether a field must be sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Presence {
    /// Absent or `null` is an error.
    Required,
    /// Absent or `null` means the default.
    Defaulted,
    /// Absent or `null` means `None`.
    Optional,
}

/// Bounds on a value. Numeric bounds apply to numbers, length bounds to
/// strings (in characters), item bounds to arrays.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Constraints {
    /// Smallest number allowed (inclusive).
    pub minimum: Option<Number>,
    /// Largest number allowed (inclusive).
    pub maximum: Option<Number>,
    /// Fewest characters in a string.
    pub min_length: Option<u64>,
    /// Most characters in a string.
    pub max_length: Option<u64>,
    /// A regular expression the string must contain a match of.
    pub pattern: Option<Pattern>,
    /// Fewest elements in an array (keys in a map).
    pub min_items: Option<u64>,
    /// Most elements in an array (keys in a map).
    pub max_items: Option<u64>,
    /// The values allowed, when a schema lists them as numbers or booleans
    /// (`{"type": "integer", "enum": [1, 2, 3]}`, `{"const": true}`): a
    /// value of the kind that is none of them is `enum_out_of_range`. Only
    /// ever read from a remote tool's schema (which the typed fast path
    /// never binds), so not public; a string enum is [`Kind::Enum`].
    pub(crate) values: Option<Vec<Value>>,
}

impl Constraints {
    /// Sets the smallest number allowed.
    pub fn minimum(mut self, minimum: impl Into<Number>) -> Self {
        self.minimum = Some(minimum.into());
        self
    }

    /// Sets the largest number allowed.
    pub fn maximum(mut self, maximum: impl Into<Number>) -> Self {
        self.maximum = Some(maximum.into());
        self
    }

    /// Sets the fewest characters in a string.
    pub fn min_length(mut self, min_length: u64) -> Self {
        self.min_length = Some(min_length);
        self
    }

    /// Sets the most characters in a string.
    pub fn max_length(mut self, max_length: u64) -> Self {
        self.max_length = Some(max_length);
        self
    }

    /// Sets the pattern a string must contain a match of.
    pub fn pattern(mut self, pattern: Pattern) -> Self {
        self.pattern = Some(pattern);
        self
    }

    /// Sets the fewest items in a list (keys in a map).
    pub fn min_items(mut self, min_items: u64) -> Self {
        self.min_items = Some(min_items);
        self
    }

    /// Sets the most items in a list (keys in a map).
    pub fn max_items(mut self, max_items: u64) -> Self {
        self.max_items = Some(max_items);
        self
    }

    /// No bound at all.
    pub(crate) const NONE: Constraints = Constraints {
        minimum: None,
        maximum: None,
        min_length: None,
        max_length: None,
        pattern: None,
        min_items: None,
        max_items: None,
        values: None,
    };

    /// No bound is set.
    pub fn is_empty(&self) -> bool {
        self.minimum.is_none()
            && self.maximum.is_none()
            && self.min_length.is_none()
            && self.max_length.is_none()
            && self.pattern.is_none()
            && self.min_items.is_none()
            && self.max_items.is_none()
            && self.values.is_none()
    }
}

/// The most bytes a remote schema's pattern may compile to: room for any
/// pattern a person writes (a UUID, an e-mail address, `^[a-z]{1,64}$`).
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
const IMPORTED_PATTERN_BYTES: usize = 32 * 1024;

/// A compiled `pattern` constraint, kept with its source text.
///
/// The syntax is that of the `regex-lite` crate (Perl-style, no Unicode
/// classes); the macro checks it at compile time.
#[derive(Clone)]
pub struct Pattern {
    source: Arc<str>,
    regex: regex_lite::Regex,
}

impl Pattern {
    /// Compiles `source`; an error names what is wrong with it.
    pub fn new(source: &str) -> Result<Self, String> {
        let regex = regex_lite::Regex::new(source).map_err(|e| e.to_string())?;
        Ok(Pattern {
            source: source.into(),
            regex,
        })
    }

    /// Compiles a pattern written elsewhere (a remote tool's schema), whose
    /// size is not trusted: matching costs its compiled size times the
    /// text's length, so a pattern that compiles to more than
    /// [`IMPORTED_PATTERN_BYTES`] (`^.{0,100000}$`, say) is an error, and
    /// its strings are left for the server to judge.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) fn imported(source: &str) -> Result<Self, String> {
        let regex = regex_lite::RegexBuilder::new(source)
            .size_limit(IMPORTED_PATTERN_BYTES)
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Pattern {
            source: source.into(),
            regex,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether `text` contains a match (JSON Schema semantics: not anchored).
    pub fn is_match(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pattern({:?})", &*self.source)
    }
}

impl Shape {
    /// Any JSON value, `null` included: what a `serde_json::Value` holds.
    pub(crate) const ANY_NULLABLE: Shape = Shape {
        kind: Kind::Any,
        nullable: true,
        description: None,
        constraints: Constraints::NONE,
        value_docs: None,
        written: None,
    };

    /// A shape of this kind, not nullable, with no description or bounds.
    pub fn new(kind: Kind) -> Self {
        Shape {
            kind,
            nullable: false,
            description: None,
            constraints: Constraints::default(),
            value_docs: None,
            written: None,
        }
    }

    /// Sets the kind serde writes, where it differs from the kind it reads:
    /// the output schema shows `written`'s kind, the input schema and the
    /// binder this shape's own.
    pub(crate) fn written_as(mut self, written: Shape) -> Self {
        self.written = Some(Box::new(written.kind));
        self
    }

    /// The kind serde writes: what an output schema describes.
    pub(crate) fn written_kind(&self) -> &Kind {
        self.written.as_deref().unwrap_or(&self.kind)
    }

    /// Sets what an enum's values mean, shown after the description.
    pub fn with_value_docs(mut self, value_docs: impl Into<String>) -> Self {
        self.value_docs = Some(value_docs.into());
        self
    }

    /// The description as the model reads it: the shape's own, then what an
    /// enum's values mean.
    pub fn full_description(&self) -> Option<String> {
        match (&self.description, &self.value_docs) {
            (Some(own), Some(values)) => {
                let own = own.trim_end();
                let stop = if own.ends_with(['.', '!', '?', ':']) { "" } else { "." };
                Some(format!("{own}{stop} {values}"))
            }
            (None, Some(values)) => Some(values.clone()),
            (own, None) => own.clone(),
        }
    }

    /// Sets the description the model reads.
    pub fn describe(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Applies bounds. Numeric and string bounds go to the innermost value
    /// through `Option`, lists and maps (`#[param(min = 1)] ids: Vec<u32>`
    /// bounds each id); item bounds go to the outermost list.
    pub fn constrain(mut self, constraints: Constraints) -> Self {
        let Constraints {
            minimum,
            maximum,
            min_length,
            max_length,
            pattern,
            min_items,
            max_items,
            values,
        } = constraints;
        if min_items.is_some() || max_items.is_some() {
            self.constraints.min_items = min_items.or(self.constraints.min_items);
            self.constraints.max_items = max_items.or(self.constraints.max_items);
        }
        let scalar = Constraints {
            minimum,
            maximum,
            min_length,
            max_length,
            pattern,
            values,
            ..Constraints::default()
        };
        if !scalar.is_empty() {
            self.scalar_mut().merge_scalar(scalar);
        }
        self
    }

    fn scalar_mut(&mut self) -> &mut Shape {
        match self.kind {
            Kind::Array { ref mut items, .. } => items.scalar_mut(),
            Kind::Map { ref mut values } => values.scalar_mut(),
            _ => self,
        }
    }

    fn merge_scalar(&mut self, c: Constraints) {
        let own = &mut self.constraints;
        own.minimum = c.minimum.or(own.minimum.take());
        own.maximum = c.maximum.or(own.maximum.take());
        own.min_length = c.min_length.or(own.min_length);
        own.max_length = c.max_length.or(own.max_length);
        own.pattern = c.pattern.or(own.pattern.take());
        own.values = c.values.or(own.values.take());
    }

    /// The kind's name as JSON Schema spells it (`integer`, `array`, ...);
    /// `any` for [`Kind::Any`].
    pub fn type_name(&self) -> &'static str {
        match self.kind {
            Kind::String | Kind::Enum(_) => "string",
            Kind::Boolean => "boolean",
            Kind::Integer { .. } => "integer",
            Kind::Number { .. } => "number",
            Kind::Array { .. } => "array",
            Kind::Map { .. } | Kind::Object(_) => "object",
            Kind::Any => "any",
        }
    }

    /// The smallest value the schema allows: the user's bound, or 0 for
    /// unsigned integers, or an 8- or 16-bit integer's own minimum.
    pub(crate) fn effective_minimum(&self) -> Option<Number> {
        match (&self.constraints.minimum, &self.kind) {
            (Some(n), _) => Some(n.clone()),
            (None, Kind::Integer { min: 0, .. }) => Some(Number::from(0u8)),
            (None, &Kind::Integer { min, max }) if narrow_integer(min, max) => {
                i64::try_from(min).ok().map(Number::from)
            }
            _ => None,
        }
    }

    /// The largest value the schema allows: the user's bound, or an 8- or
    /// 16-bit integer's own maximum (SPEC section 3).
    pub(crate) fn effective_maximum(&self) -> Option<Number> {
        match (&self.constraints.maximum, &self.kind) {
            (Some(n), _) => Some(n.clone()),
            (None, &Kind::Integer { min, max }) if narrow_integer(min, max) => {
                i64::try_from(max).ok().map(Number::from)
            }
            _ => None,
        }
    }

    /// Renders the portable JSON Schema of SPEC section 3: no `$ref`, no
    /// `$schema`, no title, nested types inlined, `Option` left out of
    /// `required` rather than made `["T", "null"]`.
    pub fn to_json_schema(&self) -> Value {
        self.render(Direction::Input)
    }

    /// The schema of the JSON this type serializes to (a tool's structured
    /// result): as [`Shape::to_json_schema`], except that `Option` fields are
    /// nullable, because serde writes `None` as `null`, and that a derived
    /// type serde writes differently from how it reads it (serialize-only
    /// renames, skipped fields) is described as written.
    pub fn to_output_schema(&self) -> Value {
        self.render(Direction::Output)
    }

    /// Where `value`, a value this type serialized to, holds a `null` that
    /// its output schema refuses (serde writes a float that is not finite
    /// as `null`): the path of the first one (`stats.mean`, `values[2]`),
    /// or `None`.
    pub(crate) fn refused_null(&self, value: &Value) -> Option<String> {
        let mut path = String::new();
        self.find_refused_null(value, &mut path).then_some(path)
    }

    /// Whether `value` holds a refused `null`; `path` is then where.
    fn find_refused_null(&self, value: &Value, path: &mut String) -> bool {
        let within = |shape: &Shape, value: &Value, step: fmt::Arguments<'_>, path: &mut String| {
            let mark = path.len();
            fmt::Write::write_fmt(path, step).expect("writing to a String cannot fail");
            let found = shape.find_refused_null(value, path);
            if !found {
                path.truncate(mark);
            }
            found
        };
        let dot = if path.is_empty() { "" } else { "." };
        match (self.written_kind(), value) {
            (Kind::Any, _) => false,
            (_, Value::Null) => !self.nullable,
            (Kind::Array { items, .. }, Value::Array(values)) => values
                .iter()
                .enumerate()
                .any(|(i, value)| within(items, value, format_args!("[{i}]"), path)),
            (Kind::Map { values }, Value::Object(map)) => map
                .iter()
                .any(|(key, value)| within(values, value, format_args!("{dot}{key}"), path)),
            // A Rust type's fields: no other key has a schema.
            (Kind::Object(object), Value::Object(map)) => object.fields.iter().any(|field| {
                map.get(&field.name)
                    .is_some_and(|value| within(&field.shape, value, format_args!("{dot}{}", field.name), path))
            }),
            _ => false,
        }
    }

    fn render(&self, direction: Direction) -> Value {
        let mut out = Map::new();
        if let Some(d) = self.full_description() {
            out.insert("description".into(), Value::String(d));
        }
        let ty = |name: &str| Value::String(name.into());
        let kind = match direction {
            Direction::Input => &self.kind,
            Direction::Output => self.written_kind(),
        };
        match kind {
            Kind::Any => {}
            Kind::String => {
                out.insert("type".into(), ty("string"));
            }
            Kind::Boolean => {
                out.insert("type".into(), ty("boolean"));
            }
            Kind::Integer { .. } => {
                out.insert("type".into(), ty("integer"));
            }
            Kind::Number { .. } => {
                out.insert("type".into(), ty("number"));
            }
            Kind::Enum(values) => {
                out.insert("type".into(), ty("string"));
                let values = values.iter().cloned().map(Value::String).collect();
                out.insert("enum".into(), Value::Array(values));
            }
            Kind::Array { items, unique } => {
                out.insert("type".into(), ty("array"));
                out.insert("items".into(), items.render(direction));
                if *unique {
                    out.insert("uniqueItems".into(), Value::Bool(true));
                }
            }
            Kind::Map { values } => {
                out.insert("type".into(), ty("object"));
                out.insert("additionalProperties".into(), values.render(direction));
            }
            Kind::Object(object) => {
                out.insert("type".into(), ty("object"));
                object.write_json_schema(&mut out, direction);
            }
        }
        self.write_constraints(&mut out);
        if self.nullable {
            make_nullable(&mut out);
        }
        Value::Object(out)
    }

    fn write_constraints(&self, out: &mut Map<String, Value>) {
        let c = &self.constraints;
        if let Some(n) = self.effective_minimum() {
            out.insert("minimum".into(), Value::Number(n));
        }
        if let Some(n) = self.effective_maximum() {
            out.insert("maximum".into(), Value::Number(n));
        }
        let mut put = |key: &str, v: Option<u64>| {
            if let Some(v) = v {
                out.insert(key.into(), Value::Number(v.into()));
            }
        };
        put("minLength", c.min_length);
        put("maxLength", c.max_length);
        // A map's item bounds count its keys.
        let (min_key, max_key) = match self.kind {
            Kind::Map { .. } => ("minProperties", "maxProperties"),
            _ => ("minItems", "maxItems"),
        };
        put(min_key, c.min_items);
        put(max_key, c.max_items);
        if let Some(p) = &c.pattern {
            out.insert("pattern".into(), Value::String(p.as_str().into()));
        }
        if let Some(values) = &c.values {
            out.insert("enum".into(), Value::Array(values.clone()));
        }
    }
}

/// An integer type of at most 16 bits, whose range the schema states.
fn narrow_integer(min: i128, max: i128) -> bool {
    min >= i128::from(i16::MIN) && max <= i128::from(u16::MAX)
}

/// Which side of a tool a schema describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    /// What the model sends: `Option` fields are simply not required.
    Input,
    /// What a tool returns: serde writes `None` as `null`.
    Output,
}

/// The names a schema node's `required` lists.
pub(crate) fn required_names(node: &Map<String, Value>) -> impl Iterator<Item = &str> {
    node.get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// Adds `note` to a schema node's description, after what it says.
pub(crate) fn append_to_description(node: &mut Map<String, Value>, note: &str) {
    let description = match node.get("description").and_then(Value::as_str) {
        Some(text) if !text.is_empty() => format!("{text} {note}"),
        _ => note.to_owned(),
    };
    node.insert("description".into(), Value::String(description));
}

/// `{"type": "T"}` becomes `{"type": ["T", "null"]}`; an `enum` gains `null`.
pub(crate) fn make_nullable(node: &mut Map<String, Value>) {
    match node.get_mut("type") {
        Some(Value::String(t)) if t != "null" => {
            let t = std::mem::take(t);
            node.insert("type".into(), serde_json::json!([t, "null"]));
        }
        Some(Value::Array(types)) if !types.iter().any(|t| t == "null") => types.push(Value::from("null")),
        _ => {}
    }
    if let Some(Value::Array(values)) = node.get_mut("enum")
        && !values.iter().any(Value::is_null)
    {
        values.push(Value::Null);
    }
    // One value, or null.
    if let Some(one) = node.remove("const") {
        let values = if one.is_null() {
            vec![one]
        } else {
            vec![one, Value::Null]
        };
        node.insert("enum".into(), Value::Array(values));
    }
}

/// Undoes [`make_nullable`].
pub(crate) fn strip_null(node: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = node.get_mut("type") {
        // `["null"]` alone stays the type it is.
        if types.iter().any(|t| t != "null") {
            types.retain(|t| t != "null");
        }
        if let [only] = types.as_slice() {
            let only = only.clone();
            node.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = node.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
}

impl ObjectShape {
    /// An object with these fields; `rejects_unknown` when its
    /// `Deserialize` refuses keys that are no field.
    pub fn new(fields: Vec<Field>, rejects_unknown: bool) -> Self {
        ObjectShape {
            fields,
            rejects_unknown,
            others: None,
            keeps_unknown: false,
        }
    }

    /// The field of this wire name.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The fields' names, for asking of many keys whether they name a field.
    pub(crate) fn names(&self) -> FieldNames<'_> {
        if self.fields.len() <= SCANNED_FIELDS {
            FieldNames::Few(&self.fields)
        } else {
            FieldNames::Many(self.fields.iter().map(|f| f.name.as_str()).collect())
        }
    }

    /// Removes from `map` every key no field names, in one pass.
    pub(crate) fn retain_named(&self, map: &mut Map<String, Value>) {
        let names = self.names();
        map.retain(|key, _| names.contains(key));
    }

    /// The object schema with `properties`, `required` and
    /// `"additionalProperties"` (`false`, or the shape of other keys).
    pub fn to_json_schema(&self) -> Value {
        let mut out = Map::new();
        out.insert("type".into(), Value::String("object".into()));
        self.write_json_schema(&mut out, Direction::Input);
        Value::Object(out)
    }

    fn write_json_schema(&self, out: &mut Map<String, Value>, direction: Direction) {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for field in &self.fields {
            let mut schema = field.shape.render(direction);
            if field.shape.nullable
                && direction == Direction::Input
                && let Some(obj) = schema.as_object_mut()
            {
                // An input field expresses `Option` by not being required.
                strip_null(obj);
            }
            // A `null` default (an `Option`'s `None`) is not shown: an
            // input schema does not admit `null`, and leaving the key out
            // says the same.
            if let (Some(default), Some(obj)) = (&field.default, schema.as_object_mut())
                && !default.is_null()
            {
                obj.insert("default".into(), default.clone());
            }
            properties.insert(field.name.clone(), schema);
            if field.presence == Presence::Required {
                required.push(Value::String(field.name.clone()));
            }
        }
        out.insert("properties".into(), Value::Object(properties));
        out.insert("required".into(), Value::Array(required));
        let others = self
            .others
            .as_ref()
            .map_or(Value::Bool(false), |shape| shape.render(direction));
        out.insert("additionalProperties".into(), others);
    }
}

/// Objects up to this many fields are scanned for a name; larger ones (a
/// remote schema may have thousands) are hashed.
const SCANNED_FIELDS: usize = 16;

/// An object's field names, looked up in time that does not grow with their
/// number once there are many: asking it of every key sent costs O(keys),
/// not O(keys x fields).
pub(crate) enum FieldNames<'s> {
    /// A few fields, scanned.
    Few(&'s [Field]),
    /// Many fields, hashed.
    Many(HashSet<&'s str>),
}

impl FieldNames<'_> {
    /// Whether `key` is a field's name.
    pub(crate) fn contains(&self, key: &str) -> bool {
        match self {
            FieldNames::Few(fields) => fields.iter().any(|f| f.name == key),
            FieldNames::Many(names) => names.contains(key),
        }
    }
}

impl Field {
    /// A field whose presence follows from its shape: `Optional` when the
    /// shape is nullable, `Defaulted` when `default` is set, else `Required`.
    pub fn new(name: impl Into<String>, shape: Shape, has_default: bool, rust_type: &'static str) -> Self {
        let presence = if has_default {
            Presence::Defaulted
        } else if shape.nullable {
            Presence::Optional
        } else {
            Presence::Required
        };
        Field {
            name: name.into(),
            shape,
            presence,
            default: None,
            rust_type,
        }
    }

    /// Records the default's JSON form, shown in the schema.
    pub fn with_default_value(mut self, default: Option<Value>) -> Self {
        self.default = default;
        self
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeSet, HashMap};

    use super::*;
    use crate::ToolParam;
    use serde_json::json;

    #[test]
    fn a_null_is_refused_where_the_output_schema_wants_a_value() {
        let at = |shape: Shape, value: Value| shape.refused_null(&value);
        assert_eq!(at(f64::shape(), json!(null)), Some(String::new()));
        assert_eq!(at(Option::<f64>::shape(), json!(null)), None);
        assert_eq!(at(Value::shape(), json!(null)), None);
        assert_eq!(
            at(Vec::<Vec<f64>>::shape(), json!([[1.0], [2.0, null]])),
            Some("[1][1]".into())
        );
        assert_eq!(at(Vec::<Option<f64>>::shape(), json!([null, 1.0])), None);
        assert_eq!(
            at(HashMap::<String, f32>::shape(), json!({"a": 1.0, "b": null})),
            Some("b".into())
        );
        assert_eq!(at(HashMap::<String, Value>::shape(), json!({"b": null})), None);
    }

    #[test]
    fn narrow_integers_carry_their_type_s_range_unless_a_tighter_bound_is_given() {
        let range = |shape: Shape| {
            let schema = shape.to_json_schema();
            (schema.get("minimum").cloned(), schema.get("maximum").cloned())
        };
        assert_eq!(range(u8::shape()), (Some(json!(0)), Some(json!(255))));
        assert_eq!(range(i8::shape()), (Some(json!(-128)), Some(json!(127))));
        assert_eq!(range(u16::shape()), (Some(json!(0)), Some(json!(65535))));
        assert_eq!(range(i16::shape()), (Some(json!(-32768)), Some(json!(32767))));
        assert_eq!(range(u32::shape()), (Some(json!(0)), None));
        assert_eq!(range(i64::shape()), (None, None));
        let tight = u8::shape().constrain(Constraints::default().minimum(1).maximum(10));
        assert_eq!(range(tight), (Some(json!(1)), Some(json!(10))));
        let low = i16::shape().constrain(Constraints::default().maximum(5));
        assert_eq!(range(low), (Some(json!(-32768)), Some(json!(5))));
    }

    #[test]
    fn unsigned_integers_have_minimum_zero() {
        assert_eq!(u32::shape().to_json_schema(), json!({"type": "integer", "minimum": 0}));
        assert_eq!(i64::shape().to_json_schema(), json!({"type": "integer"}));
    }

    #[test]
    fn numeric_bounds_reach_list_elements_and_item_bounds_the_list() {
        let shape = Vec::<u32>::shape().constrain(Constraints {
            minimum: Some(1.into()),
            max_items: Some(3),
            ..Constraints::default()
        });
        assert_eq!(
            shape.to_json_schema(),
            json!({"type": "array", "items": {"type": "integer", "minimum": 1}, "maxItems": 3})
        );
    }

    #[test]
    fn option_fields_are_left_out_of_required() {
        let object = ObjectShape {
            rejects_unknown: true,
            others: None,
            keeps_unknown: false,
            fields: vec![
                Field::new("a", String::shape().describe("A"), false, "String"),
                Field::new("b", Option::<u8>::shape().describe("B"), false, "Option<u8>"),
                Field::new("c", bool::shape().describe("C"), true, "bool").with_default_value(Some(json!(true))),
            ],
        };
        assert_eq!(
            object.to_json_schema(),
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": "string", "description": "A"},
                    "b": {"type": "integer", "minimum": 0, "maximum": 255, "description": "B"},
                    "c": {"type": "boolean", "description": "C", "default": true},
                },
                "required": ["a"],
                "additionalProperties": false,
            })
        );
    }

    #[test]
    fn nullable_elements_admit_null() {
        assert_eq!(
            Vec::<Option<bool>>::shape().to_json_schema(),
            json!({"type": "array", "items": {"type": ["boolean", "null"]}})
        );
    }

    #[test]
    fn output_schemas_make_option_fields_nullable() {
        let shape = Shape::new(Kind::Object(ObjectShape {
            rejects_unknown: true,
            others: None,
            keeps_unknown: false,
            fields: vec![
                Field::new("a", Option::<String>::shape(), false, "Option<String>"),
                Field::new(
                    "b",
                    Option::<u8>::shape().constrain(Constraints::default()),
                    false,
                    "Option<u8>",
                ),
            ],
        }));
        let input = shape.to_json_schema();
        assert_eq!(input["properties"]["a"], json!({"type": "string"}));
        let output = shape.to_output_schema();
        assert_eq!(output["properties"]["a"], json!({"type": ["string", "null"]}));
        assert_eq!(
            output["properties"]["b"],
            json!({"type": ["integer", "null"], "minimum": 0, "maximum": 255})
        );
        assert_eq!(output["required"], json!([]));
    }

    #[test]
    fn nullable_enums_admit_null_among_their_values() {
        let mut shape = Shape::new(Kind::Enum(vec!["a".into()]));
        shape.nullable = true;
        assert_eq!(
            shape.to_json_schema(),
            json!({"type": ["string", "null"], "enum": ["a", null]})
        );
    }

    #[test]
    fn numeric_bounds_reach_map_values_and_item_bounds_count_keys() {
        let shape = HashMap::<String, u32>::shape().constrain(Constraints {
            minimum: Some(1.into()),
            max_items: Some(3),
            ..Constraints::default()
        });
        assert_eq!(
            shape.to_json_schema(),
            json!({"type": "object", "additionalProperties": {"type": "integer", "minimum": 1}, "maxProperties": 3})
        );
    }

    #[test]
    fn sets_are_unique_and_maps_have_additional_properties() {
        assert_eq!(
            BTreeSet::<String>::shape().to_json_schema(),
            json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true})
        );
        assert_eq!(
            HashMap::<String, f64>::shape().to_json_schema(),
            json!({"type": "object", "additionalProperties": {"type": "number"}})
        );
    }
}
