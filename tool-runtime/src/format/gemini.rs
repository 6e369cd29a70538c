//! Gemini: function declarations with an OpenAPI-subset schema,
//! `functionCall` parts in, `functionResponse` parts out.
//!
//! Gemini's schema dialect has no `additionalProperties`, `$ref`, `const`,
//! `$schema` or type arrays; it marks nullable values with `nullable: true`
//! and spells types in capitals (`STRING`).

use serde_json::{Map, Value, json};

use super::strict::move_keywords;
use super::{FormatError, check_call_ids, check_only_first_has_calls, check_result_ids_distinct, tool_name};
use crate::call::{CallArguments, ToolCall};
use crate::output::Content;
use crate::result::ToolResult;
use crate::tool::ToolDefinition;

/// `{name, description, parameters?}`; a tool without parameters has no
/// `parameters` (Gemini refuses an object with no properties).
pub(crate) fn declaration(tool: &ToolDefinition) -> Value {
    let mut out = json!({"name": tool.name(), "description": tool.description()});
    if !tool.params().fields.is_empty() {
        out["parameters"] = openapi_schema(tool.input_schema());
    }
    out
}

/// The keywords of Gemini's `Schema`.
const GEMINI_KEYWORDS: &[&str] = &[
    "anyOf",
    "default",
    "description",
    "enum",
    "example",
    "format",
    "items",
    "maxItems",
    "maxLength",
    "maxProperties",
    "maximum",
    "minItems",
    "minLength",
    "minProperties",
    "minimum",
    "nullable",
    "pattern",
    "properties",
    "propertyOrdering",
    "required",
    "title",
    "type",
];

/// The OpenAPI subset Gemini accepts, made from a portable schema.
///
/// Gemini refuses a node without a `type`, an `enum` on anything but a
/// string and an array without `items`, all of which a schema written
/// elsewhere (or a `serde_json::Value` parameter) may hold. A node without
/// a type takes the one its keywords imply (`properties` an object, `items`
/// a list, string `enum` values a string); a node that truly takes any
/// value is written as [`any_value`] says.
pub(crate) fn openapi_schema(schema: &Value) -> Value {
    let Value::Object(node) = schema else {
        // `true`, or anything else that is no schema object.
        return Value::Object(any_value());
    };
    let mut out = Map::new();
    for (key, value) in node {
        match key.as_str() {
            "$schema" | "$ref" | "$defs" | "additionalProperties" => {}
            "const" => {
                out.insert("enum".into(), json!([value]));
            }
            "type" => {
                let (ty, nullable) = match value {
                    Value::Array(types) => (
                        types.iter().find(|t| *t != "null").cloned().unwrap_or(Value::Null),
                        types.iter().any(|t| t == "null"),
                    ),
                    other => (other.clone(), false),
                };
                if let Some(t) = ty.as_str().and_then(gemini_type) {
                    out.insert("type".into(), Value::from(t));
                }
                if nullable {
                    out.insert("nullable".into(), Value::Bool(true));
                }
            }
            "properties" => {
                let properties = value
                    .as_object()
                    .map(|p| p.iter().map(|(k, v)| (k.clone(), openapi_schema(v))).collect())
                    .unwrap_or_default();
                out.insert("properties".into(), Value::Object(properties));
            }
            "items" => {
                out.insert("items".into(), openapi_schema(value));
            }
            "anyOf" => {
                let members = value.as_array().into_iter().flatten().map(openapi_schema).collect();
                out.insert("anyOf".into(), Value::Array(members));
            }
            "enum" => {
                let values: Vec<Value> = value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|v| !v.is_null())
                    .cloned()
                    .collect();
                out.insert("enum".into(), Value::Array(values));
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    if !out.contains_key("type")
        && let Some(ty) = implied_type(node)
    {
        out.insert("type".into(), Value::from(ty));
    }
    // What Gemini cannot express, the model still reads.
    if let Some(Value::Object(values)) = node.get("additionalProperties")
        && !node.contains_key("properties")
    {
        let kind = values.get("type").and_then(Value::as_str).unwrap_or("any JSON value");
        crate::schema::append_to_description(&mut out, &format!("(an object of {kind} values by key)"));
    }
    move_keywords(&mut out, &["uniqueItems"]);
    // Gemini refuses a `required` name that no property defines (which a
    // schema written elsewhere may hold: the key is still the tool's to
    // ask for).
    if let Some(Value::Array(required)) = out.get("required") {
        let defined = |name: &Value| {
            let properties = out.get("properties").and_then(Value::as_object);
            name.as_str()
                .is_some_and(|name| properties.is_some_and(|p| p.contains_key(name)))
        };
        let kept: Vec<Value> = required.iter().filter(|name| defined(name)).cloned().collect();
        if kept.is_empty() {
            out.remove("required");
        } else {
            out.insert("required".into(), Value::Array(kept));
        }
    }
    // Gemini refuses a `format` it does not know for the type (`uri`, say).
    if let Some(format) = out.get("format").and_then(Value::as_str) {
        let known: &[&str] = match out.get("type").and_then(Value::as_str) {
            Some("STRING") => &["enum", "date-time"],
            Some("NUMBER") => &["float", "double"],
            Some("INTEGER") => &["int32", "int64"],
            _ => &[],
        };
        if !known.contains(&format) {
            move_keywords(&mut out, &["format"]);
        }
    }
    // Gemini's `enum` lists the values of a string only; other values (a
    // remote tool's `{"type": "integer", "enum": [1, 2, 3]}`) the model
    // reads in the description.
    if let Some(Value::Array(values)) = out.get("enum")
        && !(out.get("type") == Some(&Value::from("STRING")) && values.iter().all(Value::is_string))
    {
        move_keywords(&mut out, &["enum"]);
    }
    if out.get("type") == Some(&Value::from("ARRAY")) && !out.contains_key("items") {
        out.insert("items".into(), Value::Object(any_value()));
    }
    // Keywords Gemini's Schema lacks (in schemas written elsewhere, such as
    // a mounted MCP tool's), the model still reads in the description.
    let unknown: Vec<String> = out
        .keys()
        .filter(|k| !GEMINI_KEYWORDS.contains(&k.as_str()))
        .cloned()
        .collect();
    move_keywords(&mut out, &unknown.iter().map(String::as_str).collect::<Vec<_>>());
    if !out.contains_key("type") {
        match out.get("anyOf") {
            // A union is typed as the google-genai SDK types one: by its
            // members' type when they share one, else `OBJECT`.
            Some(Value::Array(members)) if !members.is_empty() => {
                let first = members[0].get("type");
                let ty = match first {
                    Some(ty) if members.iter().all(|m| m.get("type") == Some(ty)) => ty.clone(),
                    _ => Value::from("OBJECT"),
                };
                out.insert("type".into(), ty);
            }
            _ => out.extend(any_value()),
        }
    }
    // A keyword of another type than the node's says nothing of its values
    // (each applies to values of its own type), and Gemini refuses it
    // ("properties: only allowed for OBJECT type"), as a schema written
    // elsewhere may hold it.
    let ty = out.get("type").and_then(Value::as_str).unwrap_or_default();
    let foreign: &[&str] = match ty {
        "OBJECT" => &["items", "minItems", "maxItems"],
        "ARRAY" => &["properties", "required", "minProperties", "maxProperties"],
        _ => &[
            "properties",
            "required",
            "minProperties",
            "maxProperties",
            "items",
            "minItems",
            "maxItems",
        ],
    };
    for key in foreign {
        out.remove(*key);
    }
    Value::Object(out)
}

/// Gemini's name of a JSON Schema type; `None` for a name that is none.
fn gemini_type(ty: &str) -> Option<&'static str> {
    Some(match ty {
        "string" => "STRING",
        "number" => "NUMBER",
        "integer" => "INTEGER",
        "boolean" => "BOOLEAN",
        "array" => "ARRAY",
        "object" => "OBJECT",
        "null" => "NULL",
        _ => return None,
    })
}

/// The type a node that names none holds, where its keywords say: keys of
/// an object, of a list, or of a string, listed values of one type (a
/// mounted tool's `{"const": "x"}`), or numeric bounds.
fn implied_type(node: &Map<String, Value>) -> Option<&'static str> {
    let has = |keys: &[&str]| keys.iter().any(|key| node.contains_key(*key));
    if has(&[
        "properties",
        "additionalProperties",
        "required",
        "minProperties",
        "maxProperties",
    ]) {
        return Some("OBJECT");
    }
    if has(&["items", "prefixItems", "minItems", "maxItems", "uniqueItems"]) {
        return Some("ARRAY");
    }
    let values: Vec<&Value> = match (node.get("const"), node.get("enum")) {
        (Some(one), _) => vec![one],
        (None, Some(Value::Array(values))) => values.iter().filter(|v| !v.is_null()).collect(),
        _ => Vec::new(),
    };
    if !values.is_empty() {
        let all = |is: fn(&Value) -> bool| values.iter().all(|v| is(v));
        return if all(Value::is_string) {
            Some("STRING")
        } else if all(|v| v.is_i64() || v.is_u64()) {
            Some("INTEGER")
        } else if all(Value::is_number) {
            Some("NUMBER")
        } else if all(Value::is_boolean) {
            Some("BOOLEAN")
        } else {
            None
        };
    }
    if has(&["pattern", "minLength", "maxLength"]) {
        return Some("STRING");
    }
    if has(&[
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    ]) {
        return Some("NUMBER");
    }
    None
}

/// Any JSON value, which Gemini's schema has no node for: a union of each
/// type a value can have (typed as the google-genai SDK types a union),
/// whose list holds any value but a list. The model then sends the value
/// itself, which the binder passes on as sent. (A string of JSON text
/// instead would reach the tool as that string: the binder parses JSON
/// text only where the schema asks for an object or a list.)
fn any_value() -> Map<String, Value> {
    let scalars_and_objects = || {
        ["STRING", "NUMBER", "BOOLEAN", "OBJECT"]
            .into_iter()
            .map(|ty| json!({ "type": ty }))
            .collect::<Vec<Value>>()
    };
    let mut members = scalars_and_objects();
    members.push(json!({"type": "ARRAY", "items": {"type": "OBJECT", "anyOf": scalars_and_objects()}}));
    let mut out = Map::new();
    out.insert("type".into(), Value::from("OBJECT"));
    out.insert("anyOf".into(), Value::Array(members));
    out
}

/// The `functionCall` parts of a model turn (a `Content` object, or a whole
/// response whose first candidate holds it), in order. Gemini's call ids
/// are optional; where present they must be distinct. A response whose
/// other candidates (`candidateCount` above 1) hold calls too is an error,
/// never read as the first one's calls alone: pass the content of the
/// candidate to answer.
///
/// A turn with nothing in it has no calls: a content without `parts`, a
/// candidate without content that says why it ended (`MAX_TOKENS`,
/// `SAFETY`, ...), a prompt refused with no candidates
/// (`promptFeedback.blockReason`). A candidate that ended on a call the
/// model got wrong (`MALFORMED_FUNCTION_CALL`, `UNEXPECTED_TOOL_CALL`) is
/// an error naming the reason: a call was lost.
pub fn tool_calls(content: &Value) -> Result<Vec<ToolCall>, FormatError> {
    let no_candidates = content
        .get("candidates")
        .is_none_or(|c| c.as_array().is_some_and(Vec::is_empty));
    if no_candidates && content.pointer("/promptFeedback/blockReason").is_some() {
        return Ok(Vec::new());
    }
    let content = match content.get("candidates") {
        None => content,
        Some(candidates) => match first_candidate_content(candidates)? {
            Some(content) => content,
            None => return Ok(Vec::new()),
        },
    };
    // A content without parts: `{"role": "model"}`, or `{}` when thinking
    // used the whole budget.
    let empty = content
        .as_object()
        .is_some_and(|content| content.is_empty() || content.contains_key("role"));
    let parts = match content.get("parts") {
        Some(Value::Array(parts)) => parts,
        None if empty => return Ok(Vec::new()),
        _ => return Err(FormatError::malformed("the content has no parts array")),
    };
    let mut calls = Vec::new();
    for call in parts.iter().filter_map(|p| p.get("functionCall")) {
        let Some(name) = tool_name(&call["name"]) else {
            return Err(FormatError::malformed("a functionCall lacks its name"));
        };
        let args = call.get("args").cloned().unwrap_or(Value::Object(Map::new()));
        let mut tool_call = ToolCall::new(name, CallArguments::Json(args));
        tool_call.id = call["id"].as_str().map(str::to_owned);
        calls.push(tool_call);
    }
    check_call_ids(calls.iter().filter_map(|c| c.id.as_deref()))?;
    Ok(calls)
}

/// The content of a response's first candidate, `None` when it has none
/// and says why it ended; calls in any other candidate would be left
/// unread, so they are an error, as is a candidate that ended on a call
/// the model got wrong.
fn first_candidate_content(candidates: &Value) -> Result<Option<&Value>, FormatError> {
    let Some(candidates) = candidates.as_array() else {
        return Err(FormatError::malformed("the response's candidates is not a list"));
    };
    let Some(first) = candidates.first() else {
        return Err(FormatError::malformed("the response has no candidate"));
    };
    let finish = first["finishReason"].as_str();
    if let Some(reason @ ("MALFORMED_FUNCTION_CALL" | "UNEXPECTED_TOOL_CALL")) = finish {
        return Err(FormatError::malformed(format!(
            "the model's function call was lost (finishReason {reason})"
        )));
    }
    let holds_calls = |candidate: &Value| {
        candidate
            .pointer("/content/parts")
            .and_then(Value::as_array)
            .is_some_and(|parts| parts.iter().any(|part| part.get("functionCall").is_some()))
    };
    check_only_first_has_calls(
        candidates,
        Some(0),
        holds_calls,
        ["response", "candidates", "content of the candidate"],
    )?;
    match first.get("content") {
        Some(content) => Ok(Some(content)),
        None if finish.is_some() => Ok(None),
        None => Err(FormatError::malformed("the response's first candidate has no content")),
    }
}

/// The `role: "user"` content answering a model turn: one
/// `functionResponse` part per result, in the order given (Gemini matches
/// them to its calls by position, or by id where the calls had ids),
/// `response.output` on success and `response.error` on failure, and no
/// other part: Gemini refuses a turn whose parts outnumber its calls.
/// Images and documents are named in the text, not sent: Gemini 3 takes
/// them only inside the `functionResponse` (its `parts`), which earlier
/// models refuse (`function_response.parts is not supported for this
/// model`), and this reply is for any model. Ids, where given, must be
/// distinct; a reply of no results is an error (the API refuses a content
/// without parts).
pub fn reply(results: &[ToolResult]) -> Result<Value, FormatError> {
    FormatError::check_some_results(results)?;
    check_result_ids_distinct(results.iter().filter_map(|r| r.call_id.as_deref()))?;
    let parts: Vec<Value> = results.iter().map(function_response_part).collect();
    Ok(json!({"role": "user", "parts": parts}))
}

fn function_response_part(result: &ToolResult) -> Value {
    let key = if result.is_error { "error" } else { "output" };
    // The structured content is never cut; when the text was, or when it
    // is longer than the output limit itself (a mounted tool's short text
    // beside a huge structured result), the model reads the cut text
    // instead.
    let body = match &result.structured_content {
        Some(structured) if !result.is_error && !result.text_cut() && !result.structured_too_long() => {
            let mut body = json!({key: structured});
            let notes = notes_beside(result, structured);
            if !notes.is_empty() {
                body["notes"] = Value::String(notes);
            }
            body
        }
        // Its images and documents its text names.
        _ => json!({key: super::text_only(result)}),
    };
    let mut response = json!({"name": result.tool(), "response": body});
    if let Some(id) = &result.call_id {
        response["id"] = Value::String(id.clone());
    }
    json!({ "functionResponse": response })
}

/// What a result says beside its structured content, which goes as the
/// output in its place: every block but the structured value's own JSON
/// text (a mounted tool's summary, the note `with_warnings_shown` adds,
/// the notes naming its images and documents).
fn notes_beside(result: &ToolResult, structured: &Value) -> String {
    // A string is its own text as it is; anything else, its JSON.
    let own_text = |block: &&Content| {
        block.as_text().is_some_and(|text| match structured {
            Value::String(string) => text == string,
            _ => serde_json::from_str::<Value>(text).is_ok_and(|value| value == *structured),
        })
    };
    let notes: Vec<String> = result
        .content
        .iter()
        .filter(|block| !own_text(block))
        .map(super::block_text)
        .collect();
    notes.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_structured_string_is_not_repeated_as_a_note() {
        let result = ToolResult::new("priority", None, crate::ToolOutput::json(json!("high")));
        let reply = reply(&[result]).unwrap();
        assert_eq!(
            reply["parts"][0]["functionResponse"]["response"],
            json!({"output": "high"}),
            "{reply}"
        );
        let number_text = ToolResult::new("code", None, crate::ToolOutput::json(json!("42")));
        let reply = super::reply(&[number_text]).unwrap();
        assert_eq!(
            reply["parts"][0]["functionResponse"]["response"],
            json!({"output": "42"})
        );
    }

    #[test]
    fn the_schema_becomes_gemini_s_dialect() {
        let schema = json!({
            "type": "object",
            "properties": {
                "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "description": "Tags"},
                "maybe": {"type": ["integer", "null"]},
                "weights": {"type": "object", "additionalProperties": {"type": "number"}, "description": "Weights"},
                "fixed": {"const": "x"},
                "level": {"type": "integer", "enum": [1, 2, 3], "description": "Level"},
                "flag": {"type": "boolean", "const": true},
                "site": {"type": "string", "format": "uri"},
                "when": {"type": "string", "format": "date-time"}
            },
            "required": ["tags"],
            "additionalProperties": false
        });
        assert_eq!(
            openapi_schema(&schema),
            json!({
                "type": "OBJECT",
                "properties": {
                    "tags": {"type": "ARRAY", "items": {"type": "STRING"}, "description": "Tags (items must be distinct)"},
                    "maybe": {"type": "INTEGER", "nullable": true},
                    "weights": {"type": "OBJECT", "description": "Weights (an object of number values by key)"},
                    "fixed": {"type": "STRING", "enum": ["x"]},
                    "level": {"type": "INTEGER", "description": "Level (one of 1, 2, 3)"},
                    "flag": {"type": "BOOLEAN", "description": "(must be true)"},
                    "site": {"type": "STRING", "description": "(format: \"uri\")"},
                    "when": {"type": "STRING", "format": "date-time"}
                },
                "required": ["tags"]
            })
        );
    }

    /// Every node of a Gemini schema has a type, only a string has an
    /// `enum`, and every list says what its items are.
    fn assert_gemini_typed(node: &Value, path: &str) {
        let ty = node["type"].as_str();
        assert!(
            matches!(
                ty,
                Some("STRING" | "NUMBER" | "INTEGER" | "BOOLEAN" | "ARRAY" | "OBJECT" | "NULL")
            ),
            "{path} has no type: {node}"
        );
        assert!(node.get("enum").is_none() || ty == Some("STRING"), "{path}: {node}");
        assert!(ty != Some("ARRAY") || node.get("items").is_some(), "{path}: {node}");
        assert!(
            ty == Some("OBJECT") || node.get("properties").is_none(),
            "{path}: {node}"
        );
        assert!(ty == Some("ARRAY") || node.get("items").is_none(), "{path}: {node}");
        for (name, property) in node["properties"].as_object().into_iter().flatten() {
            assert_gemini_typed(property, &format!("{path}.{name}"));
        }
        if let Some(items) = node.get("items") {
            assert_gemini_typed(items, &format!("{path}[]"));
        }
        for (i, member) in node["anyOf"].as_array().into_iter().flatten().enumerate() {
            assert_gemini_typed(member, &format!("{path}|{i}"));
        }
    }

    /// Some servers write object keywords on a string (a real Notion
    /// schema did): Gemini refuses the whole request for it.
    #[test]
    fn keywords_of_another_type_are_dropped() {
        let schema = json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "properties": {"x": {}}, "required": ["x"], "items": {}},
                "list": {"type": "array", "items": {"type": "integer"}, "properties": {"x": {}}},
                "record": {"type": "object", "properties": {"a": {"type": "string"}}, "minItems": 1},
            },
        });
        let out = openapi_schema(&schema);
        assert_gemini_typed(&out, "root");
        assert_eq!(out["properties"]["id"], json!({"type": "STRING"}));
        assert_eq!(
            out["properties"]["list"],
            json!({"type": "ARRAY", "items": {"type": "INTEGER"}})
        );
        assert_eq!(
            out["properties"]["record"],
            json!({"type": "OBJECT", "properties": {"a": {"type": "STRING"}}})
        );
    }

    #[test]
    fn every_node_gets_a_type_and_only_strings_keep_an_enum() {
        // What a `serde_json::Value` parameter, a list of them, and a
        // mounted tool's schema may hold.
        let schema = json!({
            "type": "object",
            "properties": {
                "any": {"description": "Anything"},
                "anys": {"type": "array", "items": {}},
                "bare_list": {"type": "array"},
                "always": true,
                "fixed": {"const": "x"},
                "three": {"const": 3},
                "ratio": {"enum": [0.5, 1]},
                "on": {"const": true},
                "mixed": {"enum": ["a", 1]},
                "typed_wrongly": {"type": "integer", "enum": ["1", "2"]},
                "unknown_type": {"type": "any"},
                "nested": {"properties": {"a": {"enum": ["p", "q"]}}, "required": ["a"]},
                "listed": {"items": {"minLength": 1}},
                "bounded": {"minimum": 1},
                "union": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "strings": {"anyOf": [{"type": "string", "format": "date"}, {"type": "string"}]},
                "never": {"not": {}},
                "tuple": {"type": "array", "items": [{"type": "string"}]}
            }
        });
        let out = openapi_schema(&schema);
        assert_gemini_typed(&out, "$");
        let p = &out["properties"];
        assert_eq!(p["fixed"], json!({"type": "STRING", "enum": ["x"]}));
        assert_eq!(p["three"], json!({"type": "INTEGER", "description": "(must be 3)"}));
        assert_eq!(p["ratio"]["type"], "NUMBER");
        assert_eq!(p["on"], json!({"type": "BOOLEAN", "description": "(must be true)"}));
        assert_eq!(p["nested"]["type"], "OBJECT");
        assert_eq!(
            p["nested"]["properties"]["a"],
            json!({"type": "STRING", "enum": ["p", "q"]})
        );
        assert_eq!(p["listed"]["items"], json!({"type": "STRING", "minLength": 1}));
        assert_eq!(p["bounded"], json!({"type": "NUMBER", "minimum": 1}));
        assert_eq!(p["strings"]["type"], "STRING");
        assert_eq!(p["union"]["type"], "OBJECT", "as the google-genai SDK types a union");
        // Any value: each type a value can have, the description kept.
        assert_eq!(p["any"]["description"], "Anything");
        let members: Vec<&str> = p["any"]["anyOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["type"].as_str().unwrap())
            .collect();
        assert_eq!(members, ["STRING", "NUMBER", "BOOLEAN", "OBJECT", "ARRAY"]);
        assert_eq!(p["anys"]["items"]["anyOf"], p["any"]["anyOf"]);
        assert_eq!(p["bare_list"]["items"], p["anys"]["items"]);
        assert_eq!(p["always"]["anyOf"], p["any"]["anyOf"]);
        assert_eq!(p["mixed"]["description"], "(one of \"a\", 1)");
        assert!(p["typed_wrongly"].get("enum").is_none(), "{}", p["typed_wrongly"]);
    }

    #[test]
    fn required_names_no_property_defines_are_left_out() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "ghost"]});
        assert_eq!(openapi_schema(&schema)["required"], json!(["a"]));
        let bare = json!({"type": "object", "required": ["ghost"]});
        assert!(openapi_schema(&bare).get("required").is_none());
    }

    /// Gemini refuses a turn whose parts outnumber its calls, and earlier
    /// models refuse media inside a `functionResponse`: a reply is one
    /// `functionResponse` part per result, its images and documents named
    /// in the text (a GIF, which Gemini refuses, among them).
    #[test]
    fn a_reply_is_one_function_response_per_result_its_media_named() {
        use crate::output::{Content, IntoToolOutput as _};
        let output = (vec![
            Content::image(b"png", "image/png"),
            Content::image(b"GIF89a", "image/gif"),
            Content::document(b"gz", "application/gzip", None),
            Content::document(b"%PDF", "application/pdf", None),
        ])
        .into_tool_output();
        let media = ToolResult::new("t", None, output);
        let text = ToolResult::new("u", None, crate::ToolOutput::text("ok"));
        let reply = reply(&[media, text]).unwrap();
        let parts = reply["parts"].as_array().unwrap();
        assert_eq!(parts.len(), 2, "{reply}");
        assert!(
            parts
                .iter()
                .all(|part| part.as_object().unwrap().keys().eq(["functionResponse"]))
        );
        assert!(!reply.to_string().contains("inlineData"), "{reply}");
        assert!(parts[0]["functionResponse"].get("parts").is_none(), "{reply}");
        assert_eq!(
            parts[0]["functionResponse"]["response"]["output"],
            "[an image (image/png) that this format cannot show]\n\
             [an image (image/gif) that this format cannot show]\n\
             [a document (application/gzip) that this format cannot show]\n\
             [a PDF document that this format cannot show]"
        );
    }

    #[test]
    fn calls_without_ids_are_read_in_order() {
        let turn = json!({"role": "model", "parts": [
            {"text": "Let me check."},
            {"functionCall": {"name": "a", "args": {"x": 1}}},
            {"functionCall": {"name": "b"}},
        ]});
        let calls = tool_calls(&turn).unwrap();
        assert_eq!(calls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        assert!(calls[0].id.is_none());
    }
}
