//! Text from a model or a tool made safe to print, for the `agent` example;
//! the REPL does the same to what it shows.

use std::borrow::Cow;

/// `text` with its control characters other than newline and tab escaped
/// (`\u{1b}`, `\r`), and the characters that end a line or reorder one
/// (U+2028, U+202E, ...), so what a model or a tool sends can neither clear
/// the screen, set the clipboard nor rewrite what was shown.
pub fn escaped(text: &str) -> Cow<'_, str> {
    let breaks = |c: char| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
    };
    if !text.contains(breaks) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if breaks(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}
