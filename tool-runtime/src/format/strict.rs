//! Schema rewrites for strict tool use (SPEC section 5).
//!
//! Strict modes demand that every property of every object be `required`
//! and that objects allow no other keys. An optional property therefore
//! becomes required but nullable (`["T", "null"]`), and the binder reads the
//! `null` the model then sends as absence. Keywords a strict mode rejects
//! are not dropped: they move into the description, so the model still reads
//! them, and the binder still enforces them.

use std::collections::HashSet;

use serde_json::{Map, Value};

/// What one provider's strict mode rejects, and so moves into descriptions.
#[derive(Clone, Copy, Debug)]
pub struct StrictRules {
    /// Keywords it rejects.
    moved: &'static [&'static str],
    /// It knows the string format `uri` besides [`FORMATS`]; any other
    /// format is moved.
    knows_uri: bool,
}

/// The string `format`s both strict modes know.
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

impl StrictRules {
    fn knows_format(&self, format: &str) -> bool {
        FORMATS.contains(&format) || (self.knows_uri && format == "uri")
    }
}

/// OpenAI's strict mode: no defaults, length bounds or `uniqueItems`.
pub const OPENAI: StrictRules = StrictRules {
    moved: &["default", "minLength", "maxLength", "uniqueItems"],
    knows_uri: false,
};

/// Anthropic's strict mode: no numeric, length or item bounds.
pub const ANTHROPIC: StrictRules = StrictRules {
    moved: &[
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "uniqueItems",
    ],
    knows_uri: true,
};

/// Whether strict mode can express `schema`. It cannot a free-form object
/// (no `properties`, or `additionalProperties` that is not `false`: strict
/// mode demands `false`), an object whose `required` names a key its
/// `properties` lack (strict mode would forbid the key the tool requires),
/// a value of any type (no `type` or `enum`), a list of anything (no
/// `items`), nor `anyOf`, `oneOf`, `allOf`, `not`,
/// conditionals, tuples, or keywords on an object's keys and their number
/// (a union's optional property would take the `null` a strict model
/// sends as a value; the others the providers refuse). Such a tool keeps its plain definition
/// in a strict request, without `strict: true`. (A mounted tool's schema
/// can hold any of these.)
pub fn expressible(schema: &Value) -> bool {
    // `true` (any value) and `false` (none) have no strict form.
    let Value::Object(node) = schema else {
        return false;
    };
    const UNSUPPORTED: &[&str] = &[
        "anyOf",
        "oneOf",
        "allOf",
        "not",
        "if",
        "then",
        "else",
        "prefixItems",
        "additionalItems",
        "contains",
        "patternProperties",
        "propertyNames",
        "dependentRequired",
        "dependentSchemas",
        "dependencies",
        "unevaluatedProperties",
        "unevaluatedItems",
        "minProperties",
        "maxProperties",
    ];
    // Keywords of another type than the node's the strict form leaves out
    // ([`foreign_keywords`]), so they are not judged.
    let foreign = foreign_keywords(node);
    if UNSUPPORTED
        .iter()
        .any(|key| node.contains_key(*key) && !foreign.contains(key))
    {
        return false;
    }
    if !node.contains_key("type") && !node.contains_key("enum") {
        return false;
    }
    let is = |ty: &str| has_type(node, ty);
    if is("object") {
        let closed = node
            .get("additionalProperties")
            .is_none_or(|a| *a == Value::Bool(false));
        let properties_ok = match node.get("properties") {
            Some(Value::Object(properties)) => {
                crate::schema::required_names(node).all(|name| properties.contains_key(name))
                    && properties.values().all(expressible)
            }
            _ => false,
        };
        if !(closed && properties_ok) {
            return false;
        }
    }
    if is("array") && !node.get("items").is_some_and(expressible) {
        return false;
    }
    true
}

/// Whether the node's `type` names `ty` (alone, or in a list of types).
fn has_type(node: &Map<String, Value>, ty: &str) -> bool {
    match node.get("type") {
        Some(Value::String(t)) => t == ty,
        Some(Value::Array(types)) => types.iter().any(|t| t == ty),
        _ => false,
    }
}

/// The keywords of an object's values or a list's on a node whose type is
/// neither (a schema written elsewhere may hold `properties` on a
/// string): they say nothing of its values, and rewritten for strict mode
/// they would put object keywords on a string, which the strict checkers
/// refuse (and with it the whole request). The strict form leaves them
/// out, as Gemini's does.
fn foreign_keywords(node: &Map<String, Value>) -> Vec<&'static str> {
    const OBJECT: &[&str] = &[
        "properties",
        "required",
        "additionalProperties",
        "minProperties",
        "maxProperties",
    ];
    const ARRAY: &[&str] = &["items", "minItems", "maxItems", "uniqueItems"];
    let mut foreign = Vec::new();
    for (ty, keywords) in [("object", OBJECT), ("array", ARRAY)] {
        if !has_type(node, ty) {
            foreign.extend(keywords.iter().copied().filter(|key| node.contains_key(*key)));
        }
    }
    foreign
}

/// Whether a strict schema stays within the sizes OpenAI's strict mode
/// takes (its structured-output limits: at most 10 levels of nesting,
/// 5,000 properties, 1,000 enum values, 120,000 characters of property
/// names, enum and const values, and 15,000 characters of values in one
/// string enum of more than 250): beyond them the whole request is refused,
/// so such a tool keeps its plain definition. A mounted tool's schema can
/// be that large (a parameter listing every time zone, say).
pub(crate) fn within_openai_limits(schema: &Value) -> bool {
    let mut size = Size::default();
    size.measure(schema, 1);
    size.depth <= 10
        && size.properties <= 5_000
        && size.enum_values <= 1_000
        && size.characters <= 120_000
        && size.large_enum_characters <= 15_000
}

/// What [`within_openai_limits`] counts.
#[derive(Default)]
struct Size {
    /// The deepest object or array, the root being level 1.
    depth: usize,
    properties: usize,
    enum_values: usize,
    /// Property names, enum values and const values.
    characters: usize,
    /// The values of the longest string enum of more than 250 values.
    large_enum_characters: usize,
}

impl Size {
    fn measure(&mut self, schema: &Value, level: usize) {
        let Value::Object(node) = schema else {
            return;
        };
        let text_len = |value: &Value| match value {
            Value::String(text) => text.chars().count(),
            other => other.to_string().len(),
        };
        if let Some(Value::Array(values)) = node.get("enum") {
            self.enum_values += values.len();
            let characters: usize = values.iter().map(text_len).sum();
            self.characters += characters;
            if values.len() > 250 && values.iter().any(Value::is_string) {
                self.large_enum_characters = self.large_enum_characters.max(characters);
            }
        }
        if let Some(value) = node.get("const") {
            self.characters += text_len(value);
        }
        let is_container = node.contains_key("properties") || node.contains_key("items");
        if is_container {
            self.depth = self.depth.max(level);
        }
        if let Some(Value::Object(properties)) = node.get("properties") {
            self.properties += properties.len();
            for (name, property) in properties {
                self.characters += name.chars().count();
                self.measure(property, level + 1);
            }
        }
        if let Some(items) = node.get("items") {
            self.measure(items, level + 1);
        }
    }
}

/// The strict form of `schema`, with what `rules` rejects folded into
/// descriptions.
pub fn strict_schema(schema: &Value, rules: &StrictRules) -> Value {
    let mut schema = schema.clone();
    rewrite(&mut schema, rules);
    schema
}

fn rewrite(schema: &mut Value, rules: &StrictRules) {
    let Value::Object(node) = schema else {
        return;
    };
    for key in foreign_keywords(node) {
        node.remove(key);
    }
    move_keywords(node, rules.moved);
    if node
        .get("format")
        .is_some_and(|format| !format.as_str().is_some_and(|f| rules.knows_format(f)))
    {
        move_keywords(node, &["format"]);
    }
    if node.get("properties").is_some_and(Value::is_object) {
        let required: HashSet<String> = crate::schema::required_names(node).map(str::to_owned).collect();
        let Some(Value::Object(properties)) = node.get_mut("properties") else {
            unreachable!("checked above")
        };
        for (name, property) in properties.iter_mut() {
            rewrite(property, rules);
            if !required.contains(name) {
                make_nullable(property);
            }
        }
        let all: Vec<Value> = properties.keys().cloned().map(Value::String).collect();
        node.insert("required".into(), Value::Array(all));
        node.insert("additionalProperties".into(), Value::Bool(false));
    }
    if let Some(items) = node.get_mut("items") {
        rewrite(items, rules);
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
    crate::schema::append_to_description(node, &format!("({})", notes.join("; ")));
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

    #[test]
    fn openai_s_size_limits_are_counted_over_the_whole_schema() {
        let nested = |levels: usize| {
            let mut schema = json!({"type": "string"});
            for _ in 0..levels {
                schema = json!({"type": "object", "properties": {"a": schema}, "required": ["a"]});
            }
            schema
        };
        assert!(within_openai_limits(&nested(10)));
        assert!(!within_openai_limits(&nested(11)));
        let properties = |n: usize| {
            let properties: Map<String, Value> =
                (0..n).map(|i| (format!("p{i}"), json!({"type": "integer"}))).collect();
            json!({"type": "object", "properties": properties})
        };
        assert!(within_openai_limits(&properties(5_000)));
        assert!(!within_openai_limits(&properties(5_001)));
        // Enum values count across properties; a large string enum's text
        // has a budget of its own.
        let two_enums = json!({"type": "object", "properties": {
            "a": {"enum": (0..600).collect::<Vec<_>>()},
            "b": {"enum": (0..600).collect::<Vec<_>>()},
        }});
        assert!(!within_openai_limits(&two_enums));
        let long_values = |len: usize| {
            let values: Vec<String> = (0..300).map(|i| format!("{i:0>len$}")).collect();
            json!({"type": "object", "properties": {"a": {"type": "string", "enum": values}}})
        };
        assert!(within_openai_limits(&long_values(50)));
        assert!(!within_openai_limits(&long_values(51)));
    }

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
        let strict = strict_schema(&sample(), &OPENAI);
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
    fn free_form_objects_and_unsupported_keywords_cannot_be_strict() {
        let tool = |property: Value| json!({"type": "object", "properties": {"p": property}});
        // What a mounted tool's schema may hold (pydantic writes `dict` as
        // an object with `additionalProperties: true`).
        for property in [
            json!({"type": "object"}),
            json!({"type": "object", "additionalProperties": true}),
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": true}),
            json!({"type": ["object", "null"]}),
            json!({"type": "array"}),
            json!(true),
            json!({"oneOf": [{"type": "string"}, {"type": "integer"}]}),
            json!({"type": "string", "not": {"const": "x"}}),
            // A union's optional property would take a strict model's `null`.
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
            json!({"const": "x"}),
        ] {
            assert!(!expressible(&tool(property.clone())), "{property}");
        }
        for property in [
            json!({"type": "object", "properties": {"a": {"type": "string"}}}),
            json!({"type": "array", "items": {"type": "string"}}),
            json!({"enum": ["a", "b"]}),
        ] {
            assert!(expressible(&tool(property.clone())), "{property}");
        }
    }

    #[test]
    fn a_required_key_no_property_defines_cannot_be_strict() {
        // Strict mode would require only the properties and forbid other
        // keys: `ghost`, which the tool requires, could never be sent.
        let ghost = json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "ghost"]});
        assert!(!expressible(&ghost));
        let nested = json!({"type": "object", "properties": {"n": ghost}, "required": ["n"]});
        assert!(!expressible(&nested));
        let defined = json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        assert!(expressible(&defined));
    }

    /// Some servers write object keywords on a string (a real Notion
    /// schema did): rewritten, they would put `properties` and
    /// `additionalProperties` on a string and leave its untyped child,
    /// which the strict checkers refuse, and the whole request with it.
    #[test]
    fn keywords_of_another_type_are_left_out_of_the_strict_form() {
        let schema = json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "properties": {"x": {}}, "required": ["x"], "minProperties": 1},
                "tags": {"type": "array", "items": {"type": "string"}, "properties": {"x": {}}},
                "note": {"type": "string", "items": {}, "maxItems": 2},
            },
            "required": ["id", "tags", "note"],
        });
        assert!(expressible(&schema));
        for rules in [&OPENAI, &ANTHROPIC] {
            let strict = strict_schema(&schema, rules);
            assert_eq!(strict["properties"]["id"], json!({"type": "string"}), "{strict}");
            assert_eq!(
                strict["properties"]["tags"],
                json!({"type": "array", "items": {"type": "string"}}),
                "{strict}"
            );
            assert_eq!(strict["properties"]["note"], json!({"type": "string"}), "{strict}");
        }
        // An object's own keywords are still judged.
        let open = json!({"type": "object", "properties": {"m": {"type": "object", "properties": {"x": {}}}}});
        assert!(!expressible(&open));
    }

    #[test]
    fn many_properties_are_rewritten_by_whether_each_is_required() {
        // Whether a property is required is looked up once each: a mounted
        // schema may list many thousands.
        let n = 50_000;
        let properties: Map<String, Value> = (0..n).map(|i| (format!("p{i}"), json!({"type": "string"}))).collect();
        let required: Vec<Value> = (0..n).filter(|i| i % 2 == 0).map(|i| json!(format!("p{i}"))).collect();
        let schema = json!({"type": "object", "properties": properties, "required": required});
        let strict = strict_schema(&schema, &OPENAI);
        assert_eq!(strict["required"].as_array().unwrap().len(), n);
        for i in [0, 1, n - 2, n - 1] {
            let expected = if i % 2 == 0 {
                json!("string")
            } else {
                json!(["string", "null"])
            };
            assert_eq!(strict["properties"][format!("p{i}")]["type"], expected, "p{i}");
        }
    }

    #[test]
    fn anthropic_strict_moves_numeric_bounds_but_keeps_defaults() {
        let strict = strict_schema(&sample(), &ANTHROPIC);
        assert_eq!(
            strict["properties"]["limit"],
            json!({"type": ["integer", "null"], "description": "Limit (at least 1)", "default": 10})
        );
    }

    #[test]
    fn formats_a_strict_mode_does_not_know_are_moved() {
        let schema = json!({
            "type": "object",
            "properties": {
                "site": {"type": "string", "format": "uri"},
                "when": {"type": "string", "format": "date-time"},
            },
            "required": ["site", "when"],
        });
        let openai = strict_schema(&schema, &OPENAI);
        assert_eq!(
            openai["properties"]["site"],
            json!({"type": "string", "description": "(format: \"uri\")"})
        );
        assert_eq!(openai["properties"]["when"]["format"], "date-time");
        let anthropic = strict_schema(&schema, &ANTHROPIC);
        assert_eq!(anthropic["properties"]["site"]["format"], "uri");
    }
}
