//! Binding what a model sent to what a tool declared (SPEC section 4).
//!
//! Binding runs in two passes:
//!
//! 1. [`normalize`] walks the tool's [`ObjectShape`] over the JSON arguments,
//!    rewriting in place only the values a lenient rule coerces (`"42"` to
//!    `42`, `"a"` to `["a"]`, `maxResults` to `max_results`, ...) and
//!    recording a [`Warning`] for each, or a [`CallError`] for each value no
//!    rule accepts. Every problem is collected; none stops the walk. Arguments
//!    that are already right are only read: the walk allocates nothing for
//!    them.
//! 2. The generated dispatcher takes each parameter out of the normalized
//!    object with [`BoundArguments`] and deserializes it into its Rust type, applying
//!    defaults for absent parameters ([`Params::take`]).
//!
//! Arguments that are already exactly right skip both passes: the typed
//! fast path ([`Params::read`], [`Params::resolve`]) reads them straight
//! into the parameters' types, and gives up wherever the binder would have
//! anything to change or say. Both paths go through the one [`Params`]
//! impl of the tool's parameter list, with the same default functions.
//!
//! In [`BindMode::Strict`] nothing is coerced: what lenient mode would change
//! is a `type_mismatch` (or `enum_out_of_range`) and an unknown key is an
//! error.

mod arguments;
mod bound;
mod describe;
mod params;
mod typed;

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::ops::Range;

use serde_json::{Map, Number, Value};

pub(crate) use arguments::{argument_object, json_size_exceeds};
pub use bound::BoundArguments;
use describe::{Sentence, listed_fields};
pub(crate) use describe::{counted, describe_str, describe_value, expected, float_text, write_integer};
pub use params::{Params, parse_params};
pub use typed::Coerced;

use crate::codes::{CallError, ErrorCode, Warning, WarningCode};
use crate::schema::{
    Field, FieldNames, Kind, ListedNumbers, MAX_DEPTH, ObjectShape, Presence, Shape, TextProblem, nesting_exceeds,
    read_object_shapes,
};
use crate::text::{clip, closest_name};

/// How forgiving the binder is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BindMode {
    /// Coerce what is safe, with a warning (the default).
    #[default]
    Lenient,
    /// Accept only values of exactly the declared type; unknown keys are errors.
    Strict,
}

/// The most warnings, and the most errors, one binding records in detail;
/// past it they are only counted, so a huge argument with one mistake
/// repeated costs no more memory than a small one (SPEC section 11).
pub(crate) const MAX_RECORDED_PROBLEMS: usize = 100;

/// What binding found: the warnings and the errors, in the order met, with
/// the count of those left out. At most [`MAX_RECORDED_PROBLEMS`] errors
/// are recorded, and as many warnings of coercions and again as many of
/// ignored keys (`unknown_parameter`), so the keys a refused call ignored
/// can still be listed however many values were coerced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Report {
    /// Values accepted after a change.
    pub(crate) warnings: Vec<Warning>,
    /// Values that kept the tool from running.
    pub(crate) errors: Vec<CallError>,
    /// Warnings met past their bound, only counted.
    pub(crate) omitted_warnings: usize,
    /// The `unknown_parameter` warnings among `warnings`.
    pub(crate) recorded_ignored: usize,
    /// The `unknown_parameter` warnings among those only counted.
    pub(crate) omitted_ignored: usize,
    /// Errors met past the first [`MAX_RECORDED_PROBLEMS`], only counted.
    pub(crate) omitted_errors: usize,
    /// The values of the arguments object that were refused, in the order
    /// met (at most one entry per key).
    pub(crate) refused: Vec<Refused>,
}

/// A value of the arguments object that the binder refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Refused {
    pub(crate) key: RefusedKey,
    /// Where in the report's `warnings` those met inside the value are: a
    /// completion, which says what the tool would get, keeps none of those
    /// coercions (a refused call still says what was coerced).
    warnings: Range<usize>,
}

/// Whose value was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RefusedKey {
    /// A parameter, by its index among the parameters.
    Parameter(usize),
    /// A key no parameter names, refused by the arguments' schema for other
    /// keys (a remote tool's `additionalProperties`).
    Other(String),
}

/// Where a [`Report`] stood, to take back what came after.
struct ReportMark {
    warnings: usize,
    omitted_warnings: usize,
    omitted_ignored: usize,
    errors: usize,
}

impl Report {
    /// A report of one problem of the whole call.
    pub(crate) fn error(error: CallError) -> Self {
        Report {
            errors: vec![error],
            ..Report::default()
        }
    }

    /// Warnings met, recorded or not.
    pub(crate) fn warning_count(&self) -> usize {
        self.warnings.len() + self.omitted_warnings
    }

    /// Errors met, recorded or not.
    pub(crate) fn error_count(&self) -> usize {
        self.errors.len() + self.omitted_errors
    }

    /// Where the report stands now, to take back what follows.
    fn mark(&self) -> ReportMark {
        ReportMark {
            warnings: self.warnings.len(),
            omitted_warnings: self.omitted_warnings,
            omitted_ignored: self.omitted_ignored,
            errors: self.error_count(),
        }
    }

    /// Whether an error was met since `mark`.
    fn refused_since(&self, mark: &ReportMark) -> bool {
        self.error_count() > mark.errors
    }

    /// Takes back the coercions met since `mark`: they were of a value
    /// that was refused after all. The keys ignored inside it stay: they
    /// are no coercion, and often why it was refused (`strat` sent,
    /// `start` missing), so the refusal lists them.
    fn drop_warnings_since(&mut self, mark: &ReportMark) {
        let ignored: Vec<Warning> = self
            .warnings
            .drain(mark.warnings..)
            .filter(Warning::is_ignored_key)
            .collect();
        self.warnings.extend(ignored);
        self.omitted_warnings = mark.omitted_warnings + (self.omitted_ignored - mark.omitted_ignored);
    }

    /// Notes the value of `key`, read since `mark`, as refused.
    fn note_refused(&mut self, key: RefusedKey, mark: &ReportMark) {
        let warnings = mark.warnings..self.warnings.len();
        self.refused.push(Refused { key, warnings });
    }

    /// The warnings met outside refused values, and the keys ignored
    /// anywhere: the warnings of what the tool would get.
    pub(crate) fn kept_warnings(&mut self) -> Vec<Warning> {
        let mut refused = self.refused.iter().map(|r| &r.warnings).peekable();
        let mut kept = Vec::with_capacity(self.warnings.len());
        for (index, warning) in std::mem::take(&mut self.warnings).into_iter().enumerate() {
            while refused.next_if(|range| range.end <= index).is_some() {}
            let inside = refused.peek().is_some_and(|range| range.contains(&index));
            if !inside || warning.is_ignored_key() {
                kept.push(warning);
            }
        }
        kept
    }

    /// There is an error: the tool may not run.
    pub(crate) fn refused(&self) -> bool {
        self.error_count() > 0
    }
}

/// Checks and coerces `arguments` against a tool's parameters, in place.
///
/// On return, when the report has no errors, every declared parameter that
/// is present holds a value its Rust type deserializes from, a `null` sent
/// for a defaulted parameter has been removed (so the default applies), and
/// unknown keys are left where they were.
///
/// `null_is_absent` reads a `null` sent for a parameter or field with a
/// default as "not given", without a warning: strict definitions make a
/// model send `null` for everything it leaves unset.
pub(crate) fn normalize(
    params: &ObjectShape,
    arguments: &mut Map<String, Value>,
    mode: BindMode,
    null_is_absent: bool,
) -> Report {
    let mut walker = Walker {
        mode,
        null_is_absent,
        // Room for most paths, so entering keys rarely reallocates.
        path: String::with_capacity(32),
        report: Report::default(),
        long_enums: HashMap::new(),
        long_lists: HashMap::new(),
        suggestions: 0,
    };
    walker.object(params, arguments, true);
    walker.report
}

/// The first parameter whose default breaks its own schema (a bound or a
/// pattern that a default written as an expression, which the macro cannot
/// judge, does not meet, or an enum value the schema does not list: a
/// variant renamed for serializing only, shown as a default the model
/// could never send), with what is wrong. Only bounds, patterns and enum
/// values are judged: a default is the serialized Rust value, which may
/// differ from what is sent in ways serde reads all the same (a `null` for
/// a defaulted `Option` field, a field renamed for serializing only).
///
/// The fields of the objects the parameters take are judged too, at any
/// depth: serde gives a struct's field its default as it gives a
/// parameter its own.
pub(crate) fn default_problem(params: &ObjectShape) -> Option<String> {
    let mut objects = vec![params];
    for field in &params.fields {
        read_object_shapes(&field.shape, &mut objects);
    }
    objects.into_iter().flat_map(|object| &object.fields).find_map(|field| {
        let default = field.default.as_ref().filter(|value| !value.is_null())?;
        let mut walker = Walker {
            mode: BindMode::Lenient,
            null_is_absent: true,
            path: field.name.clone(),
            report: Report::default(),
            long_enums: HashMap::new(),
            long_lists: HashMap::new(),
            suggestions: 0,
        };
        walker.value(&field.shape, &mut default.clone());
        let error = walker.report.errors.iter().find(|error| {
            matches!(
                error.code,
                ErrorCode::OutOfRange | ErrorCode::PatternMismatch | ErrorCode::EnumOutOfRange
            )
        })?;
        Some(format!(
            "the default of `{}` does not fit its own schema: {}",
            field.name, error.detail
        ))
    })
}

struct Walker {
    mode: BindMode,
    null_is_absent: bool,
    /// The path of the value being walked; segments are appended on the way
    /// down and truncated on the way up, so the walk allocates no paths.
    path: String,
    report: Report,
    /// Indexes of the long enums met, by the address of their values, made
    /// when first needed: checking a value against one costs O(1), not a
    /// scan, however many values the model sends.
    long_enums: HashMap<usize, EnumIndex>,
    /// Indexes of the long lists of numbers met, likewise.
    long_lists: HashMap<usize, ListedNumbers>,
    /// The closest field names searched for so far, for unknown keys.
    suggestions: usize,
}

/// The most unknown keys of one binding searched for the closest field name:
/// as many as the text of a refused call could list, and more.
const SUGGESTIONS: usize = 20;

/// Objects of more fields than this (a remote schema's) get no closest-name
/// search, which costs a measure per field.
const SUGGESTED_FIELDS: usize = 256;

/// The keys sent that name no field, by their loose form (case, `_`, `-`
/// and spaces left out), for the fields that are missing: a missing field
/// takes the first key, in the map's order, of its own loose form.
struct Aliases(Option<HashMap<String, String>>);

impl Aliases {
    fn new(map: &Map<String, Value>, names: &FieldNames) -> Self {
        let mut unknown = map.keys().filter(|key| !names.contains(key)).peekable();
        // Most calls missing a field sent no other key: no map is made.
        if unknown.peek().is_none() {
            return Aliases(None);
        }
        let mut aliases = HashMap::new();
        for key in unknown {
            aliases.entry(loose_name(key)).or_insert_with(|| key.clone());
        }
        Aliases(Some(aliases))
    }

    /// The key that loosely names the field `name`, taken so no other field
    /// gets it.
    fn take(&mut self, name: &str) -> Option<String> {
        self.0.as_mut()?.remove(&loose_name(name))
    }
}

/// Enums up to this many values are scanned; longer ones are indexed.
const SCANNED_ENUM: usize = 32;

/// A long enum's values, for lookups.
struct EnumIndex {
    exact: HashSet<String>,
    /// Each value in ASCII lowercase, to the value's place when no other
    /// value folds to the same (`None` when one does).
    folded: HashMap<String, Option<usize>>,
}

impl EnumIndex {
    fn new(values: &[String]) -> Self {
        let mut folded = HashMap::with_capacity(values.len());
        for (i, value) in values.iter().enumerate() {
            folded
                .entry(value.to_ascii_lowercase())
                .and_modify(|only: &mut Option<usize>| *only = None)
                .or_insert(Some(i));
        }
        EnumIndex {
            exact: values.iter().cloned().collect(),
            folded,
        }
    }
}

impl Walker {
    fn lenient(&self) -> bool {
        self.mode == BindMode::Lenient
    }

    fn enter_key(&mut self, key: &str) -> usize {
        let mark = self.path.len();
        if !self.path.is_empty() {
            self.path.push('.');
        }
        self.path.push_str(key);
        mark
    }

    fn enter_index(&mut self, index: usize) -> usize {
        let mark = self.path.len();
        self.path.push('[');
        write_integer(&mut self.path, index as i128);
        self.path.push(']');
        mark
    }

    fn leave(&mut self, mark: usize) {
        self.path.truncate(mark);
    }

    /// Enters a key the model chose (an unknown key, a map's key): the path
    /// quotes it cut to 64 characters.
    fn enter_sent_key(&mut self, key: &str) -> usize {
        self.enter_key(&clip(key))
    }

    fn warn(&mut self, code: WarningCode, detail: String) {
        let ignored = code == WarningCode::UnknownParameter;
        if !self.records_warning(ignored) {
            self.report.omitted_warnings += 1;
            self.report.omitted_ignored += usize::from(ignored);
            return;
        }
        self.report.recorded_ignored += usize::from(ignored);
        self.report.warnings.push(Warning::new(code, self.path.clone(), detail));
    }

    /// Whether a warning of an ignored key (`ignored`), or of a coercion,
    /// is still recorded in detail.
    fn records_warning(&self, ignored: bool) -> bool {
        let report = &self.report;
        let recorded = if ignored {
            report.recorded_ignored
        } else {
            report.warnings.len() - report.recorded_ignored
        };
        recorded < MAX_RECORDED_PROBLEMS
    }

    /// Counts an error that is not recorded in detail, when the detailed
    /// ones are full: a caller whose sentence costs more than a few words
    /// asks first, so a value of a million wrong items is not described a
    /// million times.
    fn errors_full(&mut self) -> bool {
        let full = self.report.errors.len() >= MAX_RECORDED_PROBLEMS;
        self.report.omitted_errors += usize::from(full);
        full
    }

    /// Records the error `code` with the sentence `detail` makes, made only
    /// when the error is recorded in detail.
    fn error_with(&mut self, code: ErrorCode, detail: impl FnOnce() -> String) {
        if self.errors_full() {
            return;
        }
        self.push_error(code, detail());
    }

    fn error(&mut self, code: ErrorCode, detail: String) {
        if self.errors_full() {
            return;
        }
        self.push_error(code, detail);
    }

    fn push_error(&mut self, code: ErrorCode, detail: String) {
        // Problems rarely come alone: room for several at once.
        if self.report.errors.is_empty() {
            self.report.errors.reserve(8);
        }
        self.report.errors.push(CallError::new(code, self.path.clone(), detail));
    }

    fn null_not_allowed(&mut self, shape: &Shape) {
        self.error_with(ErrorCode::NullNotAllowed, || {
            Sentence::new("null is not allowed; expected ").expected(shape).done()
        });
    }

    fn mismatch(&mut self, shape: &Shape, value: &Value) {
        self.expected_got(ErrorCode::TypeMismatch, shape, value);
    }

    /// The error `code`: "expected" what `shape` takes, "got" `value`.
    fn expected_got(&mut self, code: ErrorCode, shape: &Shape, value: &Value) {
        if self.errors_full() {
            return;
        }
        let detail = Sentence::new("expected ")
            .expected(shape)
            .text(", got ")
            .value(value)
            .done();
        self.error(code, detail);
    }

    /// Walks an object with fixed fields. `top` marks the tool's own
    /// parameters, whose unknown keys stay in place; a nested struct's unknown
    /// keys are removed so its `Deserialize` never sees them.
    fn object(&mut self, object: &ObjectShape, map: &mut Map<String, Value>, top: bool) {
        let mut known = 0;
        // Made when first needed: which keys are fields, and the keys that
        // are not, by their loose form, for the fields missing.
        let mut names = None;
        let mut aliases = None;
        for (index, field) in object.fields.iter().enumerate() {
            let mark = self.enter_key(&field.name);
            let before = self.report.mark();
            // One lookup for a key that is there; an alias is looked for
            // only when it is not.
            let mut sent = map.get_mut(&field.name);
            // A key the object admits by a schema of its own is no alias.
            if sent.is_none() && self.lenient() && object.others.is_none() {
                let names = names.get_or_insert_with(|| object.names());
                let aliases = aliases.get_or_insert_with(|| Aliases::new(map, names));
                self.adopt_alias(aliases, &field.name, map);
                sent = map.get_mut(&field.name);
            }
            match sent {
                None => {
                    if field.presence == Presence::Required {
                        self.error_with(ErrorCode::MissingRequired, || {
                            Sentence::new("the required value is missing; expected ")
                                .expected(&field.shape)
                                .done()
                        });
                    }
                }
                Some(value) => {
                    // A defaulted field's null is removed, so it no longer counts.
                    if !value.is_null() {
                        known += 1;
                        self.value(&field.shape, value);
                    } else if !self.null_field(field, map) {
                        known += 1;
                    }
                    if top && self.report.refused_since(&before) {
                        self.report.note_refused(RefusedKey::Parameter(index), &before);
                    }
                }
            }
            self.leave(mark);
        }
        if map.len() > known {
            let names = names.unwrap_or_else(|| object.names());
            self.unknown_keys(object, &names, map, top);
        }
    }

    /// Lenient mode: moves a key such as `maxResults` or `Max-Results` to the
    /// parameter it loosely names, unless that key is itself a parameter.
    fn adopt_alias(&mut self, aliases: &mut Aliases, name: &str, map: &mut Map<String, Value>) {
        if let Some(alias) = aliases.take(name)
            && let Some(value) = map.remove(&alias)
        {
            map.insert(name.to_owned(), value);
            self.warn(
                WarningCode::ParameterNameNormalized,
                format!("the key `{}` was read as the parameter `{name}`", clip(&alias)),
            );
        }
    }

    /// Handles a field sent as `null`; true when its key was removed.
    fn null_field(&mut self, field: &Field, map: &mut Map<String, Value>) -> bool {
        let (shape, name) = (&field.shape, field.name.as_str());
        match field.presence {
            // When the model was sent strict definitions, `null` is
            // absence by design, not a value (a remote schema's nullable
            // property included): what goes on leaves it out.
            Presence::Optional | Presence::Defaulted if self.null_is_absent => {
                map.remove(name);
                true
            }
            // `None` for an `Option`, which takes `null`.
            Presence::Optional if shape.nullable => false,
            // Not given, for an optional value that cannot be `null` (a
            // remote schema's): what goes on leaves it out.
            Presence::Optional => {
                map.remove(name);
                true
            }
            // `None` for an `Option` whose default is `None` (a struct
            // field with a serde default): the value sent is the default.
            Presence::Defaulted if shape.nullable && field.default.as_ref().is_some_and(Value::is_null) => false,
            Presence::Defaulted if self.lenient() => {
                map.remove(name);
                self.warn(
                    WarningCode::NullReplacedByDefault,
                    "null was sent; the default was used".to_owned(),
                );
                true
            }
            // Strict mode makes no coercion: `null` is `None` for an
            // `Option` (a struct field with a serde default), and no value
            // of any other type.
            Presence::Defaulted if shape.nullable => false,
            Presence::Defaulted => {
                self.error_with(ErrorCode::TypeMismatch, || {
                    Sentence::new("null is not allowed in strict mode; expected ")
                        .expected(shape)
                        .text(" (leave the key out for its default)")
                        .done()
                });
                false
            }
            // A required value that may be `null` (a remote schema's).
            Presence::Required if shape.nullable => false,
            Presence::Required => {
                self.null_not_allowed(shape);
                false
            }
        }
    }

    fn unknown_keys(&mut self, object: &ObjectShape, names: &FieldNames, map: &mut Map<String, Value>, top: bool) {
        // Keys the object admits by a schema are values like any other.
        if let Some(others) = &object.others {
            for (key, value) in map.iter_mut().filter(|(key, _)| !names.contains(key)) {
                let mark = self.enter_sent_key(key);
                let before = self.report.mark();
                self.value(others, value);
                if top && self.report.refused_since(&before) {
                    self.report.note_refused(RefusedKey::Other(key.clone()), &before);
                }
                self.leave(mark);
            }
            return;
        }
        // Written once for every key's sentence, when the first is.
        let mut parameters: Option<String> = None;
        // A remote object that admits other keys gets them (the
        // arguments of a remote tool whose schema is open, too).
        let fate = if object.keeps_unknown {
            "it was passed on as sent"
        } else {
            "it was ignored"
        };
        for key in map.keys().filter(|k| !names.contains(k)) {
            let mark = self.enter_sent_key(key);
            // A problem past those recorded is only counted: thousands of
            // unknown keys cost no sentence each.
            let recorded = if self.lenient() {
                self.records_warning(true)
            } else {
                self.report.errors.len() < MAX_RECORDED_PROBLEMS
            };
            let mut detail = String::new();
            if recorded {
                let parameters = parameters.get_or_insert_with(|| listed_fields(object));
                detail = self.unknown_key_sentence(object, key, parameters);
            }
            if self.lenient() {
                if recorded {
                    detail.push_str("; ");
                    detail.push_str(fate);
                }
                self.warn(WarningCode::UnknownParameter, detail);
            } else {
                self.error(ErrorCode::UnknownParameter, detail);
            }
            self.leave(mark);
        }
        // One pass, not one removal a key: removing from an ordered map
        // shifts what follows, which made many unknown keys quadratic.
        if !top && !object.keeps_unknown {
            object.retain_named(map);
        }
    }

    /// What the model reads of an unknown key: the closest field's name, for
    /// the first [`SUGGESTIONS`] keys of a binding and an object of at most
    /// [`SUGGESTED_FIELDS`] fields, and the fields there are.
    fn unknown_key_sentence(&mut self, object: &ObjectShape, key: &str, parameters: &str) -> String {
        let mut detail = format!("`{}` is not a parameter here", clip(key));
        if self.suggestions < SUGGESTIONS && object.fields.len() <= SUGGESTED_FIELDS {
            self.suggestions += 1;
            if let Some(name) = closest_name(key, object.fields.iter().map(|f| f.name.as_str())) {
                let _ = write!(detail, " (did you mean `{}`?)", clip(name));
            }
        }
        detail.push_str("; the parameters are ");
        detail.push_str(parameters);
        detail
    }

    fn value(&mut self, shape: &Shape, value: &mut Value) {
        if value.is_null() {
            // Any JSON value (a `serde_json::Value` item, say) takes `null`
            // as its schema `{}` does; a parameter's or field's own `null`
            // was judged by its presence before.
            if !shape.nullable && !matches!(shape.kind, Kind::Any) {
                self.null_not_allowed(shape);
            }
            return;
        }
        match &shape.kind {
            Kind::String => self.string(shape, value),
            Kind::Boolean => self.boolean(shape, value),
            Kind::Integer { .. } => self.integer(shape, value),
            Kind::Number { .. } => self.number(shape, value),
            Kind::Enum(values) => self.enumeration(shape, values, value),
            Kind::Array { items, .. } => self.array(shape, items, value),
            Kind::Map { values } => {
                let before = self.report.mark();
                if let Some(parsed) = self.object_like(shape, value)
                    && let Value::Object(map) = value
                {
                    for (key, item) in map.iter_mut() {
                        let mark = self.enter_sent_key(key);
                        self.value(values, item);
                        self.leave(mark);
                    }
                    if !shape.items_fit(map.len()) {
                        let keys = counted(map.len() as u64, "key");
                        let detail = format!("expected {}, got {} {keys}", expected(shape), map.len());
                        self.error(ErrorCode::OutOfRange, detail);
                    }
                    self.keep_if_accepted(parsed, &before);
                }
            }
            Kind::Object(object) => {
                let before = self.report.mark();
                if let Some(parsed) = self.object_like(shape, value)
                    && let Value::Object(map) = value
                {
                    self.object(object, map, false);
                    self.keep_if_accepted(parsed, &before);
                }
            }
            Kind::Any => {
                if nesting_exceeds(value, MAX_DEPTH) {
                    self.error(
                        ErrorCode::OutOfRange,
                        format!("the value is nested deeper than {MAX_DEPTH} levels"),
                    );
                }
            }
        }
    }

    fn string(&mut self, shape: &Shape, value: &mut Value) {
        match value {
            Value::String(s) => self.check_string(shape, s),
            Value::Number(_) | Value::Bool(_) if self.lenient() => {
                let text = match &*value {
                    Value::Number(n) => n.to_string(),
                    other => other.to_string(),
                };
                // No warning for a conversion whose result is then refused.
                let errors = self.report.error_count();
                self.check_string(shape, &text);
                if self.report.error_count() == errors {
                    self.warn(
                        WarningCode::ScalarConvertedToString,
                        Sentence::new("")
                            .value(value)
                            .text(" was converted to the string ")
                            .quoted(&text)
                            .done(),
                    );
                }
                *value = Value::String(text);
            }
            _ => self.mismatch(shape, value),
        }
    }

    fn check_string(&mut self, shape: &Shape, s: &str) {
        match shape.check_text(s) {
            Ok(()) => {}
            Err(TextProblem::Length(len)) => {
                let detail = format!("expected {}, got {len} {}", expected(shape), counted(len, "character"));
                self.error(ErrorCode::OutOfRange, detail);
            }
            Err(TextProblem::Pattern) => {
                let pattern = clip(shape.constraints.pattern.as_ref().map_or("", |p| p.as_str()));
                let detail = format!(
                    "expected a string matching the pattern `{pattern}`, got {}",
                    describe_str(s)
                );
                self.error(ErrorCode::PatternMismatch, detail);
            }
        }
    }

    fn boolean(&mut self, shape: &Shape, value: &mut Value) {
        let read = match &*value {
            Value::Bool(b) => Some((*b, None)),
            Value::String(s) if self.lenient() => {
                text_boolean(s).map(|b| (b, Some(WarningCode::StringConvertedToBoolean)))
            }
            Value::Number(n) if self.lenient() => match n.as_f64() {
                Some(1.0) => Some((true, Some(WarningCode::NumberCoercedToBoolean))),
                Some(0.0) => Some((false, Some(WarningCode::NumberCoercedToBoolean))),
                _ => None,
            },
            _ => None,
        };
        let Some((b, coerced)) = read else {
            return self.mismatch(shape, value);
        };
        if !shape.value_listed(&Value::Bool(b)) {
            return self.not_listed(shape, value);
        }
        if let Some(code) = coerced {
            let detail = Sentence::new("").value(value).text(read_as(b));
            self.warn(code, detail.done());
            *value = Value::Bool(b);
        }
    }

    /// A value of the right kind that is none of the values the shape
    /// lists (a remote schema's numeric or boolean `enum`).
    fn not_listed(&mut self, shape: &Shape, value: &Value) {
        self.expected_got(ErrorCode::EnumOutOfRange, shape, value);
    }

    fn integer(&mut self, shape: &Shape, value: &mut Value) {
        // The warning of a coercion is recorded only once its result is
        // accepted: a value refused after all is an error and nothing else.
        let (n, coerced) = match &*value {
            Value::Number(num) => {
                if let Some(i) = num.as_i64() {
                    (i as i128, None)
                } else if let Some(u) = num.as_u64() {
                    (u as i128, None)
                } else if num.as_f64().is_some_and(|f| f == 0.0 && f.is_sign_negative()) {
                    // JSON's `-0`, an integer literal, which serde_json
                    // reads as the float -0.0: the integer 0, in either mode.
                    (0, None)
                } else {
                    let f = num.as_f64().unwrap_or(f64::NAN);
                    let whole = f.trunc();
                    // A whole number past 2^53 (an integer beyond 64 bits,
                    // say) is out of range in either mode, as below.
                    let past_exact = whole == f && whole.abs() >= EXACT_FLOAT_INTEGERS;
                    if !self.lenient() && !past_exact {
                        return self.mismatch(shape, value);
                    }
                    let (code, how) = if whole == f {
                        (WarningCode::NumberCoercedToInteger, "read as the integer")
                    } else {
                        (WarningCode::FractionTruncated, "truncated to the integer")
                    };
                    // A JSON number that arrived as a float (an integer
                    // beyond 64 bits, or written with a fraction or an
                    // exponent) is exact only within 2^53; past that the
                    // integer the model wrote is unknown, so it is refused
                    // rather than read as a neighbour (`-9223372036854775809`
                    // is no `i64::MIN`).
                    if whole.abs() >= EXACT_FLOAT_INTEGERS {
                        let detail = format!(
                            "expected {}, got {}, too large to be read exactly as an integer",
                            expected(shape),
                            describe_value(value)
                        );
                        return self.error(ErrorCode::OutOfRange, detail);
                    }
                    let n = whole as i128;
                    let detail = Sentence::new("")
                        .value(value)
                        .text(" was ")
                        .text(how)
                        .text(" ")
                        .integer(n);
                    (n, Some((code, detail.done())))
                }
            }
            Value::String(s) if self.lenient() => match parse_integer_literal(s) {
                IntegerLiteral::Integer(n) => (
                    n,
                    Some((WarningCode::StringConvertedToInteger, converted_to_integer(s, n).done())),
                ),
                IntegerLiteral::Huge => {
                    let detail = Sentence::new("expected ")
                        .expected(shape)
                        .text(", got ")
                        .string(s)
                        .done();
                    return self.error(ErrorCode::OutOfRange, detail);
                }
                IntegerLiteral::NotAnInteger => {
                    let detail = Sentence::new("expected ")
                        .expected(shape)
                        .text(", got ")
                        .string(s)
                        .done();
                    return self.error(ErrorCode::UnsupportedIntegerLiteral, detail);
                }
            },
            other => return self.mismatch(shape, other),
        };
        if !shape.integer_fits(n) {
            let detail = Sentence::new("expected ")
                .expected(shape)
                .text(", got ")
                .integer(n)
                .done();
            return self.error(ErrorCode::OutOfRange, detail);
        }
        // JSON numbers carry 64-bit integers exactly here (serde_json
        // without `arbitrary_precision`): an `i128`/`u128` takes values from
        // `i64::MIN` to `u64::MAX`, and is refused beyond, never rounded.
        if i64::try_from(n).is_err() && u64::try_from(n).is_err() {
            let detail = format!(
                "expected {}, got {n}; integers beyond 64 bits cannot be carried exactly (the range is {} to {})",
                expected(shape),
                i64::MIN,
                u64::MAX
            );
            return self.error(ErrorCode::OutOfRange, detail);
        }
        if shape.constraints.values.is_some() && !self.listed(shape, &Value::Number(integer_number(n))) {
            return self.not_listed(shape, value);
        }
        if let Some((code, detail)) = coerced {
            self.warn(code, detail);
            *value = Value::Number(integer_number(n));
        } else if !value.is_i64() && !value.is_u64() {
            // `-0`, read without a word.
            *value = Value::Number(integer_number(n));
        }
    }

    fn number(&mut self, shape: &Shape, value: &mut Value) {
        let f = match &*value {
            Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
            Value::String(s) if self.lenient() => match s.trim().parse::<f64>() {
                Ok(f) if f.is_finite() => {
                    if !shape.number_fits(f) {
                        let detail = format!("expected {}, got {}", expected(shape), float_text(f));
                        return self.error(ErrorCode::OutOfRange, detail);
                    }
                    if !self.listed(shape, &Number::from_f64(f).map_or(Value::Null, Value::Number)) {
                        return self.not_listed(shape, value);
                    }
                    self.warn(
                        WarningCode::StringConvertedToNumber,
                        format!("{} was converted to the number {}", describe_str(s), float_text(f)),
                    );
                    if let Some(n) = Number::from_f64(f) {
                        *value = Value::Number(n);
                    }
                    f
                }
                // A number too large for any float ("1e400"), not a word
                // such as "inf" that Rust would also read.
                Ok(_) if is_number_literal(s.trim()) => {
                    let detail = format!("expected {}, got {}", expected(shape), describe_str(s));
                    return self.error(ErrorCode::OutOfRange, detail);
                }
                _ => return self.mismatch(shape, value),
            },
            other => return self.mismatch(shape, other),
        };
        if !shape.number_fits(f) {
            let detail = format!("expected {}, got {}", expected(shape), float_text(f));
            self.error(ErrorCode::OutOfRange, detail);
        } else if !self.listed(shape, value) {
            self.not_listed(shape, value);
        }
    }

    /// Whether `value` is one of the values `shape` lists, if it lists any:
    /// a long list of numbers is looked up in an index made at its first
    /// use in this binding, so a million items cost no scan each.
    fn listed(&mut self, shape: &Shape, value: &Value) -> bool {
        match (&shape.constraints.values, value) {
            (Some(values), Value::Number(n)) if values.len() > SCANNED_ENUM => self
                .long_lists
                .entry(values.as_ptr() as usize)
                .or_insert_with(|| ListedNumbers::new(values))
                .contains(values, n),
            _ => shape.value_listed(value),
        }
    }

    fn enumeration(&mut self, shape: &Shape, values: &[String], value: &mut Value) {
        let Value::String(s) = &*value else {
            return self.mismatch(shape, value);
        };
        let (listed, folded) = if values.len() <= SCANNED_ENUM {
            let listed = shape.enum_has(s);
            let mut folded = values.iter().filter(|v| !listed && v.eq_ignore_ascii_case(s.trim()));
            match (folded.next(), folded.next()) {
                (Some(only), None) => (listed, Some(only)),
                _ => (listed, None),
            }
        } else {
            let index = self
                .long_enums
                .entry(values.as_ptr() as usize)
                .or_insert_with(|| EnumIndex::new(values));
            let listed = index.exact.contains(s.as_str());
            let folded = if listed {
                None
            } else {
                index.folded.get(&s.trim().to_ascii_lowercase()).copied().flatten()
            };
            (listed, folded.map(|i| &values[i]))
        };
        if listed {
            return;
        }
        if let Some(only) = folded.filter(|_| self.lenient()) {
            let detail = Sentence::new("").string(s).text(" was read as ").quoted(only);
            self.warn(WarningCode::EnumCaseFolded, detail.done());
            *value = Value::String(only.clone());
            return;
        }
        if self.errors_full() {
            return;
        }
        let detail = Sentence::new("expected ")
            .expected(shape)
            .text(", got ")
            .string(s)
            .done();
        self.error(ErrorCode::EnumOutOfRange, detail);
    }

    fn array(&mut self, shape: &Shape, items: &Shape, value: &mut Value) {
        let before = self.report.mark();
        let coerced = match value {
            Value::Array(_) => false,
            Value::String(s) if self.lenient() => {
                match parse_json_of_kind(s, '[') {
                    Some(parsed) => {
                        self.warn(
                            WarningCode::JsonStringParsed,
                            "a JSON array inside a string was parsed".to_owned(),
                        );
                        *value = parsed;
                    }
                    None => self.wrap_in_list(value),
                }
                true
            }
            Value::Number(_) | Value::Bool(_) if self.lenient() => {
                self.wrap_in_list(value);
                true
            }
            // One object where a list of objects belongs.
            Value::Object(_) if self.lenient() && matches!(items.kind, Kind::Object(_) | Kind::Map { .. }) => {
                self.wrap_in_list(value);
                true
            }
            _ => return self.mismatch(shape, value),
        };
        let Value::Array(elements) = value else {
            return;
        };
        for (index, element) in elements.iter_mut().enumerate() {
            let mark = self.enter_index(index);
            self.value(items, element);
            self.leave(mark);
        }
        // A set's items go on once each, the first of each in order, and
        // its bounds count what goes on: what a native set gets, and what a
        // remote tool whose schema says `uniqueItems` is sent.
        if matches!(shape.kind, Kind::Array { unique: true, .. }) {
            drop_repeats(elements);
        }
        let len = elements.len();
        if !shape.items_fit(len) {
            let detail = Sentence::new("expected ")
                .expected(shape)
                .text(", got ")
                .integer(len as i128)
                .text(" ")
                .text(&counted(len as u64, "item"))
                .done();
            self.error(ErrorCode::OutOfRange, detail);
        }
        self.keep_if_accepted(coerced, &before);
    }

    /// After a container made from what was sent (a list from a single
    /// value, a value from a JSON string) was walked: when it was refused
    /// after all, no warning is kept of the change or of any made inside
    /// it, as the tool never got the result.
    fn keep_if_accepted(&mut self, coerced: bool, before: &ReportMark) {
        if coerced && self.report.refused_since(before) {
            self.report.drop_warnings_since(before);
        }
    }

    fn wrap_in_list(&mut self, value: &mut Value) {
        let detail = wrapped_in_list(Sentence::new("").value(value));
        self.warn(WarningCode::ScalarCoercedToList, detail.done());
        *value = Value::Array(vec![value.take()]);
    }

    /// Accepts an object, or in lenient mode a string holding a JSON object
    /// (parsed in place; `Some(true)`); reports a mismatch otherwise.
    fn object_like(&mut self, shape: &Shape, value: &mut Value) -> Option<bool> {
        match value {
            Value::Object(_) => Some(false),
            Value::String(s) if self.lenient() => match parse_json_of_kind(s, '{') {
                Some(parsed) => {
                    self.warn(
                        WarningCode::JsonStringParsed,
                        "a JSON object inside a string was parsed".to_owned(),
                    );
                    *value = parsed;
                    Some(true)
                }
                None => {
                    self.mismatch(shape, value);
                    None
                }
            },
            _ => {
                self.mismatch(shape, value);
                None
            }
        }
    }
}

// The lenient readings both binding paths make of a string, each with
// the end of its warning: one rule each, whichever path meets the value.

/// The boolean a string stands for: `true` or `false` in any case, with
/// spaces around.
pub(super) fn text_boolean(s: &str) -> Option<bool> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("true") {
        Some(true)
    } else if s.eq_ignore_ascii_case("false") {
        Some(false)
    } else {
        None
    }
}

/// How the warning of a value read as a boolean ends.
pub(super) fn read_as(b: bool) -> &'static str {
    if b { " was read as true" } else { " was read as false" }
}

/// The warning of string `s` read as the integer `n`.
pub(super) fn converted_to_integer(s: &str, n: i128) -> Sentence {
    Sentence::new("")
        .string(s)
        .text(" was converted to the integer ")
        .integer(n)
}

/// The warning of a single value `value` wrapped in a list.
pub(super) fn wrapped_in_list(value: Sentence) -> Sentence {
    value.text(" was wrapped in a list")
}

/// Removes from `items` every value that repeats an earlier one, keeping
/// the order of the others.
fn drop_repeats(items: &mut Vec<Value>) {
    let repeats = repeats(items);
    if repeats.is_empty() {
        return;
    }
    let mut repeated = vec![false; items.len()];
    for index in repeats {
        repeated[index] = true;
    }
    let mut index = 0;
    items.retain(|_| {
        index += 1;
        !repeated[index - 1]
    });
}

/// The indices of the values of `items` equal to an earlier one, in
/// O(n log n): each value is written as canonical JSON text (object keys
/// sorted, so values equal as `Value`s give equal text whatever their key
/// order), and the texts are sorted with their indices, so each run of
/// equal texts starts with its first occurrence.
fn repeats(items: &[Value]) -> Vec<usize> {
    let mut texts: Vec<(String, usize)> = items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let mut text = String::new();
            write_canonical(item, &mut text);
            (text, index)
        })
        .collect();
    texts.sort_unstable();
    texts
        .windows(2)
        .filter(|pair| pair[0].0 == pair[1].0)
        .map(|pair| pair[1].1)
        .collect()
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let _ = write!(out, "{}:", Value::from(key.as_str()));
                write_canonical(item, out);
            }
            out.push('}');
        }
        // Equal numbers are written alike (`1` and `1.0`, as JSON Schema
        // compares them).
        #[allow(clippy::cast_possible_truncation)]
        Value::Number(n) => match n.as_f64() {
            Some(f) if !n.is_i64() && !n.is_u64() && f.fract() == 0.0 && f.abs() < 9.0e18 => {
                let _ = write!(out, "{}", f as i64);
            }
            _ => {
                let _ = write!(out, "{n}");
            }
        },
        scalar => {
            let _ = write!(out, "{scalar}");
        }
    }
}

/// Parses `s` when it holds JSON of the kind that starts with `open`
/// (`[` for arrays, `{` for objects).
fn parse_json_of_kind(s: &str, open: char) -> Option<Value> {
    if !s.trim_start().starts_with(open) {
        return None;
    }
    let parsed: Value = serde_json::from_str(s).ok()?;
    let right_kind = match open {
        '[' => parsed.is_array(),
        _ => parsed.is_object(),
    };
    right_kind.then_some(parsed)
}

/// What a string sent for an integer holds.
pub(super) enum IntegerLiteral {
    /// `"42"`, `" -7 "`, `"+3"`, or a whole number in float notation such as
    /// `"42.0"` or `"1e3"`.
    Integer(i128),
    /// A whole number beyond any integer type (`"1e40"`, 41 digits).
    Huge,
    /// Anything else: `"many"`, `"2.5"`.
    NotAnInteger,
}

/// Floats hold every integer exactly up to 2^53, and not all beyond.
const EXACT_FLOAT_INTEGERS: f64 = 9_007_199_254_740_992.0;

pub(super) fn parse_integer_literal(s: &str) -> IntegerLiteral {
    let s = s.trim();
    if let Ok(n) = s.parse::<i128>() {
        return IntegerLiteral::Integer(n);
    }
    // Float notation (`"42.0"`, `"1e3"`, `"1.5e20"`) is read from the
    // decimal text itself, exactly, never through a rounded float.
    if !is_number_literal(s) {
        return IntegerLiteral::NotAnInteger;
    }
    match exact_decimal_integer(s) {
        Ok(n) => IntegerLiteral::Integer(n),
        Err(Inexact::TooLarge) => IntegerLiteral::Huge,
        Err(Inexact::Fraction) => IntegerLiteral::NotAnInteger,
    }
}

/// Whether `s` is a number written in decimals (`"42"`, `"-1.5e20"`,
/// `"1e400"`), however large: not a word that Rust's float parser also
/// reads (`"inf"`, `"NaN"`).
fn is_number_literal(s: &str) -> bool {
    let decimal = s
        .trim_start_matches(['+', '-'])
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
    decimal && s.parse::<f64>().is_ok()
}

/// Why a decimal literal is no `i128`.
enum Inexact {
    /// It has a fraction (or is malformed).
    Fraction,
    /// It is whole, and beyond an `i128`.
    TooLarge,
}

/// The integer a decimal literal such as `"1.5e20"` or `"12e3"` writes,
/// exactly.
fn exact_decimal_integer(s: &str) -> Result<i128, Inexact> {
    let (negative, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(at) => {
            let exponent = &s[at + 1..];
            match exponent.parse::<i32>() {
                Ok(e) => (&s[..at], e),
                // An exponent past i32: huge, or tiny.
                Err(_) if !exponent.starts_with('-') && s[..at].bytes().any(|b| matches!(b, b'1'..=b'9')) => {
                    return Err(Inexact::TooLarge);
                }
                Err(_) => return Err(Inexact::Fraction),
            }
        }
        None => (s, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if !whole.bytes().chain(fraction.bytes()).all(|b| b.is_ascii_digit()) {
        return Err(Inexact::Fraction);
    }
    let digits = format!("{whole}{fraction}");
    let digits = digits.trim_start_matches('0');
    let significant = digits.trim_end_matches('0');
    if significant.is_empty() {
        return Ok(0);
    }
    let trailing_zeros = (digits.len() - significant.len()) as i64;
    let shift = i64::from(exponent) - fraction.len() as i64 + trailing_zeros;
    if shift < 0 {
        return Err(Inexact::Fraction);
    }
    if significant.len() as i64 + shift > 40 {
        return Err(Inexact::TooLarge);
    }
    let mut n = significant.parse::<i128>().map_err(|_| Inexact::TooLarge)?;
    for _ in 0..shift {
        n = n.checked_mul(10).ok_or(Inexact::TooLarge)?;
    }
    Ok(if negative { -n } else { n })
}

fn integer_number(n: i128) -> Number {
    if let Ok(i) = i64::try_from(n) {
        Number::from(i)
    } else {
        // Callers check first that `n` fits 64 bits.
        Number::from(u64::try_from(n).unwrap_or(u64::MAX))
    }
}

/// Keys that differ only in letter case and separators: `maxResults`,
/// `MaxResults`, `max-results` and `max_results` all match.
/// A name as loosely compared: `maxResults`, `max_results` and
/// `Max-Results` are all `maxresults`.
fn loose_name(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '_' | '-' | ' '))
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

#[cfg(test)]
mod tests;
