//! Reading a JSON Schema written elsewhere (a remote MCP tool's
//! `inputSchema`) into the runtime's own [`Shape`], so the lenient binder
//! checks and coerces arguments to a remote tool as it does for a native
//! one.
//!
//! The subset read: `type` (one type, or one type and `"null"`),
//! `properties`, `required`, `items`, `enum` and `const` (strings, or
//! numbers or booleans of the node's type), `minimum`/`maximum`, `minLength`/`maxLength`, `pattern`,
//! `minItems`/`maxItems`, `uniqueItems`, `additionalProperties`,
//! `exclusiveMinimum`/`exclusiveMaximum` of integers (as inclusive bounds),
//! `anyOf`/`oneOf` with a `null` member (read as nullable, or optional for a
//! property that is not required), `default`, `description`, and local
//! `$ref`s (JSON pointers such as `#/$defs/...`, or `$anchor` names), which
//! are inlined; one that cannot be followed is any value. A root
//! `anyOf`, `oneOf` or `allOf` of objects is folded into the root object
//! (see [`flatten_root_union`]). A value
//! whose schema uses anything else ([`PASSED_THROUGH`]) is bound as any JSON
//! value: it passes to the remote tool unchanged, and its schema fragment is
//! kept as written. Each keyword binds values of its own type only. Keys
//! that a nested object's schema leaves open are kept, with a warning.
//!
//! A property listed in `required` stays required when it also allows
//! `null`: the binder refuses its absence and passes its `null` on. A list
//! whose schema says `uniqueItems` is sent without repeats (the first of
//! each value kept, in order), as a native set keeps one of each, and its
//! `minItems`/`maxItems` count what is sent: `[1, 1, 1]` goes on as `[1]`.
//!
//! The schema is also normalised for the provider formats as a native tool's
//! is: no `$ref`, `$defs` or `$schema`, no `title`, no `anyOf` with `null`,
//! no `default: null`, no property nullable (an optional one is left
//! out of `required`, a required one stays in it), and no array without
//! `items`. What is sent on is well-formed 2020-12 whatever the server
//! wrote (see [`repair`]): one malformed tool would fail every request.
//! At the root, keywords outside the subset (`minProperties`, `not`) are
//! the server's to judge and never cost the parameters their binding;
//! those a provider refuses at the root are said in the description. A
//! `pattern` that compiles too large to match cheaply is left to the
//! server. A description longer than 4 KiB is cut, with a marker. The
//! tool's `outputSchema` is made well-formed the same way (see
//! [`ImportedSchema::with_output_schema`]).

use serde_json::{Map, Value};

use super::local_keys::LocalKeys;
use super::{
    Constraints, Field, Kind, ObjectShape, Pattern, Presence, Shape, append_to_description, make_nullable,
    required_names, strip_null,
};
use crate::text::clip;

/// How deep `$ref`s and nesting are followed; deeper parts are any value.
const MAX_DEPTH: usize = 32;

/// The longest description an imported tool keeps, its own or one node's
/// of its schema, in bytes (4 KiB); a longer one is cut, ending in a
/// marker that says how much was left out. Every tool offered is sent to
/// the model with each request, so one server cannot fill the model's
/// context with a single description.
const MAX_DESCRIPTION_BYTES: usize = 4 << 10;

/// A remote tool's parameters, read from its `inputSchema`.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ImportedSchema {
    /// The parameters as the binder checks them.
    pub params: ObjectShape,
    /// The schema normalised for the provider formats.
    pub schema: Value,
    /// The tool's output schema, well-formed, when
    /// [`ImportedSchema::with_output_schema`] was given one that describes
    /// objects.
    pub output_schema: Option<Value>,
}

/// Reads a tool's `inputSchema` (an object schema). A schema that is not
/// an object schema gives no parameters and unknown keys passed through.
#[cfg(test)]
pub(crate) fn import_input_schema(input_schema: &Value) -> ImportedSchema {
    imported(object_root(input_schema))
}

/// Reads a tool's `inputSchema` (an object schema; one that is not gives
/// no parameters and unknown keys passed through), each property key that
/// `valid` refuses given a local key by `choose` first (see [`LocalKeys`]).
pub(crate) fn import_input_schema_with_local_keys(
    input_schema: &Value,
    valid: fn(&str) -> bool,
    choose: fn(&[&str]) -> Vec<String>,
) -> (ImportedSchema, LocalKeys) {
    let mut root = object_root(input_schema);
    let keys = LocalKeys::give(&mut root, valid, choose);
    (imported(root), keys)
}

/// The input schema inlined, and made an object schema at its root.
fn object_root(input_schema: &Value) -> Value {
    let mut schema = inline(input_schema, input_schema, 0, &mut Inlining::new());
    if !is_object_schema(&schema) {
        // No object schema (`{"type": "string"}`, `properties` that are no
        // object, `true`): what the provider APIs would refuse, failing
        // every request, is replaced by an open object, and the server
        // judges the arguments.
        schema = serde_json::json!({"type": "object"});
    }
    if let Value::Object(node) = &mut schema {
        flatten_root_union(node);
        // The arguments are an object: a root that also allowed `null`
        // (a union with a `null` member, folded) does not.
        strip_null(node);
        node.insert("type".into(), Value::from("object"));
        node.entry("properties").or_insert_with(|| Value::Object(Map::new()));
        move_root_checks_to_description(node);
    }
    schema
}

/// The parameters and the provider schema of an object schema from
/// [`object_root`].
fn imported(mut schema: Value) -> ImportedSchema {
    let shape = import_shape(&root_for_binding(&schema), &mut { MAX_COPIED_BYTES });
    for_providers(&mut schema);
    let params = match shape.kind {
        Kind::Object(object) => object,
        _ => ObjectShape::default(),
    };
    ImportedSchema {
        params,
        schema,
        output_schema: None,
    }
}

impl ImportedSchema {
    /// Reads the tool's `outputSchema` too: made well-formed 2020-12 as
    /// the input schema is (its `$ref`s inlined, no `$schema` or `$defs`,
    /// each node [`repair`]ed: a `type` no type is called, a `required`
    /// that is no list, are dropped), and kept only when it describes
    /// objects, as MCP's output schemas must; any other is left out, and
    /// the tool's results then carry no schema for their structured
    /// content. Its nullable properties stay nullable: it says what the
    /// server returns, which a client may check.
    pub(crate) fn with_output_schema(mut self, output_schema: Option<&Value>) -> Self {
        self.output_schema = output_schema
            .map(|schema| inline(schema, schema, 0, &mut Inlining::new()))
            .filter(|schema| schema.get("type") == Some(&Value::from("object")));
        self
    }

    /// A property key of the schema, at any depth, that `valid` refuses.
    pub(crate) fn refused_property_key(&self, valid: impl Fn(&str) -> bool) -> Option<&str> {
        let mut pending: Vec<&Value> = vec![&self.schema];
        while let Some(node) = pending.pop() {
            let Value::Object(node) = node else {
                continue;
            };
            for (key, value) in node {
                let key = key.as_str();
                match value {
                    Value::Object(schemas) if SCHEMA_MAP_KEYWORDS.contains(&key) => {
                        if key == "properties"
                            && let Some(refused) = schemas.keys().find(|name| !valid(name))
                        {
                            return Some(refused);
                        }
                        pending.extend(schemas.values());
                    }
                    Value::Array(members) if SCHEMA_LIST_KEYWORDS.contains(&key) => pending.extend(members),
                    Value::Object(_) if SCHEMA_KEYWORDS.contains(&key) => pending.push(value),
                    _ => {}
                }
            }
        }
        None
    }
}

/// Keywords of a root that constrain the whole argument object in ways a
/// provider refuses at the root (OpenAI: no `not`, `enum` or `anyOf`
/// there): said in the description instead, and judged by the server.
const ROOT_CHECKS: &[&str] = &["not", "enum", "const", "if", "then", "else"];

/// The most characters of root checks quoted in the description.
const ROOT_CHECKS_QUOTED: usize = 512;

/// Moves [`ROOT_CHECKS`] into the root's description.
fn move_root_checks_to_description(root: &mut Map<String, Value>) {
    let moved: Map<String, Value> = ROOT_CHECKS
        .iter()
        .filter_map(|key| root.remove(*key).map(|value| ((*key).to_owned(), value)))
        .collect();
    if moved.is_empty() {
        return;
    }
    let mut quoted = Value::Object(moved).to_string();
    if quoted.chars().count() > ROOT_CHECKS_QUOTED {
        quoted = quoted.chars().take(ROOT_CHECKS_QUOTED).collect::<String>() + "...";
    }
    append_to_description(root, &format!("The server also checks the arguments against: {quoted}"));
}

/// The root as the binder reads it: its properties and `required`,
/// whatever else it says. A keyword outside the subset there
/// (`minProperties`, `dependentRequired`, `patternProperties`) is the
/// server's to judge; read as written it would make the whole argument
/// object any value, its parameters lost to binding and to Gemini.
fn root_for_binding(root: &Value) -> Value {
    let Value::Object(root) = root else {
        return root.clone();
    };
    let open = root.contains_key("patternProperties");
    let kept = root
        .iter()
        .filter(|(key, _)| {
            let key = key.as_str();
            !(PASSED_THROUGH.contains(&key)
                || ["minProperties", "maxProperties", "patternProperties"].contains(&key)
                // Keys a pattern admits are no unknown keys to refuse.
                || (open && key == "additionalProperties"))
        })
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    Value::Object(kept)
}

/// Whether `node` can be a tool's input schema: an object node whose
/// `type`, if any, is `object` (alone or beside `null`), whose
/// `properties`, if any, is an object and whose `required`, if any, lists
/// names.
fn is_object_schema(node: &Value) -> bool {
    let Value::Object(node) = node else {
        return false;
    };
    let object_type = match node.get("type") {
        None => true,
        Some(Value::String(ty)) => ty == "object",
        Some(Value::Array(types)) => {
            types.iter().any(|ty| ty == "object") && types.iter().all(|ty| ty == "object" || ty == "null")
        }
        Some(_) => false,
    };
    let required = match node.get("required") {
        None => true,
        Some(Value::Array(names)) => names.iter().all(Value::is_string),
        Some(_) => false,
    };
    object_type && required && node.get("properties").is_none_or(Value::is_object)
}

/// Reads one normalised schema node into a [`Shape`].
fn import_shape(node: &Value, copies_left: &mut usize) -> Shape {
    let Value::Object(node) = node else {
        return any_value();
    };
    let ty = single_type(node);
    let mut constraints = Constraints {
        minimum: node.get("minimum").and_then(Value::as_number).cloned(),
        maximum: node.get("maximum").and_then(Value::as_number).cloned(),
        min_length: node.get("minLength").and_then(Value::as_u64),
        max_length: node.get("maxLength").and_then(Value::as_u64),
        pattern: node
            .get("pattern")
            .and_then(Value::as_str)
            .and_then(|p| Pattern::imported(p).ok()),
        min_items: node.get("minItems").and_then(Value::as_u64),
        max_items: node.get("maxItems").and_then(Value::as_u64),
        values: None,
    };
    let strings = |key: &str| -> Option<Vec<String>> {
        let values = match node.get(key)? {
            Value::Array(values) => values.clone(),
            one => vec![one.clone()],
        };
        values
            .into_iter()
            .filter(|v| !v.is_null())
            .map(|v| v.as_str().map(str::to_owned))
            .collect()
    };
    let passes_through = PASSED_THROUGH.iter().any(|key| node.contains_key(*key))
        || (ty != Some("integer") && (node.contains_key("exclusiveMinimum") || node.contains_key("exclusiveMaximum")));
    let kind = if passes_through {
        Kind::Any
    } else if only_null(node) {
        // `null` and nothing else: an enum of no value, nullable below.
        Kind::Enum(Vec::new())
    } else if let Some(mut values) = strings("const").or_else(|| strings("enum")) {
        if matches!(ty, Some("string") | None) {
            // The string keywords beside the list judge it once, here.
            let text = Shape::new(Kind::String).constrain(constraints.clone());
            values.retain(|value| text.check_text(value).is_ok());
            Kind::Enum(values)
        } else {
            Kind::Any
        }
    } else if let Some(values) = listed(node) {
        // Numbers or booleans: the kind they share, each value checked.
        match scalar_type(ty, &values) {
            Some(ty) => {
                constraints.values = Some(values);
                typed_kind(ty, node, &mut constraints, copies_left)
            }
            None => Kind::Any,
        }
    } else {
        ty.map_or(Kind::Any, |ty| typed_kind(ty, node, &mut constraints, copies_left))
    };
    if let Kind::Integer { .. } = kind {
        exclusive_bounds_of_integer(node, &mut constraints);
    }
    let constraints = constraints.applying_to(&kind);
    let mut shape = Shape::new(kind).constrain(constraints);
    // What passes through takes `null` as any value; otherwise `null`
    // must pass every keyword (a type list with `null` beside an `enum`
    // without it still refuses it).
    shape.nullable = passes_through || admits_null(node);
    shape.description = node.get("description").and_then(Value::as_str).map(str::to_owned);
    shape
}

/// Keywords outside the subset read: a node that uses one is bound as any
/// value and passes to the remote tool unchanged, for its server to judge.
/// (`exclusiveMinimum` and `exclusiveMaximum` are read for integers.)
const PASSED_THROUGH: &[&str] = &[
    "$ref",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "prefixItems",
    "additionalItems",
    "contains",
    "minContains",
    "maxContains",
    "unevaluatedItems",
    "unevaluatedProperties",
    "propertyNames",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "multipleOf",
];

/// An integer's `exclusiveMinimum`/`exclusiveMaximum` (a number, or
/// `true` beside `minimum`/`maximum` as older drafts write it), read as
/// the inclusive bound it amounts to: `> 2.5` is `>= 3`, `> 5` is `>= 6`.
/// Whole bounds are read exactly, past 2^53 too.
fn exclusive_bounds_of_integer(node: &Map<String, Value>, constraints: &mut Constraints) {
    use serde_json::Number;
    // A bound as a whole number: exact for an integer, a fraction rounded
    // up (`up`) or down.
    let whole = |n: &Number, up: bool| -> Option<i128> {
        if let Some(i) = n.as_i64() {
            return Some(i128::from(i));
        }
        if let Some(u) = n.as_u64() {
            return Some(i128::from(u));
        }
        let f = n.as_f64().filter(|f| f.is_finite() && f.abs() < 1e30)?;
        Some(if up { f.ceil() } else { f.floor() } as i128)
    };
    let number = |n: i128| -> Option<Number> {
        match i64::try_from(n) {
            Ok(i) => Some(Number::from(i)),
            Err(_) => u64::try_from(n).ok().map(Number::from),
        }
    };
    let exclusive = |key: &str, inclusive: Option<&Number>| -> Option<Number> {
        match node.get(key)? {
            Value::Number(n) => Some(n.clone()),
            Value::Bool(true) => inclusive.cloned(),
            _ => None,
        }
    };
    if let Some(least) = exclusive("exclusiveMinimum", constraints.minimum.as_ref())
        .and_then(|above| whole(&above, false))
        .map(|n| n + 1)
    {
        let own = constraints.minimum.as_ref().and_then(|n| whole(n, true));
        if own.is_none_or(|own| own < least) {
            constraints.minimum = number(least).or(constraints.minimum.take());
        }
    }
    if let Some(most) = exclusive("exclusiveMaximum", constraints.maximum.as_ref())
        .and_then(|below| whole(&below, true))
        .map(|n| n - 1)
    {
        let own = constraints.maximum.as_ref().and_then(|n| whole(n, false));
        if own.is_none_or(|own| own > most) {
            constraints.maximum = number(most).or(constraints.maximum.take());
        }
    }
}

/// Any JSON value, `null` included: what a schema of no keywords, or
/// `true`, admits.
fn any_value() -> Shape {
    let mut shape = Shape::new(Kind::Any);
    shape.nullable = true;
    shape
}

/// The kind of a node of type `ty`.
fn typed_kind(ty: &str, node: &Map<String, Value>, constraints: &mut Constraints, copies_left: &mut usize) -> Kind {
    match ty {
        "string" => Kind::String,
        "boolean" => Kind::Boolean,
        "integer" => Kind::Integer {
            min: i128::from(i64::MIN),
            max: i128::from(u64::MAX),
        },
        "number" => Kind::Number { single: false },
        "array" => Kind::Array {
            items: Box::new(
                node.get("items")
                    .map_or_else(any_value, |items| import_shape(items, copies_left)),
            ),
            unique: node.get("uniqueItems") == Some(&Value::Bool(true)),
        },
        "object" => object_kind(node, constraints, copies_left),
        _ => Kind::Any,
    }
}

/// The values of a node's `const`, or else of its `enum`, less `null`.
fn listed(node: &Map<String, Value>) -> Option<Vec<Value>> {
    match (node.get("const"), node.get("enum")) {
        (Some(one), _) => Some(vec![one.clone()]),
        (None, Some(Value::Array(values))) => Some(values.iter().filter(|v| !v.is_null()).cloned().collect()),
        // An `enum` that is no list: outside the subset.
        (None, Some(_)) => Some(Vec::new()),
        (None, None) => None,
    }
}

/// The type listed values of numbers or booleans are checked as: the
/// node's own, when every value is of it, or the one they share when the
/// node names none (`integer` for whole numbers only). `None` for values of
/// mixed or other types, or none at all.
fn scalar_type(ty: Option<&str>, values: &[Value]) -> Option<&'static str> {
    let integer = |v: &Value| v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0);
    let is = |ty: &str| -> bool {
        !values.is_empty()
            && values.iter().all(|v| match ty {
                "integer" => integer(v),
                "number" => v.is_number(),
                "boolean" => v.is_boolean(),
                _ => false,
            })
    };
    let candidates: &[&'static str] = match ty {
        Some("integer") => &["integer"],
        Some("number") => &["number"],
        Some("boolean") => &["boolean"],
        Some(_) => &[],
        None => &["integer", "number", "boolean"],
    };
    candidates.iter().copied().find(|ty| is(ty))
}

fn object_kind(node: &Map<String, Value>, constraints: &mut Constraints, copies_left: &mut usize) -> Kind {
    // Keys matching a pattern are outside the subset: the object passes
    // unchecked.
    if node.contains_key("patternProperties") {
        return Kind::Any;
    }
    let additional = node.get("additionalProperties");
    let rejects_unknown = additional == Some(&Value::Bool(false));
    let no_properties = Map::new();
    let properties = match node.get("properties") {
        Some(Value::Object(properties)) => Some(properties),
        // No key at all.
        _ if rejects_unknown => return Kind::Object(ObjectShape::new(Vec::new(), true)),
        // Keys that must be sent, of values the other keys' schema gives.
        _ if required_names(node).next().is_some() => Some(&no_properties),
        _ => None,
    };
    // A bound on the number of keys of an object with fixed fields is
    // outside the subset.
    if properties.is_some() && (node.contains_key("minProperties") || node.contains_key("maxProperties")) {
        return Kind::Any;
    }
    let Some(properties) = properties else {
        // Free keys: a map, its values of the additional schema, if any.
        constraints.min_items = node.get("minProperties").and_then(Value::as_u64);
        constraints.max_items = node.get("maxProperties").and_then(Value::as_u64);
        let values = match additional {
            Some(schema @ Value::Object(_)) => import_shape(schema, copies_left),
            _ => any_value(),
        };
        return Kind::Map {
            values: Box::new(values),
        };
    };
    // Each required name by its first place in the list, looked up rather
    // than searched for: a schema may list many thousands.
    let mut required: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut listed: Vec<&str> = Vec::new();
    for name in required_names(node) {
        required.entry(name).or_insert_with(|| {
            listed.push(name);
            listed.len() - 1
        });
    }
    let mut fields: Vec<Field> = properties
        .iter()
        .map(|(name, schema)| {
            let shape = import_shape(schema, copies_left);
            let default = schema.get("default").cloned();
            // Required stays required when `null` is allowed: the key must
            // be sent, `null` is one of its values.
            // A nullable value beside a default (`["integer", "null"]` with
            // `"default": 30`) takes `null` as a value of its own: the
            // server applies its default to what is not sent.
            let presence = if required.contains_key(name.as_str()) {
                Presence::Required
            } else if default.is_some() && !shape.nullable {
                Presence::Defaulted
            } else {
                Presence::Optional
            };
            let mut field = Field::new(name.clone(), shape, false, "remote").with_default_value(default);
            field.presence = presence;
            field
        })
        .collect();
    // A required name no property defines is still required: its value
    // may be anything the object's other keys may be. Each such name is a
    // copy of the other keys' schema, and a schema may list thousands of
    // names beside a large one: copies come out of one budget for the whole
    // import, and past it a name takes any value (the server still checks
    // it).
    let mut others_size = None;
    for name in listed.iter().filter(|name| !properties.contains_key(**name)) {
        let others_size = *others_size.get_or_insert_with(|| additional.map_or(0, flat_size));
        let shape = match additional {
            Some(schema @ Value::Object(_)) if *copies_left >= others_size => {
                *copies_left -= others_size;
                import_shape(schema, copies_left)
            }
            _ => any_value(),
        };
        let mut field = Field::new((*name).to_owned(), shape, false, "remote");
        field.presence = Presence::Required;
        fields.push(field);
    }
    // The properties arrive with their keys sorted (serde_json keeps no
    // order), but `required` is a list, in the order its writer gave (a
    // Python or TypeScript SDK: the declaration order). So the required
    // parameters come first in that order, then the others by name.
    fields.sort_by_key(|field| required.get(field.name.as_str()).copied().unwrap_or(usize::MAX));
    let mut object = ObjectShape::new(fields, rejects_unknown);
    // Keys the schema leaves open are the server's: warned about, kept.
    object.keeps_unknown = !rejects_unknown;
    // Other keys of a given schema are bound as it says.
    if let Some(schema @ Value::Object(other)) = additional
        && !other.is_empty()
    {
        object.others = Some(Box::new(import_shape(schema, copies_left)));
    }
    Kind::Object(object)
}

/// Whether `null` passes each of the node's `type`, `enum` and `const`.
fn admits_null(node: &Map<String, Value>) -> bool {
    let by_type = match node.get("type") {
        None => true,
        Some(Value::String(ty)) => ty == "null",
        Some(Value::Array(types)) => types.iter().any(|ty| ty == "null"),
        Some(_) => false,
    };
    let by_enum = match node.get("enum") {
        None => true,
        Some(Value::Array(values)) => values.iter().any(Value::is_null),
        Some(_) => false,
    };
    by_type && by_enum && node.get("const").is_none_or(Value::is_null)
}

/// Whether the node's `type` admits `null` and no other value.
fn only_null(node: &Map<String, Value>) -> bool {
    match node.get("type") {
        Some(Value::String(ty)) => ty == "null",
        Some(Value::Array(types)) => !types.is_empty() && types.iter().all(|ty| ty == "null"),
        _ => false,
    }
}

/// The node's one type besides `null`; `None` for none, or several.
fn single_type(node: &Map<String, Value>) -> Option<&str> {
    match node.get("type") {
        Some(Value::String(ty)) => Some(ty.as_str()),
        Some(Value::Array(types)) => {
            let mut others = types.iter().filter_map(Value::as_str).filter(|ty| *ty != "null");
            match (others.next(), others.next()) {
                (Some(one), None) => Some(one),
                // Several types: bound as any value.
                _ => None,
            }
        }
        _ => None,
    }
}

/// The most bytes of definitions inlining copies in all (each `$ref`
/// resolved costs the size of what it names); past it, a `$ref` is any
/// value. Keeps a schema whose definitions refer to each other many times
/// over (four uses a level, ten levels deep) from growing without bound.
const MAX_INLINED_BYTES: usize = 256 * 1024;

/// The most bytes of the other keys' schema that the required names no
/// property defines may copy in all, over one import (see `object_kind`).
const MAX_COPIED_BYTES: usize = 256 * 1024;

/// What inlining one schema carries along.
struct Inlining<'a> {
    /// The `$ref`s being resolved: meeting one again is a cycle.
    resolving: Vec<String>,
    /// How many more bytes of definitions it may copy.
    bytes_left: usize,
    /// The size of each definition named so far, by where it is: each is
    /// measured once, however many `$ref`s name it.
    sizes: std::collections::HashMap<*const Value, usize>,
    /// The document's nodes by `$anchor`, gathered at the first `$ref` to
    /// one (in one walk, not one a `$ref`).
    anchors: Option<std::collections::HashMap<&'a str, &'a Value>>,
}

impl<'a> Inlining<'a> {
    /// The state at the start of one schema.
    fn new() -> Self {
        Inlining {
            resolving: Vec::new(),
            bytes_left: MAX_INLINED_BYTES,
            sizes: std::collections::HashMap::new(),
            anchors: None,
        }
    }

    /// The node a local `$ref` names, and its size: a JSON pointer into
    /// the document (`#/$defs/Name`, percent-encoded as a URI fragment
    /// is), or a plain name an `$anchor` gives (`#name`).
    fn target(&mut self, root: &'a Value, reference: &str) -> Option<(&'a Value, usize)> {
        let fragment = percent_decoded(reference.strip_prefix('#')?)?;
        let target = if fragment.is_empty() {
            root
        } else if fragment.starts_with('/') {
            root.pointer(&fragment)?
        } else {
            let anchors = self.anchors.get_or_insert_with(|| {
                let mut anchors = std::collections::HashMap::new();
                gather_anchors(root, &mut anchors, 0);
                anchors
            });
            anchors.get(fragment.as_str()).copied()?
        };
        let size = *self
            .sizes
            .entry(target as *const Value)
            .or_insert_with(|| flat_size(target));
        Some((target, size))
    }
}

/// Keywords whose value is one schema.
const SCHEMA_KEYWORDS: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
    "contentSchema",
];

/// Keywords whose value is a list of schemas (`items` too, in the tuple
/// form of older drafts).
const SCHEMA_LIST_KEYWORDS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems", "items"];

/// Keywords whose value maps names to schemas (`dependencies` of older
/// drafts maps some to lists of names, which stay as written).
const SCHEMA_MAP_KEYWORDS: &[&str] = &["properties", "patternProperties", "dependentSchemas", "dependencies"];

/// Inlines local `$ref`s, folds `anyOf`/`oneOf` with a `null` member into a
/// nullable type, drops `$schema`, `$defs`, `definitions` and `title`, and
/// leaves optional properties non-nullable. A `$ref` it cannot follow (to
/// another document, or to nothing) becomes any value: no `$ref` is left
/// pointing at the definitions it drops. A `true` schema becomes `{}` and
/// `false` `{"not": {}}`, as providers read only objects; a value that is
/// no schema at all (`"properties": {"a": "string"}`) becomes `{}`, any
/// value, for the server to judge. Each node is [`repair`]ed.
fn inline<'a>(node: &'a Value, root: &'a Value, depth: usize, state: &mut Inlining<'a>) -> Value {
    let object = match node {
        Value::Object(object) => object,
        Value::Bool(false) => return serde_json::json!({"not": {}}),
        _ => return Value::Object(Map::new()),
    };
    if depth > MAX_DEPTH {
        return Value::Object(Map::new());
    }
    if let Some(reference) = object.get("$ref") {
        let Some((target, size)) = reference.as_str().and_then(|reference| state.target(root, reference)) else {
            return describe_only(object);
        };
        let reference = reference.as_str().unwrap_or_default();
        // A recursive type, or a schema whose `$ref`s would make it huge:
        // below this point, any value.
        if state.resolving.iter().any(|r| r == reference) || size > state.bytes_left {
            return describe_only(object);
        }
        state.bytes_left -= size;
        state.resolving.push(reference.to_owned());
        let resolved = inline(target, root, depth + 1, state);
        state.resolving.pop();
        let mut siblings: Map<String, Value> = object
            .iter()
            .filter(|(key, _)| *key != "$ref" && !is_dropped(key))
            .map(|(key, value)| (key.clone(), inline_keyword(key, value, root, depth, state)))
            .collect();
        repair(&mut siblings);
        return with_siblings(resolved, siblings);
    }
    let mut out = Map::new();
    for (key, value) in object {
        // A `null` default says no more than leaving the value out.
        if is_dropped(key) || (key == "default" && value.is_null()) {
            continue;
        }
        out.insert(key.clone(), inline_keyword(key, value, root, depth, state));
    }
    repair(&mut out);
    fold_null_union(&mut out, "anyOf");
    fold_null_union(&mut out, "oneOf");
    // `{"allOf": [X], ...}`, pydantic's way to describe a field of a
    // referenced model or enum, is X with the keys beside it, as a `$ref`
    // with siblings is: bound as X, not as any value.
    // (The root's own `allOf` is folded with its other unions, keeping the
    // root's keys: see `flatten_root_union`.)
    if depth > 0
        && matches!(out.get("allOf"), Some(Value::Array(members)) if members.len() == 1 && members[0].is_object())
        && let Some(Value::Array(mut members)) = out.remove("allOf")
        && let Some(member) = members.pop()
    {
        return with_siblings(member, out);
    }
    Value::Object(out)
}

/// The types JSON Schema names.
const TYPES: &[&str] = &["null", "boolean", "object", "array", "number", "string", "integer"];

/// Keywords whose value is a count: a whole number, zero or more.
const COUNT_KEYWORDS: &[&str] = &[
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minContains",
    "maxContains",
];

/// Makes one node well-formed JSON Schema 2020-12, which every provider
/// demands (the Anthropic API refuses a request when one of its tools has
/// a malformed schema): draft 4's forms are written as 2020-12 writes them,
/// a count written as `2.0` is `2`, and a keyword whose value no draft
/// admits (a `type` no type is called, a `pattern` that is no string) is
/// dropped. The server still judges the arguments by its own schema.
fn repair(node: &mut Map<String, Value>) {
    // Draft 4: a `true` exclusive bound makes the bound beside it exclusive.
    for (exclusive, bound) in [("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")] {
        if let Some(Value::Bool(on)) = node.get(exclusive) {
            let on = *on;
            node.remove(exclusive);
            if on && let Some(number @ Value::Number(_)) = node.remove(bound) {
                node.insert(exclusive.into(), number);
            }
        }
    }
    // Draft 4: `items` as a list gives the first items' schemas, and
    // `additionalItems` the rest's.
    if matches!(node.get("items"), Some(Value::Array(_)))
        && let Some(prefix) = node.remove("items")
    {
        node.entry("prefixItems").or_insert(prefix);
        if let Some(rest) = node.remove("additionalItems") {
            node.insert("items".into(), rest);
        }
    }
    for key in COUNT_KEYWORDS {
        let count = node.get(*key).map(|value| match value {
            Value::Number(n) => n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < 2f64.powi(53))
                    .map(|f| f as u64)
            }),
            _ => None,
        });
        match count {
            Some(Some(count)) => {
                node.insert((*key).into(), Value::from(count));
            }
            Some(None) => {
                node.remove(*key);
            }
            None => {}
        }
    }
    node.retain(|key, value| match key.as_str() {
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => value.is_number(),
        "multipleOf" => value.as_f64().is_some_and(|f| f > 0.0),
        "pattern" | "description" | "title" | "format" | "$comment" => value.is_string(),
        "uniqueItems" => value.is_boolean(),
        "enum" => value.is_array(),
        "properties" | "patternProperties" | "dependentSchemas" | "dependencies" => value.is_object(),
        "anyOf" | "oneOf" | "allOf" | "prefixItems" => value.as_array().is_some_and(|members| !members.is_empty()),
        _ => true,
    });
    if let Some(Value::String(description)) = node.get_mut("description") {
        cut_description(description);
    }
    match node.get_mut("type") {
        Some(Value::Array(types)) => {
            let mut seen = Vec::with_capacity(types.len());
            types.retain(|ty| match ty.as_str() {
                Some(name) if TYPES.contains(&name) && !seen.contains(&name.to_owned()) => {
                    seen.push(name.to_owned());
                    true
                }
                _ => false,
            });
            if types.is_empty() {
                node.remove("type");
            }
        }
        Some(Value::String(ty)) if TYPES.contains(&ty.as_str()) => {}
        Some(_) => {
            node.remove("type");
        }
        None => {}
    }
    match node.get_mut("required") {
        Some(Value::Array(names)) => {
            let mut seen = std::collections::HashSet::new();
            names.retain(|name| name.as_str().is_some_and(|name| seen.insert(name.to_owned())));
        }
        Some(_) => {
            node.remove("required");
        }
        None => {}
    }
}

/// What a `$ref` names (`resolved`) with the keys written beside it, which
/// apply as well (as in an `allOf`): an annotation beside it (a
/// description, a default) wins; its properties and required names join
/// the named ones (a property both define merged by the same rule); a
/// keyword the named schema lacks is added. Where the two cannot be one
/// schema (a keyword both set differently, properties added to a closed
/// object), the node is the `allOf` of both, bound as any value and
/// judged by the server.
fn with_siblings(resolved: Value, siblings: Map<String, Value>) -> Value {
    let Value::Object(mut merged) = resolved else {
        return resolved;
    };
    if siblings.is_empty() {
        return Value::Object(merged);
    }
    let closed = merged.get("additionalProperties") == Some(&Value::Bool(false));
    let mut conflict = false;
    for (key, value) in &siblings {
        match (key.as_str(), merged.get_mut(key), value) {
            (annotation, _, value) if ANNOTATIONS.contains(&annotation) => {
                merged.insert(key.clone(), value.clone());
            }
            ("properties", Some(Value::Object(own)), Value::Object(added)) => {
                for (name, schema) in added {
                    match own.get_mut(name) {
                        Some(existing) if existing != schema => {
                            let added = schema.as_object().cloned().unwrap_or_default();
                            *existing = with_siblings(existing.take(), added);
                        }
                        Some(_) => {}
                        None if closed => conflict = true,
                        None => {
                            own.insert(name.clone(), schema.clone());
                        }
                    }
                }
            }
            ("required", Some(Value::Array(own)), Value::Array(added)) => {
                // By their JSON text, which equal values share: one lookup a
                // name, however many are listed.
                let mut listed: std::collections::HashSet<String> = own.iter().map(Value::to_string).collect();
                for name in added {
                    if listed.insert(name.to_string()) {
                        own.push(name.clone());
                    }
                }
            }
            (_, Some(existing), value) => conflict |= existing != value,
            (_, None, value) => {
                merged.insert(key.clone(), value.clone());
            }
        }
    }
    if conflict {
        return serde_json::json!({"allOf": [Value::Object(merged), Value::Object(siblings)]});
    }
    Value::Object(merged)
}

/// The value of keyword `key` of a node at `depth`, its schemas inlined.
fn inline_keyword<'a>(key: &str, value: &'a Value, root: &'a Value, depth: usize, state: &mut Inlining<'a>) -> Value {
    let mut inline_one = |schema: &'a Value| inline(schema, root, depth + 1, state);
    match value {
        // `"additionalProperties": false` stays as written.
        Value::Bool(_) if key == "additionalProperties" => value.clone(),
        Value::Array(members) if SCHEMA_LIST_KEYWORDS.contains(&key) => {
            Value::Array(members.iter().map(inline_one).collect())
        }
        Value::Object(schemas) if SCHEMA_MAP_KEYWORDS.contains(&key) => Value::Object(
            schemas
                .iter()
                .map(|(name, schema)| match schema {
                    // Names the key requires, not a schema.
                    Value::Array(_) if key == "dependencies" => (name.clone(), schema.clone()),
                    _ => (name.clone(), inline_one(schema)),
                })
                .collect(),
        ),
        _ if SCHEMA_KEYWORDS.contains(&key) => inline_one(value),
        _ => value.clone(),
    }
}

/// About how many bytes `node` takes written out (its `$ref`s unresolved).
fn flat_size(node: &Value) -> usize {
    let mut size = 0;
    let mut pending = vec![node];
    while let Some(node) = pending.pop() {
        size += match node {
            Value::String(text) => text.len() + 2,
            Value::Array(items) => {
                pending.extend(items);
                2 + items.len()
            }
            Value::Object(entries) => {
                pending.extend(entries.values());
                2 + entries.keys().map(|key| key.len() + 4).sum::<usize>()
            }
            _ => 8,
        };
    }
    size
}

/// Normalises the read schema for the provider formats as a native tool's
/// is: no property is nullable (an optional one is left out of `required`,
/// a required one is simply required, though the binder takes its `null`),
/// no union keeps a `null` member, and every array says what its items
/// are (`items: {}` where the schema said nothing, which admits the same
/// values: the OpenAI API refuses an array without `items`).
fn for_providers(node: &mut Value) {
    let Value::Object(object) = node else {
        return;
    };
    let array = match object.get("type") {
        Some(Value::String(ty)) => ty == "array",
        Some(Value::Array(types)) => types.iter().any(|ty| ty == "array"),
        _ => false,
    };
    if array && !object.contains_key("items") {
        object.insert("items".into(), Value::Object(Map::new()));
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(members)) = object.get_mut(key)
            && members.iter().any(|m| !is_null_schema(m))
        {
            members.retain(|m| !is_null_schema(m));
        }
    }
    for (key, value) in object.iter_mut() {
        let key = key.as_str();
        match value {
            Value::Object(properties) if SCHEMA_MAP_KEYWORDS.contains(&key) => {
                for schema in properties.values_mut() {
                    if let Value::Object(schema) = schema {
                        strip_null(schema);
                    }
                    for_providers(schema);
                }
            }
            Value::Array(members) if SCHEMA_LIST_KEYWORDS.contains(&key) => {
                members.iter_mut().for_each(for_providers);
            }
            _ if SCHEMA_KEYWORDS.contains(&key) => for_providers(value),
            _ => {}
        }
    }
}

/// Folds a root `anyOf`, `oneOf` or `allOf` of object schemas into the
/// root object, which the Anthropic API demands (it refuses every request
/// whose tools have such a root) and strict modes need. The folded schema
/// accepts every argument object one member accepts: the members'
/// properties are merged (one defined differently by two members becomes
/// an `anyOf` of its definitions; in a union, one that an open member
/// leaves undefined takes any value), and `required` keeps what every
/// member of a union requires, or what any member of `allOf` does. What a
/// union asked for is said in the description. The remote server still
/// checks the whole schema. A union of more than [`MAX_FOLDED_MEMBERS`]
/// is dropped instead, its arguments passed on unchecked.
fn flatten_root_union(root: &mut Map<String, Value>) {
    for key in ["allOf", "anyOf", "oneOf"] {
        let Some(Value::Array(members)) = root.remove(key) else {
            continue;
        };
        let all = key == "allOf";
        if members.len() > MAX_FOLDED_MEMBERS {
            let note = format!(
                "The arguments take one of {} forms, which the tool checks.",
                members.len()
            );
            append_to_description(root, &note);
            continue;
        }
        // `true` admits any object, as an open member of no keywords does;
        // `false` and the `null` schema admit no object.
        let members: Vec<Map<String, Value>> = members
            .into_iter()
            .filter(|member| !is_null_schema(member))
            .filter_map(|member| match member {
                Value::Object(member) => Some(member),
                Value::Bool(true) => Some(Map::new()),
                _ => None,
            })
            .collect();
        let required_of =
            |member: &Map<String, Value>| -> Vec<String> { required_names(member).map(str::to_owned).collect() };
        let is_open = |member: &Map<String, Value>| member.get("additionalProperties") != Some(&Value::Bool(false));
        let mut merged = properties_of(root).cloned().unwrap_or_default();
        let own: std::collections::HashSet<String> = merged.keys().cloned().collect();
        let mut required = required_of(root);
        let mut shared: Option<Vec<String>> = None;
        let mut forms = Vec::new();
        for member in &members {
            for (name, schema) in properties_of(member).into_iter().flatten() {
                merge_property(&mut merged, name, schema);
            }
            let names = required_of(member);
            if all {
                required.extend(names);
            } else {
                shared = Some(match shared {
                    None => names.clone(),
                    Some(shared) => {
                        let listed: std::collections::HashSet<&String> = names.iter().collect();
                        shared.into_iter().filter(|n| listed.contains(n)).collect()
                    }
                });
                forms.push(names);
            }
        }
        if !all {
            // A union member that allows other keys accepts any value for
            // a property it does not define.
            for (name, schema) in merged.iter_mut() {
                let defines = |m: &Map<String, Value>| properties_of(m).is_some_and(|p| p.contains_key(name));
                let left_free = members.iter().any(|m| is_open(m) && !defines(m));
                if left_free && !own.contains(name) {
                    *schema = describe_only(schema.as_object().unwrap_or(&Map::new()));
                }
            }
        }
        if !merged.is_empty() {
            root.insert("properties".into(), Value::Object(merged));
        }
        required.extend(shared.unwrap_or_default());
        let mut seen = std::collections::HashSet::new();
        required.retain(|name| seen.insert(name.clone()));
        if !required.is_empty() {
            root.insert("required".into(), required.into_iter().map(Value::String).collect());
        }
        let closed = !members.is_empty() && !members.iter().any(is_open);
        if !all && closed && !root.contains_key("additionalProperties") {
            root.insert("additionalProperties".into(), Value::Bool(false));
        }
        if !all && forms.iter().any(|names| !names.is_empty()) {
            append_to_description(root, &forms_note(&forms));
        }
    }
}

/// The most members of a root union [`flatten_root_union`] folds.
const MAX_FOLDED_MEMBERS: usize = 64;

/// "Give one of these sets of parameters: `a`, `b`; or `c`.", naming at
/// most ten sets of at most ten names each.
fn forms_note(forms: &[Vec<String>]) -> String {
    const LISTED: usize = 10;
    let mut listed: Vec<String> = forms
        .iter()
        .take(LISTED)
        .map(|names| match names.as_slice() {
            [] => "any of the parameters".to_owned(),
            names => {
                let mut shown: Vec<String> = names.iter().take(LISTED).map(|n| format!("`{}`", clip(n))).collect();
                if names.len() > LISTED {
                    shown.push(format!("{} more", names.len() - LISTED));
                }
                shown.join(", ")
            }
        })
        .collect();
    if forms.len() > LISTED {
        listed.push(format!("{} more", forms.len() - LISTED));
    }
    format!("Give one of these sets of parameters: {}.", listed.join("; or "))
}

/// A schema node's `properties`, when it has them.
fn properties_of(node: &Map<String, Value>) -> Option<&Map<String, Value>> {
    node.get("properties").and_then(Value::as_object)
}

/// Adds a member's definition of property `name` to the merged ones: the
/// same definition once, different ones as an `anyOf` of them.
fn merge_property(merged: &mut Map<String, Value>, name: &str, schema: &Value) {
    match merged.get_mut(name) {
        None => {
            merged.insert(name.to_owned(), schema.clone());
        }
        Some(existing) if existing == schema => {}
        Some(existing) => {
            let mut definitions = match existing.take() {
                Value::Object(mut node) if node.len() == 1 && matches!(node.get("anyOf"), Some(Value::Array(_))) => {
                    match node.remove("anyOf") {
                        Some(Value::Array(definitions)) => definitions,
                        _ => unreachable!("checked above"),
                    }
                }
                other => vec![other],
            };
            if !definitions.contains(schema) {
                definitions.push(schema.clone());
            }
            *existing = serde_json::json!({ "anyOf": definitions });
        }
    }
}

/// Keys left out of an imported node: they name or point into `$defs`,
/// which are dropped once inlined (a dynamic reference is not followed: its
/// node takes any value, and the server still checks it).
fn is_dropped(key: &str) -> bool {
    matches!(
        key,
        "$schema"
            | "$defs"
            | "definitions"
            | "title"
            | "$id"
            | "$comment"
            | "$dynamicRef"
            | "$dynamicAnchor"
            | "$recursiveRef"
            | "$recursiveAnchor"
    )
}

/// Only the description of a node, for a part that cannot be inlined.
fn describe_only(node: &Map<String, Value>) -> Value {
    let mut out = Map::new();
    if let Some(description) = node.get("description") {
        out.insert("description".into(), description.clone());
    }
    repair(&mut out);
    Value::Object(out)
}

/// `description` cut to [`MAX_DESCRIPTION_BYTES`], with a marker saying
/// how much was left out.
pub(crate) fn cut_description(description: &mut String) {
    crate::text::truncate_with(description, MAX_DESCRIPTION_BYTES, |left_out| {
        format!("...(cut, {left_out} bytes left out)")
    });
}

/// Gathers the nodes of the document that carry an `$anchor`, by name
/// (the first of a name wins).
fn gather_anchors<'a>(node: &'a Value, anchors: &mut std::collections::HashMap<&'a str, &'a Value>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match node {
        Value::Object(object) => {
            if let Some(name) = object.get("$anchor").and_then(Value::as_str) {
                anchors.entry(name).or_insert(node);
            }
            object
                .values()
                .for_each(|value| gather_anchors(value, anchors, depth + 1));
        }
        Value::Array(items) => items.iter().for_each(|item| gather_anchors(item, anchors, depth + 1)),
        _ => {}
    }
}

/// `text` with its `%XX` escapes decoded; `None` when they make no UTF-8.
fn percent_decoded(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                i += 3;
            }
            (byte, _, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// Keywords that say nothing of which values a schema takes.
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "$comment",
    "examples",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// `{"anyOf": [X, {"type": "null"}]}` becomes X, nullable. Other unions
/// stay as written (bound as any value, `null` included); they lose their
/// `null` member on the way out ([`for_providers`]).
fn fold_null_union(node: &mut Map<String, Value>, key: &str) {
    let Some(Value::Array(members)) = node.get(key) else {
        return;
    };
    if !members.iter().any(is_null_schema) {
        return;
    }
    let others: Vec<&Value> = members.iter().filter(|m| !is_null_schema(m)).collect();
    // `null` alone, however often listed.
    if others.is_empty() && !node.contains_key("type") {
        node.remove(key);
        node.insert("type".into(), Value::from("null"));
        return;
    }
    let [Value::Object(only)] = others.as_slice() else {
        return;
    };
    // A keyword beside the union that refuses `null` (a `type` or `enum`
    // of the node's own) holds for every value, so the node is no nullable
    // X (`{"type": "string", "anyOf": [..., null]}` takes no `null`), and
    // must not become one. Keywords of one type only (`maxLength`,
    // `format`) and annotations take `null`, and fold.
    if node.iter().any(|(k, v)| k != key && refuses_null(k, v)) {
        return;
    }
    let only = only.clone();
    node.remove(key);
    for (k, v) in only {
        // The outer description and default win.
        node.entry(k).or_insert(v);
    }
    make_nullable(node);
}

/// Whether the keyword `key` of value `value` refuses `null`, whatever
/// else its schema says (as far as the import can tell: a keyword that
/// combines schemas may, so it counts as one that does).
fn refuses_null(key: &str, value: &Value) -> bool {
    match key {
        "type" => match value {
            Value::String(t) => t != "null",
            Value::Array(types) => !types.iter().any(|t| t == "null"),
            _ => true,
        },
        "enum" => value.as_array().is_none_or(|values| !values.iter().any(Value::is_null)),
        "const" => !value.is_null(),
        "not" | "allOf" | "anyOf" | "oneOf" | "$ref" | "if" => true,
        _ => false,
    }
}

/// A schema of `null` alone: `{"type": "null"}` (or `["null"]`), `{"const":
/// null}` or `{"enum": [null]}`, with annotations beside it
/// (`description`, `title`, ...) but no other keyword.
fn is_null_schema(member: &Value) -> bool {
    let Some(object) = member.as_object() else {
        return false;
    };
    let mut null_only = false;
    for (key, value) in object {
        let says_null = match key.as_str() {
            "type" => value == "null" || *value == Value::Array(vec![Value::from("null")]),
            "const" => value.is_null(),
            "enum" => value
                .as_array()
                .is_some_and(|values| values.iter().all(Value::is_null) && !values.is_empty()),
            key if ANNOTATIONS.contains(&key) => continue,
            _ => return false,
        };
        if !says_null {
            return false;
        }
        null_only = true;
    }
    null_only
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::bind::{BindMode, normalize};

    #[test]
    fn a_root_union_is_folded_into_one_object() {
        // Exactly one of two keys (zod's `z.union` of objects), one key
        // defined differently by the two, and what both require.
        let schema = json!({
            "type": "object",
            "description": "Find a resource.",
            "oneOf": [
                {"type": "object", "properties": {"id": {"type": "integer"}, "ref": {"type": "string"}, "depth": {"type": "integer"}},
                 "required": ["id", "depth"], "additionalProperties": false},
                {"type": "object", "properties": {"path": {"type": "string"}, "ref": {"type": "integer"}, "depth": {"type": "integer"}},
                 "required": ["path", "depth"], "additionalProperties": false},
            ],
        });
        let imported = import_input_schema(&schema);
        let out = &imported.schema;
        assert!(out.get("oneOf").is_none(), "{out}");
        assert_eq!(out["required"], json!(["depth"]));
        assert_eq!(out["additionalProperties"], json!(false));
        assert_eq!(
            out["properties"]["ref"],
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})
        );
        assert_eq!(
            out["description"],
            json!("Find a resource. Give one of these sets of parameters: `id`, `depth`; or `path`, `depth`.")
        );
        // Each member's arguments bind, and a remote integer is coerced.
        for args in [
            json!({"id": "7", "depth": 1}),
            json!({"path": "a/b", "depth": 2, "ref": 3}),
        ] {
            let mut args = args.as_object().unwrap().clone();
            let report = normalize(&imported.params, &mut args, BindMode::Lenient, false);
            assert!(report.errors.is_empty(), "{:?}", report.errors);
        }
        let mut args = json!({"id": "7", "depth": 1}).as_object().unwrap().clone();
        normalize(&imported.params, &mut args, BindMode::Lenient, false);
        assert_eq!(args["id"], json!(7));
        let mut args = json!({"id": 7}).as_object().unwrap().clone();
        let report = normalize(&imported.params, &mut args, BindMode::Lenient, false);
        assert_eq!(report.errors[0].code_path(), "missing_required:depth");

        // "At least one of" over the root's own properties: nothing more
        // is required. `allOf` requires what any member does.
        let schema = json!({
            "type": "object",
            "properties": {"version": {"type": "string"}, "from": {"type": "string"}},
            "anyOf": [{"required": ["version"]}, {"required": ["from"]}],
            "allOf": [{"properties": {"limit": {"type": "integer"}}, "required": ["limit"]}],
        });
        let out = import_input_schema(&schema).schema;
        assert!(out.get("anyOf").is_none() && out.get("allOf").is_none(), "{out}");
        assert_eq!(out["required"], json!(["limit"]));
        assert_eq!(out["properties"]["limit"], json!({"type": "integer"}));
        assert!(out.get("additionalProperties").is_none(), "{out}");
    }

    /// pydantic describes a field of a referenced model as `{"allOf":
    /// [{"$ref": ...}], "description": ...}`: bound as the model, so a
    /// remote integer inside it is coerced, and sent without the wrapper.
    #[test]
    fn a_single_member_all_of_is_its_member_with_the_keys_beside_it() {
        let schema = json!({
            "type": "object",
            "properties": {"window": {"allOf": [{"$ref": "#/$defs/Window"}], "description": "The time window"}},
            "required": ["window"],
            "$defs": {"Window": {"type": "object", "properties": {"days": {"type": "integer"}}, "required": ["days"]}},
        });
        let imported = import_input_schema(&schema);
        let window = &imported.schema["properties"]["window"];
        assert!(window.get("allOf").is_none(), "{window}");
        assert_eq!(window["description"], "The time window");
        assert_eq!(window["properties"]["days"], json!({"type": "integer"}));
        let mut args = json!({"window": {"days": "7"}}).as_object().unwrap().clone();
        let report = normalize(&imported.params, &mut args, BindMode::Lenient, false);
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        assert_eq!(args["window"]["days"], json!(7));
    }

    /// A null union beside a keyword of the node's own is no nullable
    /// value: the keyword refuses `null` whatever the union says, so the
    /// binder must not take one (the server would refuse it).
    #[test]
    fn a_null_union_beside_a_type_or_enum_of_its_own_is_not_folded() {
        for property in [
            json!({"type": "string", "anyOf": [{"minLength": 1}, {"type": "null"}]}),
            json!({"enum": ["a", "b"], "anyOf": [{"type": "string"}, {"type": "null"}]}),
        ] {
            let schema = json!({"type": "object", "properties": {"p": property}, "required": ["p"]});
            let imported = import_input_schema(&schema);
            let p = &imported.schema["properties"]["p"];
            // Left as written, for the server to judge, as any schema
            // outside the subset: never made nullable.
            assert!(p.get("anyOf").is_some(), "{p}");
            assert_ne!(p["type"], json!(["string", "null"]), "{p}");
        }
        // Beside annotations, or a keyword of strings only, the union folds.
        let schema = json!({"type": "object", "properties": {
            "p": {"description": "P", "anyOf": [{"type": "string"}, {"type": "null"}]},
            "q": {"maxLength": 3, "anyOf": [{"type": "string"}, {"type": "null"}]},
        }});
        let imported = import_input_schema(&schema);
        let properties = &imported.schema["properties"];
        assert_eq!(properties["p"]["type"], "string", "{properties}");
        assert_eq!(properties["q"]["type"], "string", "{properties}");
        assert_eq!(properties["q"]["maxLength"], 3, "{properties}");
        let mut args = json!({"q": "abcd"}).as_object().unwrap().clone();
        let report = normalize(&imported.params, &mut args, BindMode::Lenient, false);
        assert_eq!(report.errors[0].code_path(), "out_of_range:q");
    }

    #[test]
    fn a_folded_union_refuses_nothing_one_member_accepts() {
        let accepts = |schema: &Value, args: Value| {
            let imported = import_input_schema(schema);
            let mut args = args.as_object().unwrap().clone();
            let report = normalize(&imported.params, &mut args, BindMode::Lenient, false);
            assert!(
                report.errors.is_empty(),
                "{args:?} under {}: {:?}",
                imported.schema,
                report.errors
            );
        };
        // An open member leaves `id` free: its typing by the other member
        // does not bind the whole.
        let open = json!({"anyOf": [
            {"properties": {"id": {"type": "integer", "description": "The id"}}, "required": ["id"]},
            {"properties": {"name": {"type": "string"}}, "required": ["name"]},
        ]});
        accepts(&open, json!({"name": "x", "id": "abc"}));
        assert_eq!(
            import_input_schema(&open).schema["properties"]["id"],
            json!({"description": "The id"})
        );
        // `true` admits any object: nothing is required.
        let any = json!({"properties": {"a": {"type": "string"}}, "anyOf": [true, {"required": ["a"]}]});
        accepts(&any, json!({}));
        // A root that also allowed `null` is still an object.
        let nullable =
            json!({"type": "object", "anyOf": [{"properties": {"a": {"type": "string"}}}, {"type": "null"}]});
        assert_eq!(import_input_schema(&nullable).schema["type"], json!("object"));
        // Past the bound, a union is dropped and its arguments pass.
        let members: Vec<Value> = (0..100)
            .map(|i| json!({"properties": {"k": {"const": i}}, "required": ["k"]}))
            .collect();
        let many = json!({"type": "object", "oneOf": members});
        let out = import_input_schema(&many).schema;
        assert!(out.get("oneOf").is_none() && out.get("required").is_none(), "{out}");
        assert_eq!(
            out["description"],
            json!("The arguments take one of 100 forms, which the tool checks.")
        );
        accepts(&many, json!({"k": 7, "other": true}));
        // The note names at most ten sets.
        let members: Vec<Value> = (0..30).map(|i| json!({"required": [format!("p{i}")]})).collect();
        let note = import_input_schema(&json!({"anyOf": members})).schema["description"].clone();
        assert!(note.as_str().unwrap().ends_with("`p9`; or 20 more."), "{note}");
    }

    #[test]
    fn pydantic_schema_is_inlined_and_read() {
        let schema = json!({
            "$defs": {"Unit": {"enum": ["c", "f"], "title": "Unit", "type": "string"}},
            "properties": {
                "city": {"title": "City", "type": "string", "minLength": 1},
                "days": {"default": 3, "title": "Days", "type": "integer", "minimum": 1, "maximum": 14},
                "unit": {"$ref": "#/$defs/Unit", "default": "c"},
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "title": "Note"},
            },
            "required": ["city"],
            "title": "forecastArguments",
            "type": "object",
        });
        let imported = import_input_schema(&schema);
        let out = &imported.schema;
        assert!(out.get("$defs").is_none() && out.get("title").is_none(), "{out}");
        assert_eq!(
            out["properties"]["unit"],
            json!({"enum": ["c", "f"], "type": "string", "default": "c"})
        );
        assert_eq!(out["properties"]["note"], json!({"type": "string"}));
        // A parsed `Value` keeps no key order: find the fields by name.
        let field = |name: &str| imported.params.field(name).unwrap();
        assert_eq!(imported.params.fields.len(), 4);
        assert_eq!(field("city").presence, Presence::Required);
        assert_eq!(field("days").presence, Presence::Defaulted);
        assert!(matches!(field("unit").shape.kind, Kind::Enum(_)));
        assert!(matches!(field("note").shape.kind, Kind::String));
        assert_eq!(
            field("days").shape.constraints.maximum,
            Some(serde_json::Number::from(14))
        );

        let mut args = json!({"city": "Oslo", "days": "5", "unit": "c", "extra": 1})
            .as_object()
            .unwrap()
            .clone();
        let report = normalize(&imported.params, &mut args, BindMode::Lenient, false);
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        assert_eq!(args["days"], json!(5));
        assert_eq!(args["extra"], json!(1), "unknown keys pass to the remote tool");
        let mut bad = json!({"days": 40, "unit": "k"}).as_object().unwrap().clone();
        let report = normalize(&imported.params, &mut bad, BindMode::Lenient, false);
        let codes: Vec<String> = report.errors.iter().map(|e| e.code_path()).collect();
        assert!(
            codes.iter().any(|c| c.starts_with("missing_required:city")),
            "{codes:?}"
        );
        assert!(codes.iter().any(|c| c.starts_with("out_of_range:days")), "{codes:?}");
        assert!(
            codes.iter().any(|c| c.starts_with("enum_out_of_range:unit")),
            "{codes:?}"
        );
    }

    #[test]
    fn constructs_outside_the_subset_pass_through() {
        let schema = json!({
            "type": "object",
            "properties": {
                "when": {"oneOf": [{"type": "string", "format": "date"}, {"type": "integer"}]},
                "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "maxItems": 3},
                "meta": {"type": "object", "additionalProperties": {"type": "number"}},
            },
            "additionalProperties": false,
        });
        let imported = import_input_schema(&schema);
        assert_eq!(imported.schema["properties"]["when"], schema["properties"]["when"]);
        assert!(matches!(imported.params.field("when").unwrap().shape.kind, Kind::Any));
        assert!(imported.params.rejects_unknown);
        let mut args = json!({"when": {"x": 1}, "tags": ["a", "b", "c", "d"], "meta": {"k": "2.5"}})
            .as_object()
            .unwrap()
            .clone();
        let report = normalize(&imported.params, &mut args, BindMode::Lenient, false);
        assert_eq!(args["meta"]["k"], json!(2.5));
        assert_eq!(args["when"], json!({"x": 1}));
        let codes: Vec<String> = report.errors.iter().map(|e| e.code_path()).collect();
        assert_eq!(codes, ["out_of_range:tags"], "{:?}", report.errors);
    }

    #[test]
    fn recursive_refs_stop() {
        let schema = json!({
            "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
            "type": "object",
            "properties": {"head": {"$ref": "#/$defs/Node"}},
        });
        let imported = import_input_schema(&schema);
        assert_eq!(imported.schema["properties"]["head"]["properties"]["next"], json!({}));
    }

    #[test]
    fn required_parameters_come_first_in_their_listed_order() {
        let imported = import_input_schema(&json!({
            "type": "object",
            "properties": {
                "zeta": {"type": "integer"},
                "alpha": {"type": "string"},
                "mid": {"type": "string", "default": "x"},
                "beta": {"type": "boolean"},
            },
            "required": ["zeta", "beta"],
        }));
        let names: Vec<&str> = imported.params.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["zeta", "beta", "alpha", "mid"]);
    }

    #[test]
    fn many_required_names_keep_their_listed_order() {
        // Each name's place is looked up, not searched for: a schema may
        // list many thousands, and name some twice or no property at all.
        let n = 50_000;
        let name = |i: usize| format!("p{i:05}");
        let properties: Map<String, Value> = (0..n).map(|i| (name(i), json!({"type": "string"}))).collect();
        let mut required: Vec<Value> = (0..n).rev().map(|i| Value::String(name(i))).collect();
        required.extend((0..n).map(|i| Value::String(format!("ghost{i}"))));
        required.extend((0..10).map(|i| Value::String(name(i))));
        required.push(json!("ghost0"));
        // Through the mount's path, every key given a local one.
        let schema = json!({"type": "object", "properties": properties, "required": required});
        let (imported, _) = import_input_schema_with_local_keys(
            &schema,
            |_| false,
            |keys| keys.iter().map(|key| key.to_string()).collect(),
        );
        let fields = &imported.params.fields;
        assert_eq!(fields.len(), 2 * n);
        assert_eq!(fields[0].name, name(n - 1));
        assert_eq!(fields[n - 1].name, name(0));
        assert_eq!(fields[n].name, "ghost0");
        assert_eq!(fields[2 * n - 1].name, format!("ghost{}", n - 1));
        assert!(fields.iter().all(|f| f.presence == Presence::Required));
    }

    #[test]
    fn many_required_names_of_a_union_and_beside_a_ref_are_merged_once_each() {
        let n = 50_000;
        let names: Vec<Value> = (0..n).map(|i| Value::String(format!("p{i}"))).collect();
        let reversed: Vec<Value> = names.iter().rev().cloned().collect();
        let union = json!({"anyOf": [{"required": names}, {"required": reversed}]});
        assert_eq!(import_input_schema(&union).schema["required"], json!(names));
        // As many as fit the inlining budget.
        let (names, reversed) = (&names[..20_000], &reversed[n - 20_000..]);
        let beside_a_ref = json!({
            "$defs": {"Base": {"type": "object", "required": names}},
            "$ref": "#/$defs/Base",
            "required": reversed,
        });
        assert_eq!(import_input_schema(&beside_a_ref).schema["required"], json!(names));
    }

    #[test]
    fn an_array_without_items_is_sent_with_items_of_any_value() {
        // The OpenAI API refuses an array without `items`.
        let imported = import_input_schema(&json!({
            "type": "object",
            "properties": {
                "list": {"type": "array", "description": "Anything listed"},
                "maybe": {"type": ["array", "null"]},
                "typed": {"type": "array", "items": {"type": "integer"}},
                "nested": {"type": "object", "properties": {"deep": {"type": "array"}}},
            },
        }));
        let properties = &imported.schema["properties"];
        assert_eq!(
            properties["list"],
            json!({"type": "array", "items": {}, "description": "Anything listed"})
        );
        assert_eq!(properties["maybe"], json!({"type": "array", "items": {}}));
        assert_eq!(properties["typed"]["items"], json!({"type": "integer"}));
        assert_eq!(properties["nested"]["properties"]["deep"]["items"], json!({}));
        // The binder still takes a list of anything.
        let (args, _, errors) = bind(&imported, json!({"list": [1, "a", {"b": null}]}));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(args["list"], json!([1, "a", {"b": null}]));
    }
    /// Binds `args` leniently: the arguments as bound, the warnings and the
    /// errors as `code:path`.
    fn bind(imported: &ImportedSchema, args: Value) -> (Map<String, Value>, Vec<String>, Vec<String>) {
        let mut args = args.as_object().unwrap().clone();
        let report = normalize(&imported.params, &mut args, BindMode::Lenient, false);
        let warnings = report.warnings.iter().map(|w| w.code_path()).collect();
        let errors = report.errors.iter().map(|e| e.code_path()).collect();
        (args, warnings, errors)
    }

    #[test]
    fn numeric_and_boolean_enums_and_consts_are_read() {
        let schema = json!({
            "type": "object",
            "properties": {
                "level": {"type": "integer", "enum": [1, 2, 3]},
                "ratio": {"type": "number", "enum": [0.5, 1.5]},
                "answer": {"const": 42},
                "flag": {"type": "boolean", "const": true},
                "mixed": {"enum": [1, "a"]},
            },
        });
        let imported = import_input_schema(&schema);
        assert_eq!(
            imported.schema["properties"], schema["properties"],
            "passed on as written"
        );

        let (args, warnings, errors) = bind(
            &imported,
            json!({"level": "2", "ratio": "1.5", "answer": 42.0, "flag": "true", "mixed": "b"}),
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            (&args["level"], &args["ratio"], &args["answer"], &args["flag"]),
            (&json!(2), &json!(1.5), &json!(42), &json!(true))
        );
        assert!(
            warnings.contains(&"string_literal_converted_to_integer:level".to_owned()),
            "{warnings:?}"
        );
        assert_eq!(args["mixed"], json!("b"), "outside the subset: passed through");

        let (_, warnings, errors) = bind(&imported, json!({"level": 7, "ratio": 2, "answer": 41, "flag": false}));
        // With no `required` list, the parameters come by name.
        assert_eq!(
            errors,
            [
                "enum_out_of_range:answer",
                "enum_out_of_range:flag",
                "enum_out_of_range:level",
                "enum_out_of_range:ratio"
            ]
        );
        assert!(warnings.is_empty(), "{warnings:?}");
        // A converted value that is then refused leaves no warning.
        let (_, warnings, errors) = bind(&imported, json!({"level": "7"}));
        assert_eq!((warnings, errors), (vec![], vec!["enum_out_of_range:level".to_owned()]));
        let mut level = json!({"level": 7}).as_object().unwrap().clone();
        let report = normalize(&imported.params, &mut level, BindMode::Lenient, false);
        assert!(
            report.errors[0].detail.contains("one of 1, 2, 3"),
            "{:?}",
            report.errors
        );
    }

    #[test]
    fn a_required_nullable_property_stays_required_and_takes_null() {
        let imported = import_input_schema(&json!({
            "type": "object",
            "properties": {
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "count": {"type": ["integer", "null"]},
                "when": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
                "window": {
                    "type": "object",
                    "properties": {"start": {"type": ["integer", "null"]}},
                    "required": ["start"],
                },
            },
            "required": ["note", "count", "when", "window"],
        }));
        for field in &imported.params.fields {
            assert_eq!(field.presence, Presence::Required, "{}", field.name);
        }
        let (_, _, errors) = bind(&imported, json!({}));
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert!(errors.iter().all(|e| e.starts_with("missing_required:")), "{errors:?}");
        let (_, _, errors) = bind(&imported, json!({"window": {}}));
        assert!(
            errors.contains(&"missing_required:window.start".to_owned()),
            "{errors:?}"
        );

        let sent = json!({"note": null, "count": null, "when": null, "window": {"start": null}});
        let (args, warnings, errors) = bind(&imported, sent.clone());
        assert!(errors.is_empty() && warnings.is_empty(), "{errors:?} {warnings:?}");
        assert_eq!(Value::Object(args), sent, "null is passed on");
        let (args, _, errors) = bind(
            &imported,
            json!({"note": "n", "count": "3", "when": 1, "window": {"start": 2}}),
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(args["count"], json!(3));

        // What the model reads: required, and no null union or type list.
        let out = &imported.schema;
        assert_eq!(out["required"], json!(["note", "count", "when", "window"]));
        assert_eq!(out["properties"]["note"], json!({"type": "string"}));
        assert_eq!(out["properties"]["count"], json!({"type": "integer"}));
        assert_eq!(
            out["properties"]["when"],
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})
        );
        assert_eq!(
            out["properties"]["window"]["properties"]["start"],
            json!({"type": "integer"})
        );
    }

    #[test]
    fn a_unique_list_is_sent_without_repeats_and_its_bounds_count_what_is_sent() {
        let imported = import_input_schema(&json!({
            "type": "object",
            "properties": {
                "ids": {"type": "array", "items": {"type": "integer"}, "uniqueItems": true, "maxItems": 2},
            },
        }));
        let (args, _, errors) = bind(&imported, json!({"ids": [1, 1, 1]}));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(args["ids"], json!([1]));
        let (args, warnings, errors) = bind(&imported, json!({"ids": [3, "3", 1, 3]}));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(args["ids"], json!([3, 1]), "the first of each, in order");
        assert_eq!(warnings, ["string_literal_converted_to_integer:ids[1]"]);
        let (_, _, errors) = bind(&imported, json!({"ids": [1, 2, 3, 1]}));
        assert_eq!(errors, ["out_of_range:ids"]);
    }

    #[test]
    fn keys_of_an_additional_properties_schema_are_bound_by_it() {
        let imported = import_input_schema(&json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}},
            "additionalProperties": {"type": "integer", "maximum": 5},
        }));
        let (args, warnings, errors) = bind(&imported, json!({"a": 1, "b": "2"}));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(Value::Object(args), json!({"a": 1, "b": 2}));
        assert_eq!(warnings, ["string_literal_converted_to_integer:b"]);
        let (_, warnings, errors) = bind(&imported, json!({"b": 9, "c": "x"}));
        assert_eq!(errors, ["out_of_range:b", "unsupported_integer_literal:c"]);
        assert!(warnings.is_empty(), "not unknown: {warnings:?}");
    }

    #[test]
    fn no_reference_into_the_dropped_defs_is_left() {
        let schema = json!({
            "type": "object",
            "properties": {
                "doc": {"type": "string", "contentMediaType": "application/json", "contentSchema": {"$ref": "#/$defs/Doc"}},
                "tree": {"$dynamicRef": "#node", "description": "A tree"},
            },
            "$defs": {"Doc": {"type": "object"}},
        });
        let imported = import_input_schema(&schema).schema.to_string();
        assert!(
            !imported.contains("$ref") && !imported.contains("$dynamicRef"),
            "{imported}"
        );
        assert!(imported.contains("A tree"), "{imported}");
    }

    #[test]
    fn shared_refs_cannot_make_the_schema_explode() {
        // Each level uses the next four times: 4^16 nodes if all inlined.
        let mut defs = Map::new();
        for level in 0..16 {
            let next = json!({"$ref": format!("#/$defs/L{}", level + 1)});
            let properties: Map<String, Value> = ["a", "b", "c", "d"]
                .iter()
                .map(|k| ((*k).to_owned(), next.clone()))
                .collect();
            defs.insert(format!("L{level}"), json!({"type": "object", "properties": properties}));
        }
        defs.insert("L16".into(), json!({"type": "integer"}));
        let schema = json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/L0"}}, "$defs": defs});
        let imported = import_input_schema(&schema);
        let size = imported.schema.to_string().len();
        assert!(size < 4 << 20, "{size} bytes");
        assert!(!imported.schema.to_string().contains("$ref"));
        // What was inlined still binds.
        let (_, _, errors) = bind(&imported, json!({"root": {"a": {"a": "x"}}}));
        assert_eq!(errors, ["type_mismatch:root.a.a"]);
    }

    #[test]
    fn big_definitions_used_many_times_are_inlined_within_a_byte_budget() {
        // Ten levels, each naming the next four times, each with a long
        // description: about 24 KB as written, tens of MB if all inlined.
        let text = "d".repeat(2_000);
        let mut defs = Map::new();
        for level in 0..10 {
            let next = json!({"$ref": format!("#/$defs/L{}", level + 1)});
            let properties: Map<String, Value> = ["a", "b", "c", "d"]
                .iter()
                .map(|k| ((*k).to_owned(), next.clone()))
                .collect();
            defs.insert(
                format!("L{level}"),
                json!({"type": "object", "description": text, "properties": properties}),
            );
        }
        defs.insert("L10".into(), json!({"type": "integer", "description": text}));
        let schema = json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/L0"}}, "$defs": defs});
        let size = import_input_schema(&schema).schema.to_string().len();
        assert!(size < 2 * MAX_INLINED_BYTES, "{size} bytes");
    }

    #[test]
    fn no_ref_is_left_pointing_at_dropped_definitions() {
        let schema = json!({
            "$defs": {
                "My Type": {"type": "integer"},
                "Tagged": {"$anchor": "tagged", "type": "string"},
                "Base": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
            },
            "type": "object",
            "properties": {
                "encoded": {"$ref": "#/$defs/My%20Type"},
                "anchored": {"$ref": "#tagged"},
                "elsewhere": {"$ref": "https://example.com/schema.json", "description": "Far away"},
                "missing": {"$ref": "#/$defs/Nope"},
                "conditional": {"if": {"$ref": "#/$defs/Base"}, "then": {"$ref": "#/$defs/My%20Type"}},
                "extended": {"$ref": "#/$defs/Base", "properties": {"note": {"type": "string"}}},
                "anything": true,
            },
        });
        let imported = import_input_schema(&schema);
        let out = &imported.schema["properties"];
        assert!(!imported.schema.to_string().contains("$ref"), "{}", imported.schema);
        assert_eq!(out["encoded"], json!({"type": "integer"}));
        assert_eq!(out["anchored"]["type"], "string");
        assert_eq!(out["elsewhere"], json!({"description": "Far away"}));
        assert_eq!(out["missing"], json!({}));
        assert_eq!(out["anything"], json!({}));
        // Keys beside a `$ref` add to what it names.
        assert_eq!(out["extended"]["required"], json!(["id"]));
        let names: Vec<&String> = out["extended"]["properties"].as_object().unwrap().keys().collect();
        assert_eq!(names, ["id", "note"]);
        // What could not be followed is any value, passed on as sent.
        let (args, _, errors) = bind(&imported, json!({"elsewhere": [1], "encoded": "7"}));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            (args["elsewhere"].clone(), args["encoded"].clone()),
            (json!([1]), json!(7))
        );
    }

    #[test]
    fn many_refs_to_one_big_definition_are_measured_once() {
        // Each `$ref` used to walk its whole target, and each `#name` the
        // whole document: quadratic in the schema's size.
        let big: Map<String, Value> = (0..5_000)
            .map(|i| (format!("p{i}"), json!({"type": "integer"})))
            .collect();
        let properties: Map<String, Value> = (0..5_000)
            .map(|i| {
                let reference = if i % 2 == 0 { "#/$defs/Big" } else { "#big" };
                (format!("r{i}"), json!({ "$ref": reference }))
            })
            .collect();
        let schema = json!({
            "type": "object",
            "properties": properties,
            "$defs": {"Big": {"$anchor": "big", "type": "object", "properties": big}},
        });
        let imported = import_input_schema(&schema);
        let text = imported.schema.to_string();
        assert!(
            !text.contains("$ref") && text.len() < 2 * MAX_INLINED_BYTES + 200_000,
            "{} bytes",
            text.len()
        );
        assert_eq!(
            imported.schema["properties"]["r0"]["properties"]["p4999"],
            json!({"type": "integer"})
        );
    }

    #[test]
    fn exclusive_integer_bounds_are_exact_and_dependencies_are_walked() {
        let imported = import_input_schema(&json!({
            "$defs": {"N": {"type": "integer"}},
            "type": "object",
            "properties": {
                "big": {"type": "integer", "exclusiveMinimum": -9_223_372_036_854_775_808_i64},
                "nested": {
                    "type": "object",
                    "dependencies": {"a": {"properties": {"n": {"$ref": "#/$defs/N"}}}, "b": ["a"]},
                },
            },
        }));
        assert!(!imported.schema.to_string().contains("$ref"), "{}", imported.schema);
        let dependencies = &imported.schema["properties"]["nested"]["dependencies"];
        assert_eq!(dependencies["b"], json!(["a"]));
        assert_eq!(dependencies["a"]["properties"]["n"], json!({"type": "integer"}));
        let (_, _, errors) = bind(&imported, json!({ "big": i64::MIN }));
        assert_eq!(errors, ["out_of_range:big"]);
        let (_, _, errors) = bind(&imported, json!({ "big": i64::MIN + 1 }));
        assert!(errors.is_empty(), "{errors:?}");
    }

    #[test]
    fn keys_beside_a_ref_apply_as_well_never_instead() {
        let imported = import_input_schema(&json!({
            "$defs": {
                "Base": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
                "Closed": {"type": "object", "properties": {"id": {"type": "integer"}}, "additionalProperties": false},
                "Count": {"type": "integer", "minimum": 1},
            },
            "type": "object",
            "properties": {
                "retyped": {"$ref": "#/$defs/Base", "properties": {"id": {"description": "The id"}}},
                "reopened": {"$ref": "#/$defs/Closed", "properties": {"note": {"type": "string"}}},
                "rebound": {"$ref": "#/$defs/Count", "minimum": 0, "description": "How many"},
                "narrowed": {"$ref": "#/$defs/Count", "maximum": 9},
            },
        }));
        let out = &imported.schema["properties"];
        // A property both define is merged by the same rule: `id` stays an
        // integer, so "abc" is refused before it leaves.
        assert_eq!(
            out["retyped"]["properties"]["id"],
            json!({"type": "integer", "description": "The id"})
        );
        let (_, _, errors) = bind(&imported, json!({"retyped": {"id": "abc"}}));
        assert_eq!(errors, ["unsupported_integer_literal:retyped.id"]);
        // Two minimums, or properties added to a closed object, are one
        // `allOf`, judged by the server.
        assert!(out["reopened"]["allOf"].is_array(), "{}", out["reopened"]);
        assert!(out["rebound"]["allOf"].is_array(), "{}", out["rebound"]);
        // A keyword the named schema lacks is simply added.
        assert_eq!(out["narrowed"], json!({"type": "integer", "minimum": 1, "maximum": 9}));
        let (_, _, errors) = bind(&imported, json!({"narrowed": 10}));
        assert_eq!(errors, ["out_of_range:narrowed"]);
        let (args, _, errors) = bind(&imported, json!({"rebound": 0, "reopened": {"id": 1, "note": "x"}}));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(args["reopened"], json!({"id": 1, "note": "x"}));
    }

    #[test]
    fn keys_a_nested_open_object_admits_are_passed_on() {
        let imported = import_input_schema(&json!({
            "type": "object",
            "properties": {
                "opts": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]},
                "closed": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false},
            },
        }));
        let (args, warnings, errors) = bind(
            &imported,
            json!({"opts": {"a": "x", "b": 1, "c": 2}, "closed": {"a": "x", "b": 1}}),
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            args["opts"],
            json!({"a": "x", "b": 1, "c": 2}),
            "the schema admits `b` and `c`"
        );
        assert_eq!(args["closed"], json!({"a": "x"}), "the schema admits no `b`");
        assert_eq!(warnings, ["unknown_parameter:closed.b", "unknown_parameter:opts.c"]);
        // `b`, required though no property defines it, must be sent.
        let (_, _, errors) = bind(&imported, json!({"opts": {"a": "x"}}));
        assert_eq!(errors, ["missing_required:opts.b"]);
    }

    #[test]
    fn required_names_no_property_defines_copy_the_other_keys_schema_within_a_budget() {
        // Thousands of such names beside a schema of thousands of keys:
        // billions of fields if each name copied it, a few hundred KB as
        // written.
        let keys: Map<String, Value> = (0..4_000).map(|i| (format!("p{i}"), json!({}))).collect();
        let required: Vec<String> = (0..4_000).map(|i| format!("n{i}")).collect();
        let schema = json!({
            "type": "object",
            "properties": {"inner": {
                "type": "object",
                "properties": {"a": {"type": "integer"}},
                "required": required,
                "additionalProperties": {"type": "object", "properties": keys},
            }},
        });
        fn fields(shape: &ObjectShape) -> usize {
            shape
                .fields
                .iter()
                .map(|f| {
                    1 + if let Kind::Object(inner) = &f.shape.kind {
                        fields(inner)
                    } else {
                        0
                    }
                })
                .sum()
        }
        let imported = import_input_schema(&schema);
        let count = fields(&imported.params);
        assert!(count < 200_000, "{count} fields");
        // Every name stays required; the first ones are bound by the other
        // keys' schema, the rest take any value.
        let Kind::Object(inner) = &imported.params.fields[0].shape.kind else {
            panic!("inner is an object")
        };
        assert_eq!(inner.fields.len(), 4_001);
        let (names, defined) = inner.fields.split_at(4_000);
        assert!(names.iter().all(|f| f.presence == Presence::Required));
        assert_eq!(defined[0].name, "a");
        assert!(matches!(names[0].shape.kind, Kind::Object(_)));
        assert!(matches!(names[3_999].shape.kind, Kind::Any));
        // Small schemas are copied for every name, as before.
        let small = json!({"type": "object", "properties": {}, "required": required, "additionalProperties": {"type": "integer"}});
        let imported = import_input_schema(&small);
        assert!(
            imported
                .params
                .fields
                .iter()
                .all(|f| matches!(f.shape.kind, Kind::Integer { .. }))
        );
    }

    #[test]
    fn keywords_bind_only_values_of_their_own_type() {
        let imported = import_input_schema(&json!({
            "type": "object",
            "properties": {
                "names": {"type": "array", "items": {"type": "string"}, "minLength": 1},
                "tuple": {"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}},
                "positive": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10.5},
                "older": {"type": "integer", "minimum": 5, "exclusiveMinimum": true},
                "ratio": {"type": "number", "exclusiveMinimum": 0},
                "even": {"type": "integer", "multipleOf": 2},
                "counted": {"type": "object", "properties": {"a": {"type": "integer"}}, "minProperties": 2},
            },
        }));
        let (args, _, errors) = bind(
            &imported,
            json!({"names": [""], "tuple": ["42", 1], "ratio": "0", "even": "3", "counted": {"a": "1", "z": 1}}),
        );
        assert!(errors.is_empty(), "{errors:?}");
        // Outside the subset: passed on as sent, for the server to judge.
        assert_eq!(args["tuple"], json!(["42", 1]));
        assert_eq!((args["ratio"].clone(), args["even"].clone()), (json!("0"), json!("3")));
        assert_eq!(args["counted"], json!({"a": "1", "z": 1}));
        let (_, _, errors) = bind(&imported, json!({"positive": 0, "older": 5}));
        assert_eq!(errors, ["out_of_range:older", "out_of_range:positive"]);
        let (args, _, errors) = bind(&imported, json!({"positive": "10", "older": 6}));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(args["positive"], json!(10));
        let (_, _, errors) = bind(&imported, json!({"positive": 11}));
        assert_eq!(errors, ["out_of_range:positive"]);
    }

    #[test]
    fn a_root_that_is_no_object_schema_becomes_an_open_object() {
        for root in [
            json!({"type": "string"}),
            json!({"type": "object", "properties": []}),
            json!({"type": "object", "required": "a"}),
            json!(true),
            json!([1]),
        ] {
            let imported = import_input_schema(&root);
            assert_eq!(imported.schema, json!({"type": "object", "properties": {}}), "{root}");
            let (args, _, errors) = bind(&imported, json!({"x": 1}));
            assert!(errors.is_empty() && args["x"] == 1, "{root}: {errors:?}");
        }
        // A property that can only be `null` keeps its type.
        let imported = import_input_schema(&json!({"type": "object", "properties": {"n": {"type": ["null"]}}}));
        assert_eq!(imported.schema["properties"]["n"], json!({"type": "null"}));
    }

    #[test]
    fn objects_closed_or_open_by_pattern_are_read_as_written() {
        let imported = import_input_schema(&json!({
            "type": "object",
            "properties": {
                "none": {"type": "object", "additionalProperties": false},
                "tags": {"type": "object", "properties": {}, "patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": false},
                "ids": {"type": "array", "items": {"type": "number"}, "uniqueItems": true},
            },
        }));
        let (args, warnings, errors) = bind(
            &imported,
            json!({"none": {"k": 1}, "tags": {"x-a": "1"}, "ids": [1, 1.0, 2]}),
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(args["none"], json!({}), "no key is allowed");
        assert_eq!(warnings, ["unknown_parameter:none.k"]);
        assert_eq!(args["tags"], json!({"x-a": "1"}), "outside the subset: passed on");
        assert_eq!(args["ids"], json!([1, 2]), "1 and 1.0 are the same number");
    }

    /// One malformed tool fails every request that carries it (the
    /// Anthropic API checks each schema against 2020-12): what the import
    /// sends on is well-formed whatever the server wrote.
    /// An output schema is repaired as an input schema is, its `$ref`s
    /// inlined, but keeps its nullable properties (it says what the
    /// server returns); one that describes no object is left out.
    #[test]
    fn output_schemas_are_sent_well_formed_or_not_at_all() {
        let output = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "x": {"type": "strin"},
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "at": {"$ref": "#/$defs/Place"},
            },
            "required": "x",
            "$defs": {"Place": {"type": "object", "properties": {"city": {"type": "string"}}}},
        });
        let imported = import_input_schema(&json!({"type": "object"})).with_output_schema(Some(&output));
        let sent = imported.output_schema.unwrap();
        assert_eq!(
            sent,
            json!({
                "type": "object",
                "properties": {
                    "x": {},
                    "note": {"type": ["string", "null"]},
                    "at": {"type": "object", "properties": {"city": {"type": "string"}}},
                },
            })
        );
        for output in [json!({"type": "array"}), json!(true), json!({"type": "obj"})] {
            let imported = import_input_schema(&json!({"type": "object"})).with_output_schema(Some(&output));
            assert_eq!(imported.output_schema, None, "{output}");
        }
    }

    /// A description longer than 4 KiB is cut with a marker, wherever it
    /// is in the schema.
    #[test]
    fn long_descriptions_are_cut() {
        let long = "d".repeat(10_000);
        let imported = import_input_schema(&json!({"type": "object", "description": long, "properties": {
            "a": {"type": "object", "properties": {"b": {"type": "string", "description": long}}},
            "c": {"$ref": "#/nowhere", "description": long},
        }}));
        let schema = &imported.schema;
        for description in [
            &schema["description"],
            &schema["properties"]["a"]["properties"]["b"]["description"],
            &schema["properties"]["c"]["description"],
        ] {
            let text = description.as_str().unwrap();
            assert!(text.starts_with("ddd") && text.len() < 4200, "{} bytes", text.len());
            assert!(text.ends_with("...(cut, 5904 bytes left out)"), "{text}");
        }
    }

    /// Local keys are given before the binder's parameters are read, so
    /// the binder checks, at every depth, the keys the model is offered;
    /// a refused key the renaming leaves (in a union's member) is found.
    #[test]
    fn the_binder_reads_the_local_keys_and_a_key_left_is_found() {
        fn valid(key: &str) -> bool {
            !key.contains([' ', '$'])
        }
        fn choose(keys: &[&str]) -> Vec<String> {
            keys.iter().map(|key| key.replace([' ', '$'], "_")).collect()
        }
        let schema = json!({"type": "object", "required": ["$a"], "properties": {
            "$a": {"type": "integer"},
            "o": {
                "type": "object",
                "additionalProperties": false,
                "required": ["not fine"],
                "properties": {"fine": {}, "not fine": {"type": "integer"}},
            },
            "u": {"anyOf": [{"type": "object", "properties": {"$u": {}}}, {"type": "string"}]},
        }});
        let (imported, _) = import_input_schema_with_local_keys(&schema, valid, choose);
        let names: Vec<&str> = imported.params.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["_a", "o", "u"]);
        let Kind::Object(o) = &imported.params.fields[1].shape.kind else {
            panic!("{:?}", imported.params.fields[1].shape)
        };
        let inner: Vec<(&str, Presence)> = o.fields.iter().map(|f| (f.name.as_str(), f.presence)).collect();
        assert_eq!(inner, [("not_fine", Presence::Required), ("fine", Presence::Optional)]);
        assert!(o.rejects_unknown);
        assert_eq!(imported.schema["required"], json!(["_a"]));
        assert_eq!(
            imported.schema["properties"]["_a"],
            json!({"type": "integer", "description": "(`$a` on the server)"})
        );
        assert_eq!(imported.refused_property_key(valid), Some("$u"));
        assert_eq!(import_input_schema(&schema).refused_property_key(valid), Some("$a"));
    }

    #[test]
    fn malformed_schemas_are_sent_well_formed() {
        let schema = json!({
            "type": "object",
            "properties": {
                "word": "string",
                "above": {"type": "integer", "minimum": 0, "exclusiveMinimum": true},
                "below": {"type": "number", "maximum": 9, "exclusiveMaximum": false},
                "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}], "additionalItems": false},
                "short": {"type": "string", "minLength": 1.5, "maxLength": 3.0},
                "loose": {"type": "any", "description": 5},
                "two": {"type": ["string", "string", "wat"]},
                "pointed": {"$ref": "#/properties/above/type"},
                "listed": {"type": "object", "properties": {"x": {}}, "required": ["x", "x", 3]},
            },
            "required": ["word", "word"],
        });
        let imported = import_input_schema(&schema);
        let sent = &imported.schema;
        if let Err(e) = jsonschema::draft202012::meta::validate(sent) {
            panic!("not a 2020-12 schema: {e}\n{sent:#}");
        }
        let properties = &sent["properties"];
        assert_eq!(properties["word"], json!({}));
        assert_eq!(properties["above"], json!({"type": "integer", "exclusiveMinimum": 0}));
        assert_eq!(properties["below"], json!({"type": "number", "maximum": 9}));
        assert_eq!(
            properties["pair"],
            json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": {"not": {}}})
        );
        assert_eq!(properties["short"], json!({"type": "string", "maxLength": 3}));
        assert_eq!(properties["two"], json!({"type": "string"}));
        assert_eq!(properties["listed"]["required"], json!(["x"]));
        assert_eq!(sent["required"], json!(["word"]));
        // The binder reads the repaired schema: an exclusive bound, and a
        // count written as a float.
        let (_, _, errors) = bind(&imported, json!({"word": 1, "above": 0, "short": "abcd"}));
        assert_eq!(errors, ["out_of_range:above", "out_of_range:short"]);
    }

    /// A keyword of the root outside the subset is the server's to judge;
    /// the parameters are still read, and what a provider refuses at the
    /// root is said in the description.
    #[test]
    fn root_keywords_outside_the_subset_keep_the_parameters() {
        let imported = import_input_schema(&json!({
            "type": "object",
            "description": "Search.",
            "properties": {"q": {"type": "integer"}},
            "required": ["q"],
            "minProperties": 1,
            "not": {"required": ["banned"]},
        }));
        assert_eq!(imported.params.fields.len(), 1);
        let (args, warnings, errors) = bind(&imported, json!({"q": "42", "extra": 1}));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(args["q"], json!(42));
        assert_eq!(
            warnings,
            ["string_literal_converted_to_integer:q", "unknown_parameter:extra"]
        );
        assert!(imported.schema.get("not").is_none(), "{}", imported.schema);
        let description = imported.schema["description"].as_str().unwrap();
        assert!(
            description.starts_with("Search. The server also checks the arguments against: {\"not\""),
            "{description}"
        );
        // An open root passes unknown keys on, and says so.
        let mut args = json!({"q": 1, "extra": 1}).as_object().unwrap().clone();
        let report = normalize(&imported.params, &mut args, BindMode::Lenient, false);
        assert!(
            report.warnings[0].detail.ends_with("it was passed on as sent"),
            "{:?}",
            report.warnings
        );
        // Keys a root pattern admits are no unknown keys to refuse.
        let imported = import_input_schema(&json!({
            "type": "object",
            "properties": {"q": {"type": "integer"}},
            "patternProperties": {"^x-": {"type": "string"}},
            "additionalProperties": false,
        }));
        let (_, _, errors) = bind(&imported, json!({"q": "1", "x-trace": "t"}));
        assert!(errors.is_empty(), "{errors:?}");
        assert!(!imported.params.rejects_unknown);
    }

    /// Matching costs a pattern's compiled size times the text's length:
    /// a remote pattern too big to match cheaply is left to the server.
    #[test]
    fn huge_remote_patterns_are_left_to_the_server() {
        let imported = import_input_schema(&json!({
            "type": "object",
            "properties": {
                "capped": {"type": "string", "pattern": "^.{0,100000}$"},
                "word": {"type": "string", "pattern": "^[a-z]{1,64}$"},
            },
        }));
        let pattern = |name: &str| imported.params.field(name).unwrap().shape.constraints.pattern.clone();
        assert!(pattern("capped").is_none());
        assert!(pattern("word").is_some());
        let (_, _, errors) = bind(&imported, json!({"capped": "x".repeat(200_000), "word": "Ab"}));
        assert_eq!(errors, ["pattern_mismatch:word"]);
    }

    #[test]
    fn null_only_types_counts_enums_and_required_keys_bind_as_the_schema_says() {
        let imported = import_input_schema(&json!({
            "type": "object",
            "properties": {
                "nothing": {"type": "null"},
                "short": {"type": "string", "enum": ["a", "bb", "ccc"], "maxLength": 2},
                "record": {"type": "object", "required": ["id"], "additionalProperties": {"type": "integer"}},
            },
        }));
        let (_, _, errors) = bind(
            &imported,
            json!({"nothing": null, "short": "bb", "record": {"id": "7"}}),
        );
        assert!(errors.is_empty(), "{errors:?}");
        let (_, _, errors) = bind(&imported, json!({"nothing": "x", "short": "ccc", "record": {}}));
        assert_eq!(
            errors,
            [
                "enum_out_of_range:nothing",
                "missing_required:record.id",
                "enum_out_of_range:short"
            ]
        );
    }

    /// Under strict definitions `null` means "not given", for a remote
    /// nullable property too; otherwise a nullable property's `null` is a
    /// value, even beside a default.
    #[test]
    fn null_for_a_remote_nullable_property() {
        let imported = import_input_schema(&json!({
            "type": "object",
            "properties": {
                "assignee": {"type": ["string", "null"]},
                "timeout": {"type": ["integer", "null"], "default": 30},
            },
        }));
        let sent = json!({"assignee": null, "timeout": null});
        let (args, warnings, errors) = bind(&imported, sent.clone());
        assert!(warnings.is_empty() && errors.is_empty(), "{warnings:?} {errors:?}");
        assert_eq!(Value::Object(args), sent);
        let mut args = sent.as_object().unwrap().clone();
        let report = normalize(&imported.params, &mut args, BindMode::Strict, true);
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        assert!(args.is_empty(), "{args:?}");
    }

    #[test]
    fn null_is_taken_where_the_remote_schema_takes_it() {
        let imported = import_input_schema(&json!({
            "type": "object",
            "properties": {
                "any": {},
                "listed": {"type": ["string", "null"], "enum": ["a", "b"]},
                "typed": {"type": "string", "enum": ["a", null]},
                "three": {"anyOf": [{"const": 3}, {"type": "null"}]},
                "free": {"type": "object"},
                "flag": {"type": "boolean"},
            },
            "required": ["any", "listed", "typed", "three", "free"],
        }));
        let sent =
            json!({"any": null, "listed": null, "typed": null, "three": null, "free": {"k": null}, "flag": null});
        let (args, warnings, errors) = bind(&imported, sent);
        // `null` must pass the `type`, the `enum` and the `const`.
        assert_eq!(errors, ["null_not_allowed:listed", "null_not_allowed:typed"]);
        assert!(warnings.is_empty(), "{warnings:?}");
        // An optional value that cannot be `null` is not sent at all.
        assert!(!args.contains_key("flag"), "{args:?}");
        assert_eq!(
            (&args["any"], &args["three"], &args["free"]),
            (&Value::Null, &Value::Null, &json!({"k": null}))
        );
    }
}

/// Remote schemas of the subset read, and arguments of every kind: the
/// import and the binder never panic, what the binder accepts is valid
/// against the schema the remote tool declared (SPEC sections 8 and 10),
/// and what is valid as sent the lenient binder accepts.
#[cfg(test)]
mod properties {
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    use super::import_input_schema;
    use crate::bind::{BindMode, normalize};

    const NAMES: [&str; 4] = ["a", "b", "maxItems", "c_d"];

    fn number() -> impl Strategy<Value = Value> {
        prop_oneof![
            (-3i64..4).prop_map(Value::from),
            prop_oneof![Just(-1.5), Just(0.5), Just(2.0), Just(2.5)].prop_map(Value::from),
        ]
    }

    /// A schema of one value, without structure, of the subset the import
    /// reads (several types, say, are outside it and passed on unchecked).
    fn leaf() -> impl Strategy<Value = Value> {
        let bounds = (proptest::option::of(number()), proptest::option::of(number()));
        let lengths = (proptest::option::of(0u64..4), proptest::option::of(0u64..4));
        prop_oneof![
            Just(json!({})),
            Just(json!({"type": "boolean"})),
            Just(json!({"type": "boolean", "const": true})),
            Just(json!({"type": "string", "enum": ["a", "B"]})),
            Just(json!({"const": "x"})),
            Just(json!({"const": 3})),
            Just(json!({"enum": [1, 2.5, null]})),
            Just(json!({"type": "integer", "enum": [1, 2, 3]})),
            Just(json!({"type": "string", "enum": ["a", "b", null]})),
            Just(json!({"type": ["string", "null"], "enum": ["a", "b"]})),
            Just(json!({"oneOf": [{"type": "integer", "maximum": 2}, {"type": "null"}]})),
            Just(json!({"type": "object"})),
            Just(json!({"type": "object", "additionalProperties": {"type": "integer"}, "maxProperties": 2})),
            Just(json!({"$ref": "#/$defs/D"})),
            // An annotation beside a `$ref`; keywords of another type than
            // the node's; exclusive integer bounds; a required name no
            // property defines; `true`.
            Just(json!({"$ref": "#/$defs/D", "description": "beside"})),
            Just(json!({"type": "array", "items": {"type": "string"}, "minLength": 1})),
            Just(json!({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10.5})),
            Just(json!({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["ghost"]})),
            Just(json!(true)),
            // Only `null`; counts written as floats; string keywords beside
            // an enum; keys required of an object of free keys.
            Just(json!({"type": "null"})),
            Just(json!({"type": "string", "minLength": 2.0, "maxLength": 3.0})),
            Just(json!({"type": "array", "maxItems": 1.0})),
            Just(json!({"type": "string", "enum": ["a", "bb"], "minLength": 2})),
            Just(json!({"type": "object", "required": ["a"], "additionalProperties": {"type": "integer"}})),
            (prop_oneof![Just("integer"), Just("number")], bounds).prop_map(|(ty, (min, max))| {
                let mut schema = json!({"type": ty});
                if let Some(min) = min {
                    schema["minimum"] = min;
                }
                if let Some(max) = max {
                    schema["maximum"] = max;
                }
                schema
            }),
            (
                lengths,
                proptest::option::of(prop_oneof![Just("^a"), Just("b$"), Just("^[0-9]+$")])
            )
                .prop_map(|((min, max), pattern)| {
                    let mut schema = json!({"type": "string"});
                    if let Some(min) = min {
                        schema["minLength"] = min.into();
                    }
                    if let Some(max) = max {
                        schema["maxLength"] = max.into();
                    }
                    if let Some(pattern) = pattern {
                        schema["pattern"] = pattern.into();
                    }
                    schema
                }),
        ]
    }

    /// Constructs the import passes through, for the server to judge
    /// (keys beside a `$ref` that may conflict with it among them).
    fn passed_through() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(json!({"$ref": "#/$defs/D", "minimum": 1})),
            Just(json!({"$ref": "#/$defs/D", "type": "integer"})),
            Just(json!({"$ref": "#/$defs/D", "properties": {"a": {"type": "string"}}, "required": ["a"]})),
            Just(json!({"type": "number", "exclusiveMinimum": 0})),
            Just(json!({"type": "integer", "multipleOf": 2})),
            Just(json!({"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}})),
            Just(json!({"type": "object", "properties": {"a": {"type": "integer"}}, "minProperties": 2})),
            Just(json!({"anyOf": [{"type": "integer"}, {"type": "string", "minLength": 2}]})),
        ]
    }

    /// A schema of the subset the import reads, nested.
    fn schema() -> impl Strategy<Value = Value> + Clone {
        nested(leaf().boxed())
    }

    /// A schema that also holds what the import passes through.
    fn loose_schema() -> impl Strategy<Value = Value> + Clone {
        nested(prop_oneof![3 => leaf(), 1 => passed_through()].boxed())
    }

    fn nested(leaf: BoxedStrategy<Value>) -> impl Strategy<Value = Value> + Clone {
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                (
                    inner.clone(),
                    proptest::option::of(0u64..3),
                    proptest::option::of(0u64..4),
                    any::<bool>()
                )
                    .prop_map(|(items, min, max, unique)| {
                        let mut schema = json!({"type": "array", "items": items});
                        if let Some(min) = min {
                            schema["minItems"] = min.into();
                        }
                        if let Some(max) = max {
                            schema["maxItems"] = max.into();
                        }
                        if unique {
                            schema["uniqueItems"] = true.into();
                        }
                        schema
                    }),
                object(inner.clone()),
                inner
                    .clone()
                    .prop_map(|schema| json!({"anyOf": [schema, {"type": "null"}]})),
                inner.prop_map(|mut schema| {
                    if let Some(Value::String(ty)) = schema.get("type").cloned()
                        && ty != "null"
                    {
                        schema["type"] = json!([ty, "null"]);
                    }
                    schema
                }),
            ]
        })
    }

    fn object(inner: impl Strategy<Value = Value> + Clone) -> impl Strategy<Value = Value> {
        (
            proptest::collection::btree_map(proptest::sample::select(&NAMES[..]), inner.clone(), 0..4),
            proptest::collection::vec(proptest::sample::select(&NAMES[..]), 0..3),
            prop_oneof![
                Just(None),
                Just(Some(json!(false))),
                Just(Some(json!(true))),
                inner.prop_map(Some)
            ],
        )
            .prop_map(|(properties, required, additional)| {
                let mut required: Vec<&str> = required.into_iter().filter(|n| properties.contains_key(n)).collect();
                required.sort_unstable();
                required.dedup();
                let mut schema = json!({"type": "object", "properties": properties, "required": required});
                if let Some(additional) = additional {
                    schema["additionalProperties"] = additional;
                }
                schema
            })
    }

    /// Arguments as a model might send them: right, loose or wrong.
    fn argument() -> impl Strategy<Value = Value> {
        let scalar = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            number(),
            prop_oneof![
                Just("42"),
                Just("2.5"),
                Just("true"),
                Just("a"),
                Just("B"),
                Just("x"),
                Just("ab"),
                Just("123"),
                Just("[1, 2]"),
                Just("{\"a\": 1}"),
                Just("")
            ]
            .prop_map(Value::from),
        ];
        scalar.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map(proptest::sample::select(&NAMES[..]), inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Where the import passes a value through, the server judges it:
        /// the binder never refuses arguments the remote schema takes, and
        /// sends a passed-through value as it came.
        #[test]
        fn valid_arguments_are_never_refused_whatever_the_schema_holds(
            root in object(loose_schema()),
            definition in leaf(),
            args in proptest::collection::btree_map(proptest::sample::select(&NAMES[..]), argument(), 0..4),
            root_count in any::<bool>(),
        ) {
            let mut root = root;
            root["$defs"] = json!({"D": definition});
            if root_count {
                root["minProperties"] = json!(1);
            }
            let imported = import_input_schema(&root);
            prop_assert!(jsonschema::draft202012::meta::is_valid(&imported.schema), "{}", imported.schema);
            let validator = jsonschema::draft202012::new(&root).expect("the generated schema compiles");
            let mut args: Map<String, Value> = args.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
            if validator.is_valid(&Value::Object(args.clone())) {
                let report = normalize(&imported.params, &mut args, BindMode::Lenient, false);
                prop_assert!(report.errors.is_empty(), "refused valid arguments against {root}: {:?}", report.errors);
            }
        }

        #[test]
        fn accepted_arguments_are_valid_for_the_remote_schema(
            root in object(schema()),
            definition in leaf(),
            args in proptest::collection::btree_map(proptest::sample::select(&NAMES[..]), argument(), 0..4),
            strict in any::<bool>(),
        ) {
            let mut root = root;
            root["$defs"] = json!({"D": definition});
            let imported = import_input_schema(&root);
            prop_assert!(jsonschema::draft202012::meta::is_valid(&imported.schema), "{}", imported.schema);
            let validator = jsonschema::draft202012::new(&root).expect("the generated schema compiles");
            let mut args: Map<String, Value> = args.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
            let valid_as_sent = validator.is_valid(&Value::Object(args.clone()));
            let mode = if strict { BindMode::Strict } else { BindMode::Lenient };
            let report = normalize(&imported.params, &mut args, mode, false);
            // What the remote tool is sent (`RemoteTool::invoke`).
            if imported.params.rejects_unknown {
                imported.params.retain_named(&mut args);
            }
            if valid_as_sent && !strict {
                prop_assert!(report.errors.is_empty(), "refused valid arguments against {root}: {:?}", report.errors);
            }
            if report.errors.is_empty() {
                let args = Value::Object(args);
                let problems: Vec<String> = validator.iter_errors(&args).map(|e| e.to_string()).collect();
                prop_assert!(problems.is_empty(), "accepted {args} against {root}: {problems:?}");
            }
        }
    }
}
