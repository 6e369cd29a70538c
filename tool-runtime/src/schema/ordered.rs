//! JSON that keeps a meaningful key order when serialized, without
//! serde_json's `preserve_order` feature (which would change every
//! `serde_json::Map` in the user's whole program).
//!
//! A model reads a schema's properties in the order the function declares
//! its parameters, so that order is kept: a `properties` object is written in
//! the order of the [`ObjectShape`] it was rendered from. Every other object
//! (a schema node, a provider's definition wrapper) is written in a fixed,
//! readable key order: `name` and `description` before the schema, `type`
//! before the bounds. The order is decided once, when a definition is
//! rendered; serializing it again writes the same bytes.

use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Value};

use super::{Kind, ObjectShape, Shape};

/// A JSON Schema (or a provider's tool definition) as a `serde_json::Value`
/// to read, which serializes with its properties in declaration order.
///
/// It dereferences to the `Value`, whose maps are ordered by key: index it
/// and compare it as any `Value`; serialize the `Schema` itself (not the
/// `Value`) to keep the order on the wire.
#[derive(Clone, PartialEq)]
pub struct Schema {
    value: Value,
    ordered: Ordered,
}

impl Schema {
    /// `value`, ordered after the object shapes it was rendered from.
    pub(crate) fn new(value: Value, objects: &[&ObjectShape]) -> Self {
        let ordered = Ordered::new(&value, objects, objects, false);
        Schema { value, ordered }
    }

    /// The JSON value (maps ordered by key).
    pub fn as_value(&self) -> &Value {
        &self.value
    }
}

impl Deref for Schema {
    type Target = Value;

    fn deref(&self) -> &Value {
        &self.value
    }
}

impl fmt::Debug for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.value, f)
    }
}

impl fmt::Display for Schema {
    /// Compact JSON text, properties in declaration order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = serde_json::to_string(&self.ordered).map_err(|_| fmt::Error)?;
        f.write_str(&text)
    }
}

impl Serialize for Schema {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.ordered.serialize(serializer)
    }
}

/// Every object shape inside `shape`, as serde reads it and as it writes
/// it, outermost first.
pub(crate) fn object_shapes<'a>(shape: &'a Shape, out: &mut Vec<&'a ObjectShape>) {
    objects_of(shape, true, out);
}

/// Every object shape inside `shape` as serde reads it, outermost first.
pub(crate) fn read_object_shapes<'a>(shape: &'a Shape, out: &mut Vec<&'a ObjectShape>) {
    objects_of(shape, false, out);
}

/// The objects of `shape` as read, and with `written` as written too.
fn objects_of<'a>(shape: &'a Shape, written: bool, out: &mut Vec<&'a ObjectShape>) {
    kind_objects(&shape.kind, written, out);
    if let Some(kind) = shape.written.as_ref().filter(|_| written) {
        kind_objects(kind, written, out);
    }
}

fn kind_objects<'a>(kind: &'a Kind, written: bool, out: &mut Vec<&'a ObjectShape>) {
    match kind {
        Kind::Object(object) => {
            out.push(object);
            for field in &object.fields {
                objects_of(&field.shape, written, out);
            }
        }
        Kind::Array { items: inner, .. } | Kind::Map { values: inner } => objects_of(inner, written, out),
        _ => {}
    }
}

/// A JSON tree whose objects list their keys in the order to write them.
#[derive(Clone, Debug, PartialEq)]
enum Ordered {
    Leaf(Value),
    Array(Vec<Ordered>),
    Object(Vec<(String, Ordered)>),
}

/// Keys of a provider's tool definition, in the order to write them.
const WRAPPER_KEYS: &[&str] = &[
    "type",
    "function",
    "functionDeclarations",
    "name",
    "title",
    "description",
    "input_schema",
    "inputSchema",
    "parameters",
    "outputSchema",
    "annotations",
    "strict",
    "cache_control",
];

/// Keys of a schema node (and of MCP annotations), in the order to write them.
const SCHEMA_KEYS: &[&str] = &[
    "description",
    "title",
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
    "type",
    "nullable",
    "format",
    "enum",
    "const",
    "items",
    "uniqueItems",
    "properties",
    "required",
    "additionalProperties",
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "pattern",
    "default",
    "anyOf",
    "oneOf",
    "allOf",
    "$defs",
];

impl Ordered {
    /// `value` ordered after `objects`; `near`, the object shapes of the
    /// value being written (a field's, as its parent's properties are
    /// written), are looked at first, so of two objects with the same
    /// field names (`{start, end}` and `{end, start}`), each is written in
    /// its own order.
    fn new(value: &Value, objects: &[&ObjectShape], near: &[&ObjectShape], is_properties: bool) -> Self {
        match value {
            Value::Array(items) => {
                Ordered::Array(items.iter().map(|v| Ordered::new(v, objects, near, false)).collect())
            }
            Value::Object(map) if is_properties => {
                let (order, declared) = properties_order(map, near, objects);
                Ordered::Object(
                    order
                        .into_iter()
                        .map(|key| {
                            let mut near = Vec::new();
                            if let Some(field) = declared.and_then(|object| object.field(key)) {
                                object_shapes(&field.shape, &mut near);
                            }
                            (key.to_owned(), Ordered::new(&map[key], objects, &near, false))
                        })
                        .collect(),
                )
            }
            Value::Object(map) => {
                let wrapper = map.contains_key("name") || map.contains_key("function");
                let rank = if wrapper { WRAPPER_KEYS } else { SCHEMA_KEYS };
                let mut keys: Vec<&String> = map.keys().collect();
                // Known keys by rank, then the rest as the map has them (by name).
                keys.sort_by_key(|key| rank.iter().position(|k| k == key).unwrap_or(rank.len()));
                let mut entries: Vec<(String, Ordered)> = keys
                    .into_iter()
                    .map(|key| {
                        let child = Ordered::new(&map[key], objects, near, key == "properties" && !wrapper);
                        (key.clone(), child)
                    })
                    .collect();
                // `required` lists its names in the order of `properties`.
                // (Each name's place is looked up, not searched for: a
                // mounted tool may list many thousands.)
                if let Some(Ordered::Object(properties)) = entry(&entries, "properties") {
                    let rank: HashMap<String, usize> = properties
                        .iter()
                        .enumerate()
                        .map(|(i, (k, _))| (k.clone(), i))
                        .collect();
                    if let Some((_, Ordered::Array(required))) = entries.iter_mut().find(|(k, _)| k == "required") {
                        required.sort_by_key(|name| match name {
                            Ordered::Leaf(Value::String(name)) => rank.get(name).copied(),
                            _ => None,
                        });
                    }
                }
                Ordered::Object(entries)
            }
            leaf => Ordered::Leaf(leaf.clone()),
        }
    }
}

fn entry<'e>(entries: &'e [(String, Ordered)], key: &str) -> Option<&'e Ordered> {
    entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// The keys of a `properties` object in the order of the object shape with
/// exactly these fields, looked for among `near` first, and that shape; by
/// name when none has them.
fn properties_order<'m, 'o>(
    map: &'m Map<String, Value>,
    near: &[&'o ObjectShape],
    objects: &[&'o ObjectShape],
) -> (Vec<&'m str>, Option<&'o ObjectShape>) {
    let fits = |o: &&&ObjectShape| o.fields.len() == map.len() && o.fields.iter().all(|f| map.contains_key(&f.name));
    let declared = near.iter().find(fits).or_else(|| objects.iter().find(fits)).copied();
    let order = match declared {
        Some(object) => object
            .fields
            .iter()
            .filter_map(|f| map.get_key_value(&f.name).map(|(k, _)| k.as_str()))
            .collect(),
        None => map.keys().map(String::as_str).collect(),
    };
    (order, declared)
}

impl Serialize for Ordered {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Ordered::Leaf(value) => value.serialize(serializer),
            Ordered::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Ordered::Object(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ToolParam;
    use crate::schema::Field;

    #[test]
    fn properties_keep_declaration_order_and_keywords_a_fixed_one() {
        let params = ObjectShape::new(
            vec![
                Field::new("zeta", String::shape().describe("Z"), false, "String"),
                Field::new("alpha", u32::shape().describe("A"), true, "u32"),
            ],
            true,
        );
        let schema = Schema::new(params.to_json_schema(), &[&params]);
        assert_eq!(
            schema.to_string(),
            r#"{"type":"object","properties":{"zeta":{"description":"Z","type":"string"},"alpha":{"description":"A","type":"integer","minimum":0}},"required":["zeta"],"additionalProperties":false}"#
        );
        assert_eq!(schema["properties"]["alpha"]["type"], json!("integer"));
    }

    #[test]
    fn objects_with_the_same_field_names_keep_each_its_own_order() {
        let window = ObjectShape::new(
            vec![
                Field::new("start", u32::shape(), false, "u32"),
                Field::new("end", u32::shape(), false, "u32"),
            ],
            true,
        );
        let span = ObjectShape::new(
            vec![
                Field::new("end", u32::shape(), false, "u32"),
                Field::new("start", u32::shape(), false, "u32"),
            ],
            true,
        );
        let params = ObjectShape::new(
            vec![
                Field::new("span", Shape::new(Kind::Object(span)), false, "Span"),
                Field::new(
                    "window",
                    Shape::new(Kind::Array {
                        items: Box::new(Shape::new(Kind::Object(window.clone()))),
                        unique: false,
                    }),
                    false,
                    "Vec<Window>",
                ),
            ],
            true,
        );
        let mut objects = vec![&params];
        for field in &params.fields {
            object_shapes(&field.shape, &mut objects);
        }
        let text = Schema::new(params.to_json_schema(), &objects).to_string();
        let at = |needle: &str| text.find(needle).unwrap_or_else(|| panic!("{needle} in {text}"));
        // `span` is written first: its fields come first in the text.
        assert!(at(r#""end""#) < at(r#""start""#), "{text}");
        let inner = &text[at(r#""window""#)..];
        assert!(inner.find(r#""start""#) < inner.find(r#""end""#), "{text}");
    }

    #[test]
    fn many_required_names_are_written_in_the_order_of_the_properties() {
        // A mounted schema may list many thousands; each name's place is
        // looked up, not searched for.
        let n = 50_000;
        let name = |i: usize| format!("p{i:05}");
        let properties: Map<String, Value> = (0..n).map(|i| (name(i), json!({"type": "string"}))).collect();
        let required: Vec<Value> = (0..n).rev().map(|i| Value::String(name(i))).collect();
        let schema = Schema::new(
            json!({"type": "object", "properties": properties, "required": required}),
            &[],
        );
        let written: Value = serde_json::from_str(&schema.to_string()).unwrap();
        let names: Vec<String> = (0..n).map(name).collect();
        assert_eq!(written["required"], json!(names));
    }

    #[test]
    fn wrappers_put_the_name_before_the_schema() {
        let value = json!({"input_schema": {"type": "object"}, "description": "d", "name": "n"});
        let schema = Schema::new(value, &[]);
        assert_eq!(
            schema.to_string(),
            r#"{"name":"n","description":"d","input_schema":{"type":"object"}}"#
        );
    }
}
