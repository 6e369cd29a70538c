//! The answer to one call: what the model reads, and what the caller needs
//! to know besides (warnings, error codes, how the call ended).

use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::Value;

use crate::bind::{Report, write_integer};
use crate::codes::{CallError, ErrorCode, Warning};
use crate::output::{Content, ToolOutput};
use crate::schema::Shape;
use crate::text::{clip, closest_name, truncate_with};

/// How a call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// The tool ran and succeeded.
    Success,
    /// The tool ran and returned an error.
    ToolFailed,
    /// The arguments were refused; the tool did not run.
    InvalidArguments,
    /// No tool of that name; nothing ran.
    UnknownTool,
    /// The tool ran past its time limit and was stopped.
    TimedOut,
    /// The tool panicked; the registry caught it.
    Panicked,
    /// The call was cancelled before it finished.
    Cancelled,
    /// The tool was not run: it is a plain `fn` tool (or any tool served
    /// over MCP), and too many such calls are still running past their time
    /// limit (see `ToolRegistry::with_max_stray_blocking_calls`).
    Overloaded,
}

/// The result of one call, ready to be sent back to the model: render it
/// with a provider's `reply` (`format::anthropic::reply`, ...).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ToolResult {
    /// The provider's id of the call, when it came with one.
    pub call_id: Option<String>,
    /// The tool's name as called; read through [`ToolResult::tool`].
    tool: Arc<str>,
    /// The call failed in any way; providers mark such results as errors.
    /// [`ToolResult::outcome`] says how.
    pub is_error: bool,
    /// How a failed call ended; read through [`ToolResult::outcome`], which
    /// keeps it consistent with `is_error`.
    outcome: Outcome,
    /// The blocks the model reads.
    pub content: Vec<Content>,
    /// The result as JSON, for structured return values.
    pub structured_content: Option<Value>,
    /// Values the binder accepted after changing them. Logged at `warn` and
    /// not sent to the model unless the caller adds them.
    pub warnings: Vec<Warning>,
    /// Why the tool did not run (argument problems, an unknown tool): the
    /// first 100 problems met, however many there were (the text says how
    /// many). `warnings` likewise holds at most 100 coercions, and at
    /// most 100 ignored keys (`unknown_parameter`).
    pub errors: Vec<CallError>,
    /// Where the text was cut to the registry's output limit: the
    /// structured content, which is never cut, is then no answer for a
    /// model to read.
    cut: Option<Cut>,
    /// The output limit the structured content is held to, when there is
    /// structured content and a limit: content longer than it is no answer
    /// for a model to read either. Judged only by the formats that would
    /// send it in place of the text, so a call pays nothing for it.
    structured_limit: Option<usize>,
    /// Where the structured content holds a `null` its tool's output
    /// schema refuses (a float that is not finite, which serde writes as
    /// `null`): no answer for a format that holds results to that schema.
    null_refused_at: Option<Box<str>>,
}

/// Where a result's text was cut: the limit it was cut to (it fits any
/// limit at least as high, but for its marker), and how many bytes its
/// marker says were left out.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Cut {
    max: usize,
    left_out: usize,
}

/// The marker that ends a cut text.
fn cut_marker(left_out: usize) -> String {
    format!("\n[output cut here: {left_out} more bytes left out]")
}

/// The sentence that lists the tools a model may call instead: at most
/// [`LISTED_NAMES`] names, then how many more, so it stays bounded however
/// many tools there are (each name is at most 64 characters).
pub(crate) fn available_tools<'a>(names: impl Iterator<Item = &'a str> + Clone) -> String {
    let total = names.clone().count();
    let listed: Vec<String> = names.take(LISTED_NAMES).map(|n| format!("`{}`", clip(n))).collect();
    if listed.is_empty() {
        "No tools are available.".to_owned()
    } else if total > LISTED_NAMES {
        let more = total - LISTED_NAMES;
        format!("The available tools are: {} and {more} more.", listed.join(", "))
    } else {
        format!("The available tools are: {}.", listed.join(", "))
    }
}

/// How many tool names [`available_tools`] lists.
const LISTED_NAMES: usize = 100;

impl ToolResult {
    /// The result of a call of `tool` that produced `output`: what a caller
    /// that runs a call itself (an approval step answering for the tool, a
    /// test) sends back. `output.is_error` makes it a `ToolFailed` result.
    pub fn new(tool: impl Into<String>, call_id: Option<String>, output: ToolOutput) -> Self {
        Self::from_output(Arc::from(tool.into()), call_id, output, Vec::new())
    }

    pub(crate) fn from_output(
        tool: Arc<str>,
        call_id: Option<String>,
        output: ToolOutput,
        warnings: Vec<Warning>,
    ) -> Self {
        let outcome = if output.is_error {
            Outcome::ToolFailed
        } else {
            Outcome::Success
        };
        ToolResult {
            call_id,
            tool,
            is_error: output.is_error,
            outcome,
            content: output.content,
            structured_content: output.structured_content,
            warnings,
            errors: Vec::new(),
            cut: None,
            structured_limit: None,
            null_refused_at: None,
        }
    }

    /// The tool's name as called.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// How the call ended: `Success` when it is no error, else why it
    /// failed (`ToolFailed` for an error result made by hand).
    pub fn outcome(&self) -> Outcome {
        match (self.is_error, self.outcome) {
            (false, _) => Outcome::Success,
            (true, Outcome::Success) => Outcome::ToolFailed,
            (true, outcome) => outcome,
        }
    }

    /// This result with the warnings of the arguments its call was made
    /// with: a call that failed after its arguments were bound still says
    /// how they were changed.
    pub(crate) fn with_warnings(mut self, warnings: Vec<Warning>) -> Self {
        self.warnings = warnings;
        self
    }

    /// A failure with a text for the model and no argument errors.
    pub(crate) fn failure(tool: &str, call_id: Option<String>, outcome: Outcome, text: String) -> Self {
        ToolResult {
            call_id,
            tool: tool.into(),
            is_error: true,
            outcome,
            content: vec![Content::text(text)],
            structured_content: None,
            warnings: Vec::new(),
            errors: Vec::new(),
            cut: None,
            structured_limit: None,
            null_refused_at: None,
        }
    }

    /// Arguments refused: the text names the tool, lists the problems (at
    /// most [`LISTED_PROBLEMS`], then how many more) and asks for a
    /// corrected call.
    pub(crate) fn invalid_arguments(tool: &str, call_id: Option<String>, report: Report) -> Self {
        let text = invalid_arguments_text(tool, &report);
        ToolResult {
            call_id,
            tool: Arc::from(tool),
            is_error: true,
            outcome: Outcome::InvalidArguments,
            content: vec![Content::text(text)],
            structured_content: None,
            warnings: report.warnings,
            errors: report.errors,
            cut: None,
            structured_limit: None,
            null_refused_at: None,
        }
    }

    /// No tool of that name: the text lists what exists and suggests the
    /// closest name.
    pub(crate) fn unknown_tool<'a>(
        name: &str,
        call_id: Option<String>,
        available: impl Iterator<Item = &'a str> + Clone,
    ) -> Self {
        // The name is the model's: quoted cut, and searched for only when
        // it could be a typo of a tool name (at most 64 characters).
        let quoted = clip(name);
        let mut text = format!("There is no tool named `{quoted}`.");
        if let Some(closest) = closest_name(name, available.clone()) {
            let _ = write!(text, " Did you mean `{closest}`?");
        }
        text.push(' ');
        text.push_str(&available_tools(available));
        text.push_str(" Call one of them instead.");
        let mut result = Self::failure(&quoted, call_id, Outcome::UnknownTool, text);
        result.errors = vec![CallError::new(
            ErrorCode::UnknownTool,
            quoted.as_ref(),
            format!("no tool is named `{quoted}`"),
        )];
        result
    }

    /// Shows the binder's warnings to the model: appends a text block that
    /// lists what was changed, so it can send exact values next time. A
    /// result without warnings is returned unchanged, and so is a refused
    /// call (its arguments were not accepted; its text already says what
    /// to correct). (By default warnings are only on the result and in the
    /// `tracing` log.) At most 20 changes are listed, then how many more.
    pub fn with_warnings_shown(mut self) -> Self {
        if !self.warnings.is_empty() && self.outcome() != Outcome::InvalidArguments {
            let mut text = format!("Note: the arguments of `{}` were accepted after changes:\n", self.tool);
            for warning in self.warnings.iter().take(LISTED_PROBLEMS) {
                let _ = writeln!(text, "- {warning}");
            }
            if self.warnings.len() > LISTED_PROBLEMS {
                let _ = writeln!(text, "- and {} more changes.", self.warnings.len() - LISTED_PROBLEMS);
            }
            text.push_str("Send values of the declared types next time.");
            self.content.push(Content::text(text));
        }
        self
    }

    #[cfg(test)]
    fn with_text_cut(mut self, max: usize) -> Self {
        self.cut_text(max);
        self
    }

    /// Cuts the text a model reads to at most `max` bytes in all: the text
    /// blocks, and the `text/*` documents that the provider formats send
    /// as their decoded text. The block that crosses the limit is cut,
    /// with one marker saying how many bytes were left out in all, and the
    /// text after it is left out. Other blocks and the structured content
    /// are kept as they are; the structured content keeps `max` as its
    /// limit, for the formats that would send it to judge
    /// ([`ToolResult::structured_too_long`]).
    ///
    /// A result cut before (a call's result a caller passes on) is cut
    /// again only to a lower limit, its marker then counting what the
    /// first cut left out too.
    pub(crate) fn cut_text(&mut self, max: usize) {
        let limit = self.structured_limit.map_or(max, |limit| limit.min(max));
        self.structured_limit = self.structured_content.is_some().then_some(limit);
        let earlier = match self.cut {
            // Within the limit, but for its marker.
            Some(cut) if cut.max <= max => return,
            Some(cut) => self.take_marker(cut.left_out),
            None => 0,
        };
        let mut left = max;
        let mut crossing = None;
        for (index, block) in self.content.iter().enumerate() {
            if let Some(len) = block.text_len() {
                if len > left {
                    crossing = Some(index);
                    break;
                }
                left -= len;
            }
        }
        let left_out = match crossing {
            Some(crossing) => self.cut_from(crossing, left, earlier),
            // What the earlier cut kept fits: its marker goes back.
            None if earlier > 0 => self.mark_end(earlier),
            None => return,
        };
        self.cut = Some(Cut { max, left_out });
    }

    /// Cuts the text of the block at `crossing` to `left` bytes and leaves
    /// out the text after it, with one marker for all that counts the
    /// `earlier` bytes an earlier cut left out too; says how many bytes
    /// the marker counts.
    #[cold]
    fn cut_from(&mut self, crossing: usize, left: usize, earlier: usize) -> usize {
        let rest = self.content.split_off(crossing + 1);
        let later: usize = rest.iter().filter_map(Content::text_len).sum::<usize>() + earlier;
        self.content
            .extend(rest.into_iter().filter(|block| block.text_len().is_none()));
        let mut left_out = later;
        self.content[crossing].edit_text(|text| {
            truncate_with(text, left, |cut| {
                left_out = cut + later;
                cut_marker(left_out)
            });
        });
        left_out
    }

    /// Takes the marker of an earlier cut that left out `left_out` bytes
    /// off the end of the last block of text; says how many bytes it
    /// counted.
    #[cold]
    fn take_marker(&mut self, left_out: usize) -> usize {
        let marker = cut_marker(left_out);
        if let Some(block) = self.last_text_block() {
            block.edit_text(|text| {
                if text.ends_with(&marker) {
                    text.truncate(text.len() - marker.len());
                }
            });
        }
        self.cut = None;
        left_out
    }

    /// Puts the marker of a cut that left out `left_out` bytes at the end
    /// of the last block of text.
    #[cold]
    fn mark_end(&mut self, left_out: usize) -> usize {
        if let Some(block) = self.last_text_block() {
            block.edit_text(|text| text.push_str(&cut_marker(left_out)));
        }
        left_out
    }

    fn last_text_block(&mut self) -> Option<&mut Content> {
        self.content.iter_mut().rev().find(|block| block.text_len().is_some())
    }

    /// Whether the text was cut to the registry's output limit.
    pub(crate) fn text_cut(&self) -> bool {
        self.cut.is_some()
    }

    /// Whether the structured content's JSON is longer than the registry's
    /// output limit.
    pub(crate) fn structured_too_long(&self) -> bool {
        match (&self.structured_content, self.structured_limit) {
            (Some(structured), Some(max)) => json_longer_than(structured, max),
            _ => false,
        }
    }

    /// Checks the structured content against `shape`, the tool's output
    /// type, for a `null` its schema refuses (see
    /// [`ToolResult::null_refused_at`]).
    pub(crate) fn check_structured(&mut self, shape: &Shape) {
        if let Some(structured) = &self.structured_content {
            self.null_refused_at = shape.refused_null(structured).map(Into::into);
        }
    }

    /// Where the structured content holds a `null` that the tool's output
    /// schema refuses, as a path.
    pub(crate) fn null_refused_at(&self) -> Option<&str> {
        self.null_refused_at.as_deref()
    }

    /// The text blocks joined by newlines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self.content.iter().filter_map(Content::as_text).collect();
        texts.join("\n")
    }

    /// The errors as `code:path` strings.
    pub fn error_codes(&self) -> Vec<String> {
        self.errors.iter().map(CallError::code_path).collect()
    }

    /// The warnings as `code:path` strings.
    pub fn warning_codes(&self) -> Vec<String> {
        self.warnings.iter().map(Warning::code_path).collect()
    }
}

/// Whether `value` written as JSON takes more than `max` bytes. Writing
/// stops once it does, so a huge value costs no more than `max` bytes.
fn json_longer_than(value: &Value, max: usize) -> bool {
    struct Budget(usize);
    impl std::io::Write for Budget {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 = self
                .0
                .checked_sub(bytes.len())
                .ok_or_else(|| std::io::Error::other("over the limit"))?;
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    // Writing a `Value` fails only when the budget runs out.
    serde_json::to_writer(Budget(max), value).is_err()
}

/// The most problems the text of a refused call lists.
pub(crate) const LISTED_PROBLEMS: usize = 20;
/// The most ignored keys the text of a refused call lists.
const LISTED_IGNORED_KEYS: usize = 10;
/// The most bytes of one listed problem or key.
const LINE_BYTES: usize = 240;
/// The most bytes of the text of a refused call (SPEC section 11).
pub(crate) const REFUSAL_TEXT_BYTES: usize = 8 * 1024;

/// The text a model reads when its arguments were refused: at most
/// [`LISTED_PROBLEMS`] problems, then the keys that were ignored (at most
/// [`LISTED_IGNORED_KEYS`], each with the closest parameter name, since a
/// misspelt key is usually why a parameter is missing), each line cut to
/// [`LINE_BYTES`], the whole at most [`REFUSAL_TEXT_BYTES`].
pub(crate) fn invalid_arguments_text(tool: &str, report: &Report) -> String {
    // Each line is written straight into the text, then cut to its bound:
    // `- code:path: detail`.
    let line = |text: &mut String, code: &str, path: &str, detail: &str| {
        let start = text.len();
        text.push_str("- ");
        text.push_str(code);
        if !path.is_empty() {
            text.push(':');
            text.push_str(path);
        }
        text.push_str(": ");
        text.push_str(detail);
        if text.len() - start > LINE_BYTES {
            let mut cut = start + LINE_BYTES;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            text.push_str("...");
        }
        text.push('\n');
    };
    let total = report.error_count();
    // Room for a common refusal at once; a long one grows.
    let mut text = String::with_capacity(512);
    text.push_str("The tool `");
    text.push_str(tool);
    match total {
        1 => text.push_str("` was not run: its arguments have 1 problem.\n"),
        n => {
            text.push_str("` was not run: its arguments have ");
            write_integer(&mut text, n as i128);
            text.push_str(" problems.\n");
        }
    }
    for error in report.errors.iter().take(LISTED_PROBLEMS) {
        line(&mut text, error.code.as_str(), &error.path, &error.detail);
    }
    if total > LISTED_PROBLEMS {
        let _ = writeln!(text, "- and {} more problems.", total - LISTED_PROBLEMS);
    }
    let ignored: Vec<&Warning> = report.warnings.iter().filter(|w| w.is_ignored_key()).collect();
    if !ignored.is_empty() {
        text.push_str("These keys were ignored, as they are no parameters:\n");
        for warning in ignored.iter().take(LISTED_IGNORED_KEYS) {
            line(&mut text, warning.code.as_str(), &warning.path, &warning.detail);
        }
        if ignored.len() > LISTED_IGNORED_KEYS || report.omitted_ignored > 0 {
            text.push_str("- and more.\n");
        }
    }
    let closing = ["Correct the arguments and call `", tool, "` again."];
    let closing_len: usize = closing.iter().map(|piece| piece.len()).sum();
    truncate_with(&mut text, REFUSAL_TEXT_BYTES - closing_len - 4, |_| "...\n".to_owned());
    for piece in closing {
        text.push_str(piece);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::WarningCode;

    #[test]
    fn unknown_tool_suggests_the_closest_name() {
        let names = ["search_files", "read_file", "write_file"];
        let result = ToolResult::unknown_tool("serch_files", None, names.iter().copied());
        assert!(result.is_error);
        assert_eq!(result.error_codes(), ["unknown_tool:serch_files"]);
        let text = result.text();
        assert!(text.contains("Did you mean `search_files`?"), "{text}");
        assert!(text.contains("`read_file`, `write_file`"), "{text}");
    }

    #[test]
    fn warnings_are_shown_only_when_asked() {
        let mut result = ToolResult::new("t", None, ToolOutput::text("42"));
        result.warnings.push(Warning::new(
            WarningCode::StringConvertedToInteger,
            "n",
            "the string \"42\" was converted to the integer 42",
        ));
        assert_eq!(result.text(), "42");
        let shown = result.with_warnings_shown();
        assert_eq!(shown.content.len(), 2);
        let note = shown.content[1].as_text().unwrap();
        assert!(
            note.contains("- string_literal_converted_to_integer:n: the string \"42\""),
            "{note}"
        );
    }

    #[test]
    fn shown_warnings_are_listed_up_to_twenty() {
        let mut result = ToolResult::new("t", None, ToolOutput::text("ok"));
        for i in 0..150 {
            let detail = format!("key {i} was read loosely");
            result
                .warnings
                .push(Warning::new(WarningCode::ParameterNameNormalized, "p", detail));
        }
        let note = result
            .with_warnings_shown()
            .content
            .pop()
            .and_then(|c| c.as_text().map(str::to_owned));
        let note = note.expect("a note");
        assert_eq!(note.lines().filter(|l| l.starts_with("- parameter_name")).count(), 20);
        assert!(note.contains("- and 130 more changes."), "{note}");
    }

    #[test]
    fn a_huge_unknown_name_is_cut_and_not_searched_for() {
        let name = "x".repeat(10 << 20);
        let names: Vec<String> = (0..200).map(|i| format!("tool_{i}")).collect();
        let result = ToolResult::unknown_tool(&name, None, names.iter().map(String::as_str));
        let text = result.text();
        assert!(text.len() < 4000, "{} bytes", text.len());
        assert!(text.ends_with("and 100 more. Call one of them instead."), "{text}");
        assert!(text.contains("characters in all"), "{text}");
        assert!(!text.contains("Did you mean"), "{text}");
        assert!(result.tool().len() < 200 && result.errors[0].path.len() < 200);
        assert!(result.errors[0].detail.len() < 200);
    }

    #[test]
    fn text_is_cut_with_a_marker_saying_how_much_was_left_out() {
        let result = ToolResult::new("t", None, ToolOutput::text("é".repeat(100)));
        let cut = result.clone().with_text_cut(101);
        let text = cut.text();
        assert!(text.starts_with(&"é".repeat(50)), "{text}");
        assert!(text.ends_with("[output cut here: 100 more bytes left out]"), "{text}");
        assert_eq!(result.clone().with_text_cut(200), result);
    }

    /// A result cut before, passed on to be cut again (an agent's caller
    /// runs a deferred call and hands its result back): the same limit
    /// leaves it as it is, and a lower one counts both cuts' bytes.
    #[test]
    fn a_result_cut_again_keeps_counting_what_the_first_cut_left_out() {
        let mut output = ToolOutput::text("a".repeat(1_000));
        output.content.push(Content::text("b".repeat(500)));
        let cut = ToolResult::new("t", None, output).with_text_cut(100);
        let marker = "\n[output cut here: 1400 more bytes left out]";
        assert_eq!(cut.text(), format!("{}{marker}", "a".repeat(100)));
        assert_eq!(cut.clone().with_text_cut(100), cut);
        assert_eq!(cut.clone().with_text_cut(1_000), cut);
        let lower = cut.clone().with_text_cut(40);
        assert_eq!(
            lower.text(),
            format!("{}\n[output cut here: 1460 more bytes left out]", "a".repeat(40))
        );
        assert_eq!(lower.clone().with_text_cut(40), lower);

        // A text document is cut again as its text.
        let document = ToolOutput {
            content: vec![Content::document(&[b'd'; 300], "text/plain", None)],
            ..ToolOutput::default()
        };
        let cut = ToolResult::new("t", None, document)
            .with_text_cut(100)
            .with_text_cut(50);
        assert_eq!(
            cut.content[0].document_text().unwrap(),
            format!("{}\n[output cut here: 250 more bytes left out]", "d".repeat(50))
        );
    }

    #[test]
    fn many_text_blocks_are_cut_once_with_one_marker_counting_all_left_out() {
        let mut output = ToolOutput::text("a".repeat(60));
        for _ in 0..1_000 {
            output.content.push(Content::text("b".repeat(10)));
        }
        output.content.push(Content::image(b"png", "image/png"));
        let result = ToolResult::new("t", None, output);
        let cut = result.with_text_cut(100);
        let texts: Vec<&str> = cut.content.iter().filter_map(Content::as_text).collect();
        // 60 + 4 blocks of 10 fit; the fifth is cut to nothing, and the
        // 995 after it are left out with it: 9,960 bytes.
        assert_eq!(texts.len(), 6, "{texts:?}");
        assert_eq!(texts[5], "\n[output cut here: 9960 more bytes left out]");
        assert_eq!(cut.content.len(), 7, "the image is kept");
        assert!(cut.text_cut());
    }

    #[test]
    fn text_documents_count_toward_the_cut_as_the_text_they_are_sent_as() {
        let title = Some("notes.md".to_owned());
        let mut output = ToolOutput::text("a".repeat(60));
        output
            .content
            .push(Content::document(&[b'b'; 100], "text/markdown", title.clone()));
        output.content.push(Content::text("c".repeat(10)));
        output.content.push(Content::image(b"png", "image/png"));
        output.content.push(Content::document(&[b'd'; 10], "text/plain", None));
        let result = ToolResult::new("t", None, output);
        assert_eq!(result.clone().with_text_cut(180), result, "180 bytes fit");
        let cut = result.with_text_cut(100);
        // 60 bytes of text, then 40 of the document's 100; the 20 bytes
        // after it are left out with the document's other 60.
        assert_eq!(cut.content.len(), 3, "{:?}", cut.content);
        assert_eq!(cut.content[0].as_text(), Some("a".repeat(60).as_str()));
        let Content::Document {
            mime_type, title: kept, ..
        } = &cut.content[1]
        else {
            panic!("{:?}", cut.content[1]);
        };
        assert_eq!((mime_type.as_str(), kept), ("text/markdown", &title));
        assert_eq!(
            cut.content[1].document_text().unwrap(),
            format!("{}\n[output cut here: 80 more bytes left out]", "b".repeat(40))
        );
        assert!(matches!(cut.content[2], Content::Image { .. }), "the image is kept");
        assert!(cut.text_cut());
    }

    #[test]
    fn structured_content_longer_than_the_limit_is_marked() {
        let mut output = ToolOutput::text("done");
        output.structured_content = Some(serde_json::json!({"rows": "x".repeat(1_000)}));
        let result = ToolResult::new("t", None, output);
        let cut = result.clone().with_text_cut(100);
        assert!(!cut.text_cut() && cut.structured_too_long());
        assert_eq!(cut.content, result.content, "the text itself fits");
        assert!(!result.with_text_cut(2_000).structured_too_long());
    }

    #[test]
    fn a_refused_call_never_says_its_arguments_were_accepted() {
        let report = Report {
            errors: vec![CallError::new(ErrorCode::OutOfRange, "page", "expected at most 10")],
            warnings: vec![Warning::new(WarningCode::UnknownParameter, "x", "ignored")],
            ..Report::default()
        };
        let refused = ToolResult::invalid_arguments("t", None, report);
        let shown = refused.clone().with_warnings_shown();
        assert_eq!(shown, refused);
        assert!(!shown.text().contains("accepted after changes"), "{}", shown.text());
    }

    #[test]
    fn no_suggestion_for_an_unrelated_name() {
        let result = ToolResult::unknown_tool("launch_rocket", None, ["read_file"].into_iter());
        assert!(!result.text().contains("Did you mean"));
    }
}
