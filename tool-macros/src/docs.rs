//! Reading descriptions out of doc comments.
//!
//! The description is the doc text before the first heading (`# `, `## `,
//! ...). A rustdoc `# Arguments` section describes parameters, one list
//! item each:
//!
//! ```text
//! # Arguments
//!
//! * `pattern` - Glob pattern such as `**/*.rs`
//! * `root` - Only search below this folder;
//!   continued lines are joined.
//! ```

use std::collections::BTreeMap;

use proc_macro2::Span;
use syn::spanned::Spanned;

/// What a doc comment says.
#[derive(Debug, Default)]
pub struct Docs {
    /// The text before the first heading, paragraphs separated by a blank line.
    pub description: Option<String>,
    /// Descriptions from the `# Arguments` section, by name.
    pub arguments: BTreeMap<String, String>,
    /// Where each `# Arguments` entry is written: its doc line (a `///`
    /// line is an attribute of its own; a block comment is one for all).
    pub argument_spans: BTreeMap<String, Span>,
    /// `#[doc = ...]` values that are no string literal (`include_str!(...)`,
    /// `concat!(...)`): a macro sees them unexpanded and cannot read them.
    /// Each value's tokens, for the error at it, and what it is.
    pub unread: Vec<(proc_macro2::TokenStream, String)>,
}

/// The `#[doc = EXPR]` attributes whose value is no string literal, with
/// what they are (`include_str!`), for the error that they go unread.
fn unread_docs(attrs: &[syn::Attribute]) -> Vec<(proc_macro2::TokenStream, String)> {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("doc"))
        .filter_map(|attr| match &attr.meta {
            syn::Meta::NameValue(nv) => Some(&nv.value),
            _ => None,
        })
        .filter(|value| {
            !matches!(
                value,
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(_),
                    ..
                })
            )
        })
        .map(|value| {
            let what = match value {
                syn::Expr::Macro(mac) => {
                    let path = &mac.mac.path;
                    format!("`{}!(...)`", quote::quote!(#path).to_string().replace(' ', ""))
                }
                _ => "this expression".to_owned(),
            };
            (quote::quote!(#value), what)
        })
        .collect()
}

/// The doc comment's lines, one leading space stripped from each.
#[cfg(test)]
pub fn doc_lines(attrs: &[syn::Attribute]) -> Vec<String> {
    spanned_doc_lines(attrs).into_iter().map(|(line, _)| line).collect()
}

/// The doc comment's lines, each with the span of the attribute it is in.
fn spanned_doc_lines(attrs: &[syn::Attribute]) -> Vec<(String, Span)> {
    let mut lines = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &attr.meta
            && let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s), ..
            }) = &nv.value
        {
            let text = s.value();
            if text.contains('\n') {
                // A block comment (`/** ... */`), read as rustdoc reads it.
                lines.extend(block_lines(&text).into_iter().map(|line| (line, attr.span())));
                continue;
            }
            lines.push((
                text.strip_prefix(' ').unwrap_or(&text).trim_end().to_owned(),
                attr.span(),
            ));
        }
    }
    lines
}

/// The lines of a block doc comment as rustdoc reads them: when every line
/// with text starts with `*` (after spaces), that `*` is no text; then the
/// indentation the lines with text share is stripped.
fn block_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<&str> = text.split('\n').collect();
    let has_text = |line: &str| !line.trim().is_empty();
    if lines
        .iter()
        .filter(|line| has_text(line))
        .all(|line| line.trim_start().starts_with('*'))
    {
        for line in lines.iter_mut().filter(|line| has_text(line)) {
            *line = &line.trim_start()[1..];
        }
    }
    let indent = lines
        .iter()
        .filter(|line| has_text(line))
        .map(|line| line.len() - line.trim_start().len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|line| line.get(indent..).unwrap_or("").trim_end().to_owned())
        .collect()
}

/// Parses the doc comment of `attrs`.
pub fn parse(attrs: &[syn::Attribute]) -> Docs {
    let (lines, spans): (Vec<String>, Vec<Span>) = spanned_doc_lines(attrs).into_iter().unzip();
    Docs {
        unread: unread_docs(attrs),
        ..parse_spanned(&lines, &spans)
    }
}

#[cfg(test)]
fn parse_lines(lines: &[String]) -> Docs {
    parse_spanned(lines, &vec![Span::call_site(); lines.len()])
}

/// Parses `lines`, `spans[i]` being where line `i` is written.
fn parse_spanned(lines: &[String], spans: &[Span]) -> Docs {
    let mut docs = Docs::default();
    /// A Markdown heading's title: one to six `#` and a space, indented
    /// less than a code block is (`## Arguments`, `# Arguments:`).
    fn heading(line: &str) -> Option<&str> {
        let text = line.trim_start();
        if line.len() - text.len() >= 4 {
            return None;
        }
        let level = text.len() - text.trim_start_matches('#').len();
        if !(1..=6).contains(&level) {
            return None;
        }
        let title = text[level..].strip_prefix(' ')?.trim();
        Some(title.trim_end_matches('#').trim_end().trim_end_matches(':').trim_end())
    }
    // A `# ` line inside a fenced code block is code, not a heading.
    let mut fenced = false;
    let headings: Vec<bool> = lines
        .iter()
        .map(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced && heading(line).is_some()
        })
        .collect();
    let intro_end = headings.iter().position(|h| *h).unwrap_or(lines.len());
    docs.description = join_paragraphs(&lines[..intro_end]);

    let mut in_arguments = false;
    let mut current: Option<String> = None;
    // The indentation of the section's entries: an item indented deeper is
    // part of the entry above it (`- \`exact\` - ...` under `mode`).
    let mut entry_indent: Option<usize> = None;
    let rest = lines[intro_end..]
        .iter()
        .zip(&headings[intro_end..])
        .zip(&spans[intro_end..]);
    for ((line, is_heading), span) in rest {
        if *is_heading && let Some(title) = heading(line) {
            in_arguments = title.eq_ignore_ascii_case("arguments") || title.eq_ignore_ascii_case("parameters");
            current = None;
            entry_indent = None;
            continue;
        }
        if !in_arguments {
            continue;
        }
        let trimmed = line.trim();
        let indent = line.len() - line.trim_start().len();
        let nested = current.is_some() && entry_indent.is_some_and(|entry| indent > entry);
        if let Some((name, text)) = list_item(trimmed).filter(|_| !nested) {
            entry_indent.get_or_insert(indent);
            docs.arguments.insert(name.clone(), text);
            docs.argument_spans.insert(name.clone(), *span);
            current = Some(name);
        } else if trimmed.is_empty() {
            current = None;
        } else if let Some(name) = &current
            && let Some(text) = docs.arguments.get_mut(name)
        {
            text.push(' ');
            text.push_str(trimmed);
        }
    }
    docs
}

/// `* `name` - text`, `- name: text` and the like.
fn list_item(line: &str) -> Option<(String, String)> {
    let rest = line
        .strip_prefix("* ")
        .or_else(|| line.strip_prefix("- "))?
        .trim_start();
    let (name, after) = match rest.strip_prefix('`') {
        Some(quoted) => {
            let end = quoted.find('`')?;
            (&quoted[..end], &quoted[end + 1..])
        }
        None => {
            let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
            (&rest[..end], &rest[end..])
        }
    };
    let text = after
        .trim_start()
        .strip_prefix("- ")
        .or_else(|| after.trim_start().strip_prefix(':'))
        .or_else(|| after.trim_start().strip_prefix("--"))?
        .trim();
    (!name.is_empty() && !text.is_empty()).then(|| (name.to_owned(), text.to_owned()))
}

/// Joins lines into paragraphs: lines of a paragraph with a space, paragraphs
/// with a blank line. `None` when there is no text.
pub fn join_paragraphs(lines: &[String]) -> Option<String> {
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in lines {
        let line = line.trim();
        if line.is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
        } else {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(line);
        }
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    (!paragraphs.is_empty()).then(|| paragraphs.join("\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_owned).collect()
    }

    #[test]
    fn description_is_the_text_before_the_first_heading() {
        let docs = parse_lines(&lines(
            "Search the workspace.\n\nUse it to find files\nby name.\n\n# Errors\n\nNever.",
        ));
        assert_eq!(
            docs.description.as_deref(),
            Some("Search the workspace.\n\nUse it to find files by name.")
        );
        assert!(docs.arguments.is_empty());
    }

    #[test]
    fn headings_of_any_level_count_and_code_does_not() {
        let docs = parse_lines(&lines(
            "Find files.

    # not a heading: indented code

## Arguments:

* `pattern` - Glob

## Errors ##

* `x` - not an argument",
        ));
        assert_eq!(
            docs.description.as_deref(),
            Some(
                "Find files.

# not a heading: indented code"
            )
        );
        assert_eq!(docs.arguments.keys().collect::<Vec<_>>(), ["pattern"]);
        assert_eq!(
            parse_lines(&lines(
                "Text.

#hashtag"
            ))
            .description
            .as_deref(),
            Some(
                "Text.

#hashtag"
            )
        );
        assert_eq!(
            parse_lines(&lines(
                "Text.

####### seven"
            ))
            .description
            .as_deref(),
            Some(
                "Text.

####### seven"
            )
        );
    }

    #[test]
    fn arguments_section_describes_parameters() {
        let docs = parse_lines(&lines(
            "Find files.\n\n# Arguments\n\n* `pattern` - Glob pattern such as `**/*.rs`\n* `root` - Only search\n  below this folder\n- limit: At most this many\n\n# Examples\n* `x` - not an argument",
        ));
        assert_eq!(docs.arguments["pattern"], "Glob pattern such as `**/*.rs`");
        assert_eq!(docs.arguments["root"], "Only search below this folder");
        assert_eq!(docs.arguments["limit"], "At most this many");
        assert!(!docs.arguments.contains_key("x"));
    }

    #[test]
    fn a_list_nested_in_an_entry_is_part_of_it() {
        let docs = parse_lines(&lines(
            "Find.\n\n# Arguments\n\n * `mode` - How to search:\n   - `exact` - as written\n   - `fuzzy` - close names too\n * `query` - What to find",
        ));
        assert_eq!(
            docs.arguments["mode"],
            "How to search: - `exact` - as written - `fuzzy` - close names too"
        );
        assert_eq!(docs.arguments["query"], "What to find");
        assert_eq!(docs.arguments.len(), 2, "{:?}", docs.arguments);
    }

    #[test]
    fn a_block_doc_comment_is_read_without_its_stars() {
        for doc in [
            "\n * Search files.\n *\n * # Arguments\n *\n * * `pattern` - Glob\n ",
            "\n    Search files.\n\n    # Arguments\n\n    * `pattern` - Glob\n",
        ] {
            let attr: syn::Attribute = syn::parse_quote!(#[doc = #doc]);
            let docs = parse(&[attr]);
            assert_eq!(docs.description.as_deref(), Some("Search files."), "{doc:?}");
            assert_eq!(docs.arguments["pattern"], "Glob", "{doc:?}");
        }
    }

    #[test]
    fn blank_doc_lines_separate_paragraphs() {
        let item: syn::ItemFn = syn::parse_quote! {
            /// First paragraph.
            ///
            /// Second paragraph.
            fn f() {}
        };
        assert_eq!(
            parse(&item.attrs).description.as_deref(),
            Some("First paragraph.\n\nSecond paragraph.")
        );
    }

    #[test]
    fn hash_lines_in_code_blocks_are_not_headings() {
        let docs = parse_lines(&lines(
            "Run a script.\n\n```sh\n# install first\nmake\n```\n\nThen check.\n\n# Errors\nNone.",
        ));
        assert_eq!(
            docs.description.as_deref(),
            Some("Run a script.\n\n```sh # install first make ```\n\nThen check.")
        );
    }

    #[test]
    fn empty_docs_have_no_description() {
        let docs = parse_lines(&[]);
        assert_eq!(docs.description, None);
        assert!(docs.arguments.is_empty());
    }

    #[test]
    fn docs_written_by_a_macro_are_reported_unread() {
        let item: syn::ItemFn = syn::parse_quote! {
            /// Read.
            #[doc = include_str!("tool.md")]
            #[doc = concat!("a", "b")]
            fn f() {}
        };
        let docs = parse(&item.attrs);
        assert_eq!(docs.description.as_deref(), Some("Read."));
        let unread: Vec<&str> = docs.unread.iter().map(|(_, what)| what.as_str()).collect();
        assert_eq!(unread, ["`include_str!(...)`", "`concat!(...)`"]);
    }

    #[test]
    fn each_argument_keeps_the_span_of_its_line() {
        let item: syn::ItemFn = syn::parse_quote! {
            /// Find files.
            ///
            /// # Arguments
            ///
            /// * `pattern` - Glob pattern
            /// * `root` - Only below this folder
            fn f() {}
        };
        let docs = parse(&item.attrs);
        assert_eq!(docs.argument_spans.keys().collect::<Vec<_>>(), ["pattern", "root"]);
    }
}
