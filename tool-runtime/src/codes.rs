//! The codes of every warning and error the runtime reports, and the one
//! place their wire strings live.
//!
//! A problem is shown as `code:path` (or `code` alone when it has no path):
//! `missing_required:pattern`, `type_mismatch:files[1]`,
//! `string_literal_converted_to_integer:window.start`.

use std::fmt;

macro_rules! codes {
    (
        $(#[$meta:meta])*
        pub enum $name:ident { $( $(#[$vmeta:meta])* $variant:ident => $wire:literal, )* }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum $name { $( $(#[$vmeta])* $variant, )* }

        impl $name {
            /// Every code, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The code as it appears on the wire, e.g. `type_mismatch`.
            pub const fn as_str(self) -> &'static str {
                match self { $( $name::$variant => $wire, )* }
            }

            /// The code whose wire string is `s`, if any.
            pub fn from_wire(s: &str) -> Option<Self> {
                match s { $( $wire => Some($name::$variant), )* _ => None }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

codes! {
    /// Why the binder accepted a value only after changing it (lenient mode).
    pub enum WarningCode {
        /// `"42"` for an integer.
        StringConvertedToInteger => "string_literal_converted_to_integer",
        /// `42.0` for an integer.
        NumberCoercedToInteger => "number_coerced_to_integer",
        /// `42.7` for an integer (the fraction is dropped).
        FractionTruncated => "fractional_number_truncated_to_integer",
        /// `"0.5"` for a number.
        StringConvertedToNumber => "string_literal_converted_to_number",
        /// `"true"` or `"False"` for a boolean.
        StringConvertedToBoolean => "string_literal_converted_to_boolean",
        /// `1` or `0` for a boolean.
        NumberCoercedToBoolean => "number_coerced_to_boolean",
        /// `42` or `true` for a string.
        ScalarConvertedToString => "scalar_converted_to_string",
        /// A single value where a list belongs, wrapped in a list.
        ScalarCoercedToList => "scalar_coerced_to_list",
        /// A string holding a JSON array or object, parsed.
        JsonStringParsed => "json_string_parsed",
        /// `"WRITE"` for the enum value `write`.
        EnumCaseFolded => "enum_case_folded",
        /// `null` for a parameter that has a default: the default was used.
        NullReplacedByDefault => "null_replaced_by_default",
        /// `maxResults` for the parameter `max_results`.
        ParameterNameNormalized => "parameter_name_normalized",
        /// A key the tool does not declare; it was ignored.
        UnknownParameter => "unknown_parameter",
    }
}

codes! {
    /// Why a call could not run.
    pub enum ErrorCode {
        /// A required parameter is absent.
        MissingRequired => "missing_required",
        /// `null` for a parameter that is neither optional nor defaulted.
        NullNotAllowed => "null_not_allowed",
        /// A JSON type that no binding rule accepts.
        TypeMismatch => "type_mismatch",
        /// A string that is no integer, for an integer.
        UnsupportedIntegerLiteral => "unsupported_integer_literal",
        /// Outside the type's range, or a min/max/length/items bound.
        OutOfRange => "out_of_range",
        /// A string that does not match the parameter's `pattern`.
        PatternMismatch => "pattern_mismatch",
        /// A value that is not one of the enum's values.
        EnumOutOfRange => "enum_out_of_range",
        /// A key the tool does not declare (strict mode only).
        UnknownParameter => "unknown_parameter",
        /// The arguments are JSON, but not a JSON object.
        ArgumentsNotObject => "arguments_not_object",
        /// The raw argument text is not JSON.
        JsonParseError => "json_parse_error",
        /// The raw argument text is larger than the registry accepts.
        ArgumentsTooLarge => "arguments_too_large",
        /// No tool of that name is registered.
        UnknownTool => "unknown_tool",
    }
}

/// Formats `code:path`, or `code` alone when the path is empty.
fn write_coded(f: &mut fmt::Formatter<'_>, code: &str, path: &str) -> fmt::Result {
    if path.is_empty() {
        f.write_str(code)
    } else {
        write!(f, "{code}:{path}")
    }
}

/// A value the binder accepted after changing it, or a key it ignored.
///
/// [`Warning::code_path`] gives `code:path`; `Display` adds the detail, a
/// sentence for people and logs.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Warning {
    /// What was changed.
    pub code: WarningCode,
    /// Where: a parameter `max_results`, a field `window.start`, an element `files[2]`.
    pub path: String,
    /// A sentence saying what was sent and what was made of it.
    pub detail: String,
}

impl Warning {
    /// A warning at `path`.
    pub fn new(code: WarningCode, path: impl Into<String>, detail: impl Into<String>) -> Self {
        Warning {
            code,
            path: path.into(),
            detail: detail.into(),
        }
    }

    /// Whether this is a key ignored (`unknown_parameter`) rather than a
    /// value changed: such warnings outlive a refused value and are listed
    /// in a refusal.
    pub(crate) fn is_ignored_key(&self) -> bool {
        self.code == WarningCode::UnknownParameter
    }

    /// `code:path`, as in `string_literal_converted_to_integer:max_results`.
    pub fn code_path(&self) -> String {
        coded(self.code.as_str(), &self.path)
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_coded(f, self.code.as_str(), &self.path)?;
        write!(f, ": {}", self.detail)
    }
}

/// A problem that kept a tool from running.
///
/// [`CallError::code_path`] gives `code:path` (or `code` alone for problems
/// of the whole call, such as `json_parse_error`); `Display` adds the
/// detail, which says what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallError {
    /// What went wrong.
    pub code: ErrorCode,
    /// Where; empty for problems of the whole call.
    pub path: String,
    /// A sentence saying what was expected: the type, the allowed values, the bound.
    pub detail: String,
}

impl CallError {
    /// A problem at `path` (empty for the whole call).
    pub fn new(code: ErrorCode, path: impl Into<String>, detail: impl Into<String>) -> Self {
        CallError {
            code,
            path: path.into(),
            detail: detail.into(),
        }
    }
}

impl CallError {
    /// `code:path`, as in `missing_required:pattern`; `code` alone when the
    /// problem has no path.
    pub fn code_path(&self) -> String {
        coded(self.code.as_str(), &self.path)
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_coded(f, self.code.as_str(), &self.path)?;
        write!(f, ": {}", self.detail)
    }
}

impl std::error::Error for CallError {}

fn coded(code: &str, path: &str) -> String {
    if path.is_empty() {
        code.to_owned()
    } else {
        format!("{code}:{path}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_strings_round_trip() {
        for code in WarningCode::ALL {
            assert_eq!(WarningCode::from_wire(code.as_str()), Some(*code));
        }
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_wire(code.as_str()), Some(*code));
        }
        assert_eq!(WarningCode::from_wire("nope"), None);
    }

    #[test]
    fn code_path_is_code_colon_path_and_display_adds_the_detail() {
        let w = Warning::new(WarningCode::ScalarConvertedToString, "files[0]", "1 became \"1\"");
        assert_eq!(w.code_path(), "scalar_converted_to_string:files[0]");
        assert_eq!(w.to_string(), "scalar_converted_to_string:files[0]: 1 became \"1\"");
        let e = CallError::new(ErrorCode::JsonParseError, "", "bad");
        assert_eq!(e.code_path(), "json_parse_error");
        assert_eq!(e.to_string(), "json_parse_error: bad");
        let boxed: Box<dyn std::error::Error> = Box::new(e);
        assert!(boxed.to_string().contains("bad"));
    }
}
