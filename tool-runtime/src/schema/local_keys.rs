//! Local keys for an imported schema's property keys that a provider
//! refuses (`$filter`, `file path`, `größe`): the model is offered each
//! under a key every provider takes, and a call's arguments are sent on
//! under the keys the server wrote.
//!
//! Keys are given where an argument's place in the schema is plain: the
//! root's properties, and from there down through each property's value
//! and a list's `items`, at any depth. A refused key anywhere else (in a
//! member of `anyOf`, in `additionalProperties`, in `prefixItems`) is left
//! as it is, for the caller to find: which of several schemas an argument
//! answers to cannot be told, so its keys could not be given back.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::{append_to_description, required_names};
use crate::text::clip;

/// How deep in the schema keys are given; a refused key deeper down is
/// left as it is. The import inlines and follows nesting to 32 levels.
const MAX_DEPTH: usize = 64;

/// The local keys given in one object schema and below it.
#[derive(Debug, Default)]
pub(crate) struct LocalKeys {
    /// This object's keys that were given local ones: `(local, remote)`.
    renamed: Vec<(String, String)>,
    /// The keys given inside the values of this object's properties, by
    /// the property's local key.
    inside: Vec<(String, LocalKeys)>,
    /// The keys given inside each item of a list.
    items: Option<Box<LocalKeys>>,
}

impl LocalKeys {
    /// Gives every property key of `schema` (an object schema, as the
    /// import has inlined and normalized it) that `valid` refuses a local
    /// key: `choose` makes the keys of one object from all of them, each
    /// valid and none alike. The key is changed in the object's
    /// `properties` and `required`, and the property's description says
    /// what the server calls it.
    pub(crate) fn give(schema: &mut Value, valid: fn(&str) -> bool, choose: fn(&[&str]) -> Vec<String>) -> Self {
        Self::give_at(schema, valid, choose, 0)
    }

    fn give_at(node: &mut Value, valid: fn(&str) -> bool, choose: fn(&[&str]) -> Vec<String>, depth: usize) -> Self {
        let mut keys = LocalKeys::default();
        let Value::Object(node) = node else {
            return keys;
        };
        if depth > MAX_DEPTH {
            return keys;
        }
        keys.rename_own(node, valid, choose);
        if let Some(Value::Object(properties)) = node.get_mut("properties") {
            for (key, value) in properties.iter_mut() {
                let inside = Self::give_at(value, valid, choose, depth + 1);
                if !inside.is_empty() {
                    keys.inside.push((key.clone(), inside));
                }
            }
        }
        if let Some(items) = node.get_mut("items") {
            let inside = Self::give_at(items, valid, choose, depth + 1);
            if !inside.is_empty() {
                keys.items = Some(Box::new(inside));
            }
        }
        keys
    }

    /// Renames the refused keys of the object schema `node` itself: those
    /// of its `properties`, and those `required` names beside them.
    fn rename_own(
        &mut self,
        node: &mut Map<String, Value>,
        valid: fn(&str) -> bool,
        choose: fn(&[&str]) -> Vec<String>,
    ) {
        // Looked up, not searched for: a mounted tool may list many
        // thousands of keys.
        let properties = node.get("properties").and_then(Value::as_object);
        let mut seen = HashSet::new();
        let remote: Vec<&str> = properties
            .into_iter()
            .flat_map(|p| p.keys().map(String::as_str))
            .chain(required_names(node))
            .filter(|key| seen.insert(*key))
            .collect();
        if remote.iter().all(|key| valid(key)) {
            return;
        }
        let renamed: Vec<(String, String)> = choose(&remote)
            .into_iter()
            .zip(&remote)
            .filter(|(local, remote)| local != *remote)
            .map(|(local, remote)| (local, (*remote).to_owned()))
            .collect();
        if let Some(Value::Object(properties)) = node.get_mut("properties") {
            for (local, remote) in &renamed {
                if let Some(mut schema) = properties.remove(remote) {
                    if let Value::Object(property) = &mut schema {
                        append_to_description(property, &format!("(`{}` on the server)", clip(remote)));
                    }
                    properties.insert(local.clone(), schema);
                }
            }
        }
        if let Some(Value::Array(required)) = node.get_mut("required") {
            let local: HashMap<&str, &str> = renamed
                .iter()
                .map(|(local, remote)| (remote.as_str(), local.as_str()))
                .collect();
            for name in required.iter_mut() {
                if let Some(local) = name.as_str().and_then(|remote| local.get(remote)) {
                    *name = Value::from(*local);
                }
            }
        }
        self.renamed = renamed;
    }

    /// No key was given here or below.
    fn is_empty(&self) -> bool {
        self.renamed.is_empty() && self.inside.is_empty() && self.items.is_none()
    }

    /// Gives the arguments of a call, as the binder accepted them under
    /// the local keys, the keys the server wrote, at every depth a key was
    /// given. A value of another JSON type than its schema's is left as it
    /// is.
    pub(crate) fn to_remote(&self, arguments: &mut Map<String, Value>) {
        for (local, inside) in &self.inside {
            if let Some(value) = arguments.get_mut(local) {
                inside.value_to_remote(value);
            }
        }
        for (local, remote) in &self.renamed {
            if let Some(value) = arguments.remove(local) {
                arguments.insert(remote.clone(), value);
            }
        }
    }

    fn value_to_remote(&self, value: &mut Value) {
        match value {
            Value::Object(object) => self.to_remote(object),
            Value::Array(items) => {
                if let Some(inside) = &self.items {
                    for item in items {
                        inside.value_to_remote(item);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn valid(key: &str) -> bool {
        !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    }

    /// Each refused key's characters made `_`; `$b` beside `_b` gets `_b2`.
    fn choose(keys: &[&str]) -> Vec<String> {
        let mut chosen: Vec<String> = Vec::new();
        for key in keys {
            let mut local: String = key
                .chars()
                .map(|c| if valid(&c.to_string()) { c } else { '_' })
                .collect();
            while local != *key && (keys.contains(&local.as_str()) || chosen.contains(&local)) {
                local.push('2');
            }
            chosen.push(local);
        }
        chosen
    }

    #[test]
    fn keys_are_given_through_properties_and_items_at_any_depth() {
        let mut schema = json!({
            "type": "object",
            "required": ["$a"],
            "properties": {
                "$a": {"type": "string", "description": "A."},
                "_a": {"type": "string"},
                "rows": {"type": "array", "items": {
                    "type": "object",
                    "required": ["b c"],
                    "properties": {"b c": {"type": "object", "properties": {"d-e": {"type": "integer"}}}},
                }},
            },
        });
        let keys = LocalKeys::give(&mut schema, valid, choose);
        assert_eq!(schema["required"], json!(["_a2"]));
        assert_eq!(
            schema["properties"]["_a2"]["description"],
            json!("A. (`$a` on the server)")
        );
        assert_eq!(
            schema["properties"]["_a"],
            json!({"type": "string"}),
            "a valid key stays"
        );
        let row = &schema["properties"]["rows"]["items"];
        assert_eq!(row["required"], json!(["b_c"]));
        assert_eq!(row["properties"]["b_c"]["properties"]["d_e"]["type"], json!("integer"));

        let mut arguments = json!({
            "_a2": "x",
            "_a": "y",
            "rows": [{"b_c": {"d_e": 1}}, {"b_c": "not an object"}, 7],
        });
        keys.to_remote(arguments.as_object_mut().unwrap());
        assert_eq!(
            arguments,
            json!({
                "$a": "x",
                "_a": "y",
                "rows": [{"b c": {"d-e": 1}}, {"b c": "not an object"}, 7],
            })
        );
    }

    #[test]
    fn keys_where_an_argument_s_schema_is_not_plain_are_left_as_written() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "either": {"anyOf": [{"type": "object", "properties": {"$x": {}}}, {"type": "string"}]},
                "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {"$y": {}}}},
            },
        });
        let before = schema.clone();
        let keys = LocalKeys::give(&mut schema, valid, choose);
        assert_eq!(schema, before);
        assert!(keys.is_empty());
    }

    #[test]
    fn an_open_object_s_other_keys_are_sent_as_they_came() {
        let mut schema = json!({"type": "object", "properties": {"$a": {}}});
        let keys = LocalKeys::give(&mut schema, valid, choose);
        let mut arguments = json!({"_a": 1, "$a": 2, "other": 3});
        keys.to_remote(arguments.as_object_mut().unwrap());
        // The local key's value wins over the same key sent as written.
        assert_eq!(arguments, json!({"$a": 1, "other": 3}));
    }
}
