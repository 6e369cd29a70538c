//! Schema rewrites for strict tool use (SPEC section 5).
//!
//! Strict modes demand that every property of every object be `required`
//! and that objects allow no other keys. An optional property therefore
//! becomes required but nullable (`["T", "null"]`), and the binder reads the
//! `null` the model then sends as absence. Keywords a strict mode rejects
//! are not dropped: they move into the description, so the model still reads
//! them, and the binder still enforces them.

use serde_json::{Map, Value};

/// Keywords OpenAI's strict mode rejects.
pub const OPENAI_MOVED: &[&str] = &["default", "minLength", "maxLength", "uniqueItems"];

/// Keywords Anthropic's strict mode rejects: numeric, length and item bounds.
pub const ANTHROPIC_MOVED: &[&str] = &[
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
];

/// Whether strict mode can express `schema`: it cannot a free-form map
/// (`additionalProperties` with a schema, where strict mode demands `false`)
/// nor a value of any type (no `type`). Such a tool keeps its plain
/// definition in a strict request, without `strict: true`.
pub fn expressible(schema: &Value) -> bool {
    let Value::Object(node) = schema else {
        return true;
    };
    if !node.contains_key("type") && !node.contains_key("enum") {
        return false;
    }
    if node.get("additionalProperties").is_some_and(Value::is_object) {
        return false;
    }
    let properties_ok = match node.get("properties") {
        Some(Value::Object(properties)) => properties.values().all(expressible),
        _ => true,
    };
    properties_ok && node.get("items").is_none_or(expressible)
}

/// The strict form of `schema`, with `moved` keywords folded into
/// descriptions.
pub fn strict_schema(schema: &Value, moved: &[&str]) -> Value {
    let mut schema = schema.clone();
    rewrite(&mut schema, moved);
    schema
}

fn rewrite(schema: &mut Value, moved: &[&str]) {
    let Value::Object(node) = schema else {
        return;
    };
    move_keywords(node, moved);
    if node.get("properties").is_some_and(Value::is_object) {
        let required: Vec<String> = match node.get("required") {
            Some(Value::Array(names)) => names.iter().filter_map(|n| n.as_str().map(str::to_owned)).collect(),
            _ => Vec::new(),
        };
        let Some(Value::Object(properties)) = node.get_mut("properties") else {
            unreachable!("checked above")
        };
        for (name, property) in properties.iter_mut() {
            rewrite(property, moved);
            if !required.contains(name) {
                make_nullable(property);
            }
        }
        let all: Vec<Value> = properties.keys().cloned().map(Value::String).collect();
        node.insert("required".into(), Value::Array(all));
        node.insert("additionalProperties".into(), Value::Bool(false));
    }
    if let Some(items) = node.get_mut("items") {
        rewrite(items, moved);
    }
    if let Some(values @ Value::Object(_)) = node.get_mut("additionalProperties") {
        rewrite(values, moved);
    }
}

fn make_nullable(property: &mut Value) {
    if let Value::Object(node) = property {
        crate::schema::make_nullable(node);
    }
}

/// Removes `moved` keywords from one schema node and says them in its
/// description instead: `(at least 1; at most 10000; default: 100)`.
pub(crate) fn move_keywords(node: &mut Map<String, Value>, moved: &[&str]) {
    let mut notes = Vec::new();
    for key in moved {
        if let Some(value) = node.remove(*key) {
            notes.push(describe(key, &value));
        }
    }
    if notes.is_empty() {
        return;
    }
    let note = format!("({})", notes.join("; "));
    let description = match node.get("description").and_then(Value::as_str) {
        Some(d) if !d.is_empty() => format!("{d} {note}"),
        _ => note,
    };
    node.insert("description".into(), Value::String(description));
}

fn describe(key: &str, value: &Value) -> String {
    let count = |unit: &str| {
        let plural = if value.as_u64() == Some(1) { "" } else { "s" };
        format!("{value} {unit}{plural}")
    };
    match key {
        "minimum" => format!("at least {value}"),
        "maximum" => format!("at most {value}"),
        "minLength" => format!("at least {}", count("character")),
        "maxLength" => format!("at most {}", count("character")),
        "minItems" => format!("at least {}", count("item")),
        "maxItems" => format!("at most {}", count("item")),
        "uniqueItems" => "items must be distinct".to_owned(),
        "default" => format!("default: {value}"),
        "enum" => match value {
            Value::Array(values) if values.len() == 1 => format!("must be {}", values[0]),
            Value::Array(values) => {
                let values: Vec<String> = values.iter().map(Value::to_string).collect();
                format!("one of {}", values.join(", "))
            }
            other => format!("enum: {other}"),
        },
        other => format!("{other}: {value}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Value {
        json!({
            "type": "object",
            "properties": {
                "q": {"type": "string", "description": "Query", "maxLength": 50},
                "limit": {"type": "integer", "description": "Limit", "default": 10, "minimum": 1},
                "mode": {"type": "string", "enum": ["a", "b"], "description": "Mode"},
                "nested": {
                    "type": "object",
                    "description": "Nested",
                    "properties": {"x": {"type": "number", "description": "X"}},
                    "required": [],
                    "additionalProperties": false
                }
            },
            "required": ["q"],
            "additionalProperties": false
        })
    }

    #[test]
    fn openai_strict_requires_everything_and_moves_defaults_and_lengths() {
        let strict = strict_schema(&sample(), OPENAI_MOVED);
        // Every property is required. (A `Value`'s keys are ordered by name;
        // a rendered definition writes `required` in declaration order, which
        // the format snapshots check.)
        let mut required: Vec<&str> = strict["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        required.sort_unstable();
        assert_eq!(required, ["limit", "mode", "nested", "q"]);
        assert_eq!(
            strict["properties"]["q"],
            json!({"type": "string", "description": "Query (at most 50 characters)"})
        );
        assert_eq!(
            strict["properties"]["limit"],
            json!({"type": ["integer", "null"], "description": "Limit (default: 10)", "minimum": 1})
        );
        assert_eq!(strict["properties"]["mode"]["enum"], json!(["a", "b", null]));
        let nested = &strict["properties"]["nested"];
        assert_eq!(nested["type"], json!(["object", "null"]));
        assert_eq!(nested["required"], json!(["x"]));
        assert_eq!(nested["properties"]["x"]["type"], json!(["number", "null"]));
    }

    #[test]
    fn maps_and_untyped_values_cannot_be_strict() {
        assert!(expressible(&sample()));
        let map = json!({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "string"}}}});
        assert!(!expressible(&map));
        let any = json!({"type": "object", "properties": {"v": {"description": "anything"}}});
        assert!(!expressible(&any));
        let nested = json!({"type": "object", "properties": {"l": {"type": "array", "items": {"description": "x"}}}});
        assert!(!expressible(&nested));
    }

    #[test]
    fn anthropic_strict_moves_numeric_bounds_but_keeps_defaults() {
        let strict = strict_schema(&sample(), ANTHROPIC_MOVED);
        assert_eq!(
            strict["properties"]["limit"],
            json!({"type": ["integer", "null"], "description": "Limit (at least 1)", "default": 10})
        );
    }
}
