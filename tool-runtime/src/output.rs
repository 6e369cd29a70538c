//! What a tool returns: content blocks, optional structured content, and
//! whether it failed.
//!
//! A tool's return value becomes a [`ToolOutput`] through [`IntoToolOutput`]:
//! strings are text, [`Content`] blocks pass through, `Result::Err` is an
//! error whose text is the error's message, and any other `Serialize` value
//! is JSON text plus structured content.

use std::borrow::Cow;
use std::fmt;

use serde::Serialize;
use serde_json::Value;

/// One block of a tool's result.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Content {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// The bytes in base64.
        data: String,
        /// `image/png`, `image/jpeg`, ...
        mime_type: String,
    },
    /// A document such as a PDF, base64-encoded.
    Document {
        /// The bytes in base64.
        data: String,
        /// `application/pdf`, `text/plain`, ...
        mime_type: String,
        /// A title shown with the document.
        title: Option<String>,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// An image block from raw bytes.
    pub fn image(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: base64(bytes),
            mime_type: mime_type.into(),
        }
    }

    /// A document block from raw bytes.
    pub fn document(bytes: &[u8], mime_type: impl Into<String>, title: Option<String>) -> Self {
        Content::Document {
            data: base64(bytes),
            mime_type: mime_type.into(),
            title,
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text } => Some(text),
            _ => None,
        }
    }

    /// Whether this is a `text/*` document, which the provider formats
    /// send as its decoded text.
    pub(crate) fn is_text_document(&self) -> bool {
        matches!(self, Content::Document { mime_type, .. } if mime_type.starts_with("text/"))
    }

    /// The text of a `text/*` document, decoded; `None` for other blocks
    /// and for a document that is no UTF-8 text in base64.
    pub(crate) fn document_text(&self) -> Option<String> {
        match self {
            Content::Document { data, .. } if self.is_text_document() => {
                base64_decode(data).and_then(|bytes| String::from_utf8(bytes).ok())
            }
            _ => None,
        }
    }

    /// Changes the text a model reads of this block: a text block's, or a
    /// `text/*` document's, which stays a document (with its title and
    /// type). A block of no text is left as it is.
    pub(crate) fn edit_text(&mut self, edit: impl FnOnce(&mut String)) {
        match self {
            Content::Text { text } => edit(text),
            Content::Document { .. } => {
                if let Some(mut text) = self.document_text() {
                    edit(&mut text);
                    if let Content::Document { data, .. } = self {
                        *data = base64(text.as_bytes());
                    }
                }
            }
            Content::Image { .. } => {}
        }
    }

    /// How many bytes of text a model reads of this block: a text block's,
    /// or a `text/*` document's once decoded; `None` for other blocks, and
    /// for a document that is no UTF-8 text in base64, which formats show
    /// as a note (and which is never cut).
    pub(crate) fn text_len(&self) -> Option<usize> {
        match self {
            Content::Text { text } => Some(text.len()),
            Content::Document { .. } => self.document_text().map(|text| text.len()),
            Content::Image { .. } => None,
        }
    }
}

/// A finished call's content, before the registry adds what it knows
/// (warnings, error codes, the outcome).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ToolOutput {
    /// The blocks the model reads.
    pub content: Vec<Content>,
    /// The value as JSON, for structured return types.
    pub structured_content: Option<Value>,
    /// The tool reported a failure.
    pub is_error: bool,
}

impl ToolOutput {
    /// A successful text result.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![Content::text(text)],
            ..Self::default()
        }
    }

    /// A failure the model reads as `text`.
    pub fn error(text: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![Content::text(text)],
            structured_content: None,
            is_error: true,
        }
    }

    /// A structured result: the value as JSON text plus structured content.
    pub fn json(value: Value) -> Self {
        let text = match &value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        ToolOutput {
            content: vec![Content::text(text)],
            structured_content: Some(value),
            is_error: false,
        }
    }

    /// Serializes `value` as a structured result; a value that cannot be
    /// serialized is an error result saying why.
    pub fn serialize<T: Serialize + ?Sized>(value: &T) -> Self {
        match serde_json::to_value(value) {
            Ok(v) => Self::json(v),
            Err(e) => Self::error(format!("the tool's result could not be serialized: {e}")),
        }
    }
}

/// Turns a tool's return value into its output. Implement it for your own
/// return types when JSON text is not what the model should read.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's return type: it implements neither `Serialize` nor `IntoToolOutput`",
    label = "add `#[derive(Serialize)]` to this type, or implement `IntoToolOutput` for it",
    note = "`String`, `ToolOutput`, `Json<T>` and every `Serialize` type can be returned, plain or as the `T` of `Result<T, E>`"
)]
pub trait IntoToolOutput {
    /// The output for this value.
    fn into_tool_output(self) -> ToolOutput;
}

impl IntoToolOutput for ToolOutput {
    fn into_tool_output(self) -> ToolOutput {
        self
    }
}

impl IntoToolOutput for String {
    fn into_tool_output(self) -> ToolOutput {
        ToolOutput::text(self)
    }
}

impl IntoToolOutput for &str {
    fn into_tool_output(self) -> ToolOutput {
        ToolOutput::text(self)
    }
}

impl IntoToolOutput for Cow<'_, str> {
    fn into_tool_output(self) -> ToolOutput {
        ToolOutput::text(self)
    }
}

impl IntoToolOutput for () {
    fn into_tool_output(self) -> ToolOutput {
        ToolOutput::default()
    }
}

impl IntoToolOutput for Content {
    fn into_tool_output(self) -> ToolOutput {
        ToolOutput {
            content: vec![self],
            ..ToolOutput::default()
        }
    }
}

impl IntoToolOutput for Vec<Content> {
    fn into_tool_output(self) -> ToolOutput {
        ToolOutput {
            content: self,
            ..ToolOutput::default()
        }
    }
}

impl IntoToolOutput for Value {
    fn into_tool_output(self) -> ToolOutput {
        ToolOutput::json(self)
    }
}

impl<T: Serialize> IntoToolOutput for Json<T> {
    fn into_tool_output(self) -> ToolOutput {
        ToolOutput::serialize(&self.0)
    }
}

impl<T: IntoToolOutput, E: fmt::Display> IntoToolOutput for Result<T, E> {
    fn into_tool_output(self) -> ToolOutput {
        match self {
            Ok(value) => value.into_tool_output(),
            Err(e) => ToolOutput::error(e.to_string()),
        }
    }
}

/// Returns a `Serialize` value as JSON text plus structured content, where a
/// return type would otherwise be read differently (a `String` inside a
/// struct, say). `#[tool]` does this for any `Serialize` return type already.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

/// The error type for tools that fail with a message.
///
/// Any `std::error::Error` converts into it with `?`, and stays reachable as
/// its [`source`](ToolError::source); for a message of your own, use
/// [`ToolError::new`]. The model reads the message. Like `anyhow::Error`, it
/// does not implement `std::error::Error` itself, so that the blanket
/// conversion can exist.
pub struct ToolError {
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

impl ToolError {
    /// An error the model reads as `message`.
    pub fn new(message: impl fmt::Display) -> Self {
        ToolError {
            message: message.to_string(),
            source: None,
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The error this one was converted from, if any.
    pub fn source(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        self.source.as_deref()
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for ToolError {
    fn from(e: E) -> Self {
        ToolError {
            message: e.to_string(),
            source: Some(Box::new(e)),
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("ToolError");
        debug.field("message", &self.message);
        if let Some(source) = &self.source {
            debug.field("source", source);
        }
        debug.finish()
    }
}

/// Decodes standard base64 (with padding); `None` when it is not base64.
pub(crate) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let text = text.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut buffer, mut bits) = (0u32, 0);
    for &c in text {
        buffer = (buffer << 6) | u32::from(value(c)?);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
        }
    }
    Some(out)
}

pub(crate) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foobar", "Zm9vYmFy"),
        ];
        for (input, expected) in cases {
            assert_eq!(base64(input.as_bytes()), expected);
            assert_eq!(base64_decode(expected).unwrap(), input.as_bytes());
        }
        assert_eq!(base64_decode("not base64!"), None);
    }

    #[test]
    fn results_map_to_outputs() {
        let ok: Result<String, ToolError> = Ok("fine".into());
        assert_eq!(ok.into_tool_output(), ToolOutput::text("fine"));
        let err: Result<String, ToolError> = Err(ToolError::new("disk full"));
        let out = err.into_tool_output();
        assert!(out.is_error);
        assert_eq!(out.content[0].as_text(), Some("disk full"));
    }

    #[test]
    fn io_errors_convert_with_question_mark_and_keep_their_source() {
        fn read() -> Result<String, ToolError> {
            Err(std::io::Error::other("no such file"))?
        }
        let error = read().unwrap_err();
        assert_eq!(error.message(), "no such file");
        let source = error.source().expect("the io::Error is kept");
        assert!(source.downcast_ref::<std::io::Error>().is_some());
        assert!(ToolError::new("plain").source().is_none());
    }

    #[test]
    fn json_output_carries_text_and_structure() {
        let out = Json(vec![1, 2]).into_tool_output();
        assert_eq!(out.content[0].as_text(), Some("[1,2]"));
        assert_eq!(out.structured_content, Some(json!([1, 2])));
    }
}
