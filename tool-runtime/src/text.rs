//! Small text helpers the layers above share: the closest name to a typo,
//! and the message of a caught panic.

use std::any::Any;
use std::borrow::Cow;

/// The most characters of a value, key or name the model sent that any
/// answer quotes (SPEC section 11).
pub(crate) const QUOTE_CHARS: usize = 64;

/// `s` cut to [`QUOTE_CHARS`] characters, with a marker saying how long it
/// was, and its control characters escaped (`\n`, `\u{1}`), so what the
/// model sent can neither run long nor start a line of its own in an
/// answer; `s` itself when it is short and plain.
pub(crate) fn clip(s: &str) -> Cow<'_, str> {
    clip_at(s, QUOTE_CHARS)
}

/// [`clip`] at `max` characters: for a longer text from elsewhere, such as
/// a peer's error message.
pub(crate) fn clip_at(s: &str, max: usize) -> Cow<'_, str> {
    let cut = s.char_indices().nth(max).map(|(cut, _)| cut);
    let kept = &s[..cut.unwrap_or(s.len())];
    let kept: Cow<'_, str> = if kept.contains(breaks_text) {
        Cow::Owned(
            kept.chars()
                .map(|c| {
                    if breaks_text(c) {
                        c.escape_default().to_string()
                    } else {
                        c.to_string()
                    }
                })
                .collect(),
        )
    } else {
        Cow::Borrowed(kept)
    };
    match cut {
        None => kept,
        Some(_) => Cow::Owned(format!("{kept}...(cut, {} characters in all)", s.chars().count())),
    }
}

/// A character that would break a quote out of its line or reorder the
/// text around it on display: control characters, the Unicode line and
/// paragraph separators, and the bidirectional embeddings, overrides and
/// isolates.
pub(crate) fn breaks_text(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `text` cut to at most `max` bytes at a character boundary, with `marker`
/// (given the number of bytes left out) appended; `text` unchanged when it fits.
pub(crate) fn truncate_with(text: &mut String, max: usize, marker: impl FnOnce(usize) -> String) {
    if text.len() <= max {
        return;
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let left_out = text.len() - cut;
    text.truncate(cut);
    text.push_str(&marker(left_out));
}

/// The candidate closest to `name` by edit distance, if any is close enough
/// to be a plausible typo, or one holds the other (`noteId` sent for `id`):
/// the nearest such candidate, one that holds or is held by `name` first
/// among equals. Letter case is ignored.
/// A name longer than [`QUOTE_CHARS`] is no typo of a tool or parameter
/// name (those are at most 64 characters) and is not searched for, nor is a
/// candidate longer than four times that suggested; a candidate whose length
/// alone puts it further than the best so far is not measured.
pub(crate) fn closest_name<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    if name.len() > QUOTE_CHARS * 4 || name.chars().count() > QUOTE_CHARS {
        return None;
    }
    let lower = name.to_lowercase();
    let length = lower.chars().count();
    let close = length.max(3) / 2;
    // (candidate, distance, one holds the other)
    let mut best: Option<(&str, usize, bool)> = None;
    for candidate in candidates.filter(|c| c.len() <= QUOTE_CHARS * 4) {
        let candidate_lower = candidate.to_lowercase();
        let candidate_length = candidate_lower.chars().count();
        // The distance is at least the difference in length.
        if best.is_some_and(|(_, d, _)| candidate_length.abs_diff(length) > d) {
            continue;
        }
        let holds =
            length.min(candidate_length) >= 2 && (candidate_lower.contains(&lower) || lower.contains(&candidate_lower));
        let distance = edit_distance(&lower, &candidate_lower);
        if distance > close && !holds {
            continue;
        }
        let nearer = best.is_none_or(|(_, d, h)| distance < d || (distance == d && holds && !h));
        if nearer {
            best = Some((candidate, distance, holds));
        }
    }
    best.map(|(candidate, _, _)| candidate)
}

pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(previous + 1);
        }
    }
    row[b.len()]
}

/// The message a panic was raised with.
pub(crate) fn panic_message(panic: &(dyn Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_held_in_the_key_sent_is_suggested_whatever_comes_first() {
        for params in [["name", "id"], ["text", "id"], ["id", "name"]] {
            assert_eq!(closest_name("noteId", params.into_iter()), Some("id"), "{params:?}");
        }
        assert_eq!(
            closest_name("pattren", ["root", "pattern"].into_iter()),
            Some("pattern")
        );
        assert_eq!(closest_name("data", ["a", "zzzz"].into_iter()), None);
    }

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }

    #[test]
    fn clip_cuts_long_text_with_a_marker() {
        assert_eq!(clip("short"), "short");
        let long = "x".repeat(1 << 20);
        let clipped = clip(&long);
        assert!(clipped.starts_with(&"x".repeat(QUOTE_CHARS)), "{clipped}");
        assert!(clipped.ends_with("...(cut, 1048576 characters in all)"), "{clipped}");
        assert!(clipped.len() < 120);
    }

    #[test]
    fn clip_escapes_control_characters_so_no_quote_starts_a_line() {
        assert_eq!(clip("a\nb\u{1}"), "a\\nb\\u{1}");
        let long = "\n".repeat(100);
        let clipped = clip(&long);
        assert!(!clipped.contains('\n'), "{clipped}");
        assert!(clipped.ends_with("...(cut, 100 characters in all)"), "{clipped}");
    }

    #[test]
    fn clip_escapes_line_separators_and_bidirectional_controls() {
        assert_eq!(clip("a\u{2028}b\u{2029}c"), "a\\u{2028}b\\u{2029}c");
        assert_eq!(clip("\u{202E}txt.exe\u{2066}"), "\\u{202e}txt.exe\\u{2066}");
        assert_eq!(clip("caf\u{e9} \u{1F600}"), "caf\u{e9} \u{1F600}");
    }

    #[test]
    fn no_closest_name_is_searched_for_a_name_past_64_characters() {
        let long = "read_file".repeat(8);
        assert_eq!(closest_name(&long, ["read_file"].into_iter()), None);
        assert_eq!(closest_name("read_fil", ["read_file"].into_iter()), Some("read_file"));
    }
}
