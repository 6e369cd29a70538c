//! Gemini: function declarations with an OpenAPI-subset schema,
//! `functionCall` parts in, `functionResponse` parts out.
//!
//! Gemini's schema dialect has no `additionalProperties`, `$ref`, `const`,
//! `$schema` or type arrays; it marks nullable values with `nullable: true`
//! and spells types in capitals (`STRING`).

use serde_json::{Map, Value, json};

use super::strict::move_keywords;
use super::{Carried, FormatError, FormatErrorKind, carry, check_call_ids, tool_name};
use crate::call::{CallArguments, ToolCall};
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
pub(crate) fn openapi_schema(schema: &Value) -> Value {
    let Value::Object(node) = schema else {
        return schema.clone();
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
                if let Some(t) = ty.as_str() {
                    out.insert("type".into(), Value::String(t.to_ascii_uppercase()));
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
    // Gemini's `enum` lists strings only; other values (a remote tool's
    // `{"type": "integer", "enum": [1, 2, 3]}`) the model reads in the
    // description.
    if let Some(Value::Array(values)) = out.get("enum")
        && !values.iter().all(Value::is_string)
    {
        move_keywords(&mut out, &["enum"]);
    }
    // Keywords Gemini's Schema lacks (in schemas written elsewhere, such as
    // a mounted MCP tool's), the model still reads in the description.
    let unknown: Vec<String> = out
        .keys()
        .filter(|k| !GEMINI_KEYWORDS.contains(&k.as_str()))
        .cloned()
        .collect();
    move_keywords(&mut out, &unknown.iter().map(String::as_str).collect::<Vec<_>>());
    Value::Object(out)
}

/// The `functionCall` parts of a model turn (a `Content` object, or a whole
/// response whose first candidate holds it), in order. Gemini's call ids
/// are optional; where present they must be distinct.
pub fn tool_calls(content: &Value) -> Result<Vec<ToolCall>, FormatError> {
    let content = content.pointer("/candidates/0/content").unwrap_or(content);
    let Some(parts) = content.get("parts").and_then(Value::as_array) else {
        return Err(FormatError::malformed("the content has no parts array"));
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

/// The `role: "user"` content answering a model turn: one
/// `functionResponse` part per result, in the order given (Gemini matches
/// them to its calls by position, or by id where the calls had ids),
/// `response.output` on success and `response.error` on failure; then an
/// `inlineData` part for each image (JPEG, PNG, GIF, WebP) or PDF a result
/// returned; other blocks its text names. Ids, where given, must be
/// distinct.
pub fn reply(results: &[ToolResult]) -> Result<Value, FormatError> {
    let mut seen = std::collections::HashSet::new();
    for id in results.iter().filter_map(|r| r.call_id.as_deref()) {
        if !seen.insert(id) {
            return Err(FormatError::new(
                FormatErrorKind::DuplicateId,
                format!("two results answer the call id `{id}`"),
            ));
        }
    }
    let mut parts: Vec<Value> = results.iter().map(function_response_part).collect();
    // Only what Gemini takes inline: images of the common types and PDFs.
    // The others the response's text names (`text_only`).
    for block in results.iter().flat_map(|result| &result.content) {
        let (mime_type, data) = match carry(block) {
            Carried::Image { data, mime_type } => (mime_type, data),
            Carried::Pdf { data, .. } => ("application/pdf", data),
            _ => continue,
        };
        parts.push(json!({"inlineData": {"mimeType": mime_type, "data": data}}));
    }
    Ok(json!({"role": "user", "parts": parts}))
}

fn function_response_part(result: &ToolResult) -> Value {
    let key = if result.is_error { "error" } else { "output" };
    // The structured content is never cut; when the text was, the model
    // reads the cut text instead.
    let value = match &result.structured_content {
        Some(structured) if !result.is_error && !result.text_cut() => structured.clone(),
        _ => Value::String(super::text_only(result)),
    };
    let mut response = json!({"name": result.tool(), "response": {key: value}});
    if let Some(id) = &result.call_id {
        response["id"] = Value::String(id.clone());
    }
    json!({ "functionResponse": response })
}

#[cfg(test)]
mod tests {
    use super::*;

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
                    "fixed": {"enum": ["x"]},
                    "level": {"type": "INTEGER", "description": "Level (one of 1, 2, 3)"},
                    "flag": {"type": "BOOLEAN", "description": "(must be true)"},
                    "site": {"type": "STRING", "description": "(format: \"uri\")"},
                    "when": {"type": "STRING", "format": "date-time"}
                },
                "required": ["tags"]
            })
        );
    }

    #[test]
    fn required_names_no_property_defines_are_left_out() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "ghost"]});
        assert_eq!(openapi_schema(&schema)["required"], json!(["a"]));
        let bare = json!({"type": "object", "required": ["ghost"]});
        assert!(openapi_schema(&bare).get("required").is_none());
    }

    #[test]
    fn only_images_and_pdfs_go_inline() {
        use crate::output::{Content, IntoToolOutput as _};
        let output = (vec![
            Content::image(b"png", "image/png"),
            Content::document(b"gz", "application/gzip", None),
            Content::document(b"%PDF", "application/pdf", None),
        ])
        .into_tool_output();
        let result = ToolResult::new("t", None, output);
        let reply = reply(&[result]).unwrap();
        let inline: Vec<&str> = reply["parts"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|part| part["inlineData"]["mimeType"].as_str())
            .collect();
        assert_eq!(inline, ["image/png", "application/pdf"]);
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
