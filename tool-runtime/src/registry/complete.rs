//! Completing a call's arguments without running the tool: what a form
//! builder or a workflow editor needs to show a tool call.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::ToolRegistry;
use crate::bind::RefusedKey;
use crate::call::Arguments;
use crate::codes::{CallError, ErrorCode};
use crate::schema::Presence;

/// A call's arguments, completed with defaults, without running the tool.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Completion {
    /// The tool's name.
    pub tool: String,
    /// The bound arguments with every default filled in (optional
    /// parameters that were not sent, and refused values, are left out),
    /// and the keys no parameter names that the tool's schema admits (a
    /// remote tool's), as a call would send them.
    pub arguments: Map<String, Value>,
    /// Required parameters still missing.
    pub missing: Vec<String>,
    /// Optional parameters left unset.
    pub unset: Vec<String>,
    /// One row per parameter, in declaration order.
    pub params: Vec<ParamRow>,
    /// What binding changed, as in a call.
    pub warnings: Vec<crate::codes::Warning>,
    /// Problems other than missing parameters (a wrong type, a bound).
    pub errors: Vec<CallError>,
}

impl Completion {
    /// Nothing is missing and nothing is wrong: the call would run.
    pub fn is_ready(&self) -> bool {
        self.missing.is_empty() && self.errors.is_empty()
    }
}

/// One parameter of a completed call.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ParamRow {
    /// The wire name.
    pub name: String,
    /// The JSON type (`string`, `integer`, `array`, ...).
    pub json_type: &'static str,
    /// The Rust type as written in the tool.
    pub rust_type: &'static str,
    /// The value the tool would get (`None` when missing or unset, or when a
    /// default could not be shown as JSON).
    pub value: Option<Value>,
    /// Where the value came from.
    pub source: ValueSource,
}

/// Where a parameter's value came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ValueSource {
    /// The caller sent it.
    Provided,
    /// The parameter's default.
    Default,
    /// Required and not sent.
    Missing,
    /// Optional and not sent.
    Unset,
    /// Sent, and refused by the binder (a wrong type, a broken bound): the
    /// row's value is what was sent, and it is not among the completed
    /// arguments. The completion's `errors` say why.
    Refused,
}

impl ToolRegistry {
    /// Completes `arguments` for the tool `name` with defaults, without
    /// running it. Fails only when there is no such tool (`unknown_tool`) or
    /// the arguments are no JSON object (`json_parse_error`,
    /// `arguments_not_object`, `arguments_too_large`); every other problem
    /// is in the completion.
    pub fn complete<'a>(&self, name: &str, arguments: impl Into<Arguments<'a>>) -> Result<Completion, CallError> {
        let Some(tool) = self.get(name) else {
            let mut names = self.names();
            names.truncate(100);
            let name = crate::text::clip(name);
            return Err(CallError::new(
                ErrorCode::UnknownTool,
                name.as_ref(),
                format!("no tool is named `{name}`; the tools are {}", names.join(", ")),
            ));
        };
        let definition = tool.definition();
        let (mut map, mut report) = self.normalized(definition, arguments.into(), self.settings.null_is_absent)?;
        // A coercion inside a refused value made nothing that is kept: no
        // warning for it (the keys ignored there stay).
        let warnings = report.kept_warnings();
        let errors = std::mem::take(&mut report.errors);
        let (mut refused, mut refused_keys) = (HashSet::new(), HashSet::new());
        for value in report.refused {
            match value.key {
                RefusedKey::Parameter(index) => refused.insert(index),
                RefusedKey::Other(key) => refused_keys.insert(key),
            };
        }
        // A parameter not sent is in `missing`; a value missing inside
        // one that was sent stays an error.
        let errors = errors
            .into_iter()
            .filter(|e| {
                let parameter_not_sent = || definition.params().field(&e.path).is_some() && !map.contains_key(&e.path);
                !(e.code == ErrorCode::MissingRequired && parameter_not_sent())
            })
            .collect();

        let mut completion = Completion {
            tool: name.to_owned(),
            arguments: Map::new(),
            missing: Vec::new(),
            unset: Vec::new(),
            params: Vec::new(),
            warnings,
            errors,
        };
        for (index, field) in definition.params().fields.iter().enumerate() {
            let (value, source) = match (map.remove(&field.name), field.presence) {
                (Some(v), _) if refused.contains(&index) => (Some(v), ValueSource::Refused),
                (Some(Value::Null), Presence::Optional) | (None, Presence::Optional) => (None, ValueSource::Unset),
                (Some(v), _) => (Some(v), ValueSource::Provided),
                (None, Presence::Defaulted) => (field.default.clone(), ValueSource::Default),
                (None, Presence::Required) => (None, ValueSource::Missing),
            };
            match source {
                ValueSource::Missing => completion.missing.push(field.name.clone()),
                ValueSource::Unset => completion.unset.push(field.name.clone()),
                _ => {}
            }
            if let Some(v) = value.as_ref().filter(|_| source != ValueSource::Refused) {
                completion.arguments.insert(field.name.clone(), v.clone());
            }
            completion.params.push(ParamRow {
                name: field.name.clone(),
                json_type: field.shape.type_name(),
                rust_type: field.rust_type,
                value,
                source,
            });
        }
        // Keys no parameter names that the tool's schema admits (a remote
        // tool's `additionalProperties`, or an open schema) go with the
        // call as sent, or as bound: they are arguments too, unless refused.
        let params = definition.params();
        if params.others.is_some() || params.keeps_unknown {
            completion
                .arguments
                .extend(map.into_iter().filter(|(key, _)| !refused_keys.contains(key)));
        }
        Ok(completion)
    }
}
