//! Where the function under `#[tool]` sits. An attribute macro sees only
//! its item, not what surrounds it; but `#[tool]` adds a struct beside the
//! function, which an `impl` block cannot hold, so a tool written as an
//! associated function drowned in four unrelated errors. Reading the
//! function's own source file tells: when every function of that name
//! under a `tool` attribute in the file sits in an `impl` (or trait), the
//! one being expanded does too. When the file cannot be read or parsed, or
//! a free function has the same name, nothing is said and expansion goes on.
//!
//! Each file is read and indexed once per compilation, however many tools
//! it holds: the index is kept for the macro's later calls.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

use proc_macro2::{Span, TokenStream};
use quote::quote;

/// For each tool name in a file: how many such tools are free functions and
/// how many sit in an `impl` or trait.
pub type Index = HashMap<String, Found>;

thread_local! {
    /// Files already indexed in this compilation (`None`: unreadable).
    static INDEXED: RefCell<HashMap<PathBuf, Option<Rc<Index>>>> = RefCell::default();
}

/// The index of the file at `path`, read and parsed on first use.
pub fn file_index(path: PathBuf) -> Option<Rc<Index>> {
    INDEXED.with(|indexed| {
        indexed
            .borrow_mut()
            .entry(path)
            .or_insert_with_key(|path| {
                std::fs::read_to_string(path)
                    .ok()
                    .and_then(|text| index(&text))
                    .map(Rc::new)
            })
            .clone()
    })
}

/// The error and the function alone (no struct, no impl) when `function` is a
/// function without `self` that sits in an `impl` block; `None` otherwise.
/// `source` gives the index of the file a span comes from.
pub fn associated_fn(function: &syn::ItemFn, source: impl FnOnce(Span) -> Option<Rc<Index>>) -> Option<TokenStream> {
    if function.sig.receiver().is_some() {
        // `valid` reports `self` at the receiver.
        return None;
    }
    let name = &function.sig.ident;
    let index = source(name.span())?;
    if !placed_in_impl(&index, &crate::ast::unraw(name))? {
        return None;
    }
    let message = match crate::ast::struct_name(&crate::ast::unraw(name)) {
        Some(struct_name) => format!(
            "a tool is a free function: move `{name}` out of the `impl` block, to module level (#[tool] adds a struct `{struct_name}` beside it, which an `impl` cannot hold)"
        ),
        None => format!("a tool is a free function: move `{name}` out of the `impl` block, to module level"),
    };
    let error = syn::Error::new_spanned(name, message).to_compile_error();
    let function = crate::emit::stripped_fn(function);
    Some(quote!(#error #function))
}

/// Every function under a `tool` attribute in `source`, by name; `None`
/// when the file's brackets do not balance. A scan of the text, not a
/// parse: it runs once per file in the compiler's edit loop, where parsing
/// a whole file with `syn` (unoptimized, as proc macros build in debug)
/// cost more than the rest of `#[tool]` together. It reads words and
/// brackets, skipping comments, strings and character literals.
fn index(source: &str) -> Option<Index> {
    let mut index = Index::new();
    // One entry per open `{`: whether it is the body of an `impl` or trait.
    let mut blocks: Vec<bool> = Vec::new();
    let mut tool_attr = false; // a `tool` attribute waits for its `fn`
    let mut impl_next = false; // an `impl` or `trait` waits for its `{`
    let mut at_item = true; // the last token may end an item or attribute
    let mut lexer = Lexer {
        text: source.as_bytes(),
        at: 0,
    };
    while let Some(token) = lexer.next() {
        match token {
            Token::Word(word) => {
                match word {
                    "impl" if at_item => impl_next = true,
                    "trait" => impl_next = true,
                    "fn" => {
                        if let Some(Token::Word(name)) = lexer.next()
                            && std::mem::take(&mut tool_attr)
                        {
                            let found = index.entry(name.trim_start_matches("r#").to_owned()).or_default();
                            match blocks.last() {
                                Some(true) => found.associated += 1,
                                _ => found.free += 1,
                            }
                        }
                    }
                    _ => {}
                }
                at_item = matches!(word, "unsafe" | "default" | "pub" | "async" | "const" | "extern");
            }
            Token::Punct(b'#') => {
                if lexer.peek_punct(b'!') {
                    lexer.next();
                }
                if lexer.peek_punct(b'[') {
                    lexer.next();
                    tool_attr |= lexer.attribute_is_tool()?;
                    at_item = true;
                    continue;
                }
                at_item = false;
            }
            Token::Punct(b'{') => {
                blocks.push(std::mem::take(&mut impl_next));
                tool_attr = false;
                at_item = true;
            }
            Token::Punct(b'}') => {
                blocks.pop()?;
                tool_attr = false;
                impl_next = false;
                at_item = true;
            }
            Token::Punct(b';') => {
                tool_attr = false;
                impl_next = false;
                at_item = true;
            }
            Token::Punct(_) => at_item = false,
        }
    }
    blocks.is_empty().then_some(index)
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Token<'a> {
    /// An identifier or keyword (`r#` kept), or a number.
    Word(&'a str),
    /// Any other character outside comments and literals.
    Punct(u8),
}

struct Lexer<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Lexer<'a> {
    fn byte(&self, offset: usize) -> u8 {
        self.text.get(self.at + offset).copied().unwrap_or(0)
    }

    fn peek_punct(&mut self, punct: u8) -> bool {
        let saved = self.at;
        let next = self.next();
        self.at = saved;
        next == Some(Token::Punct(punct))
    }

    /// Reads an attribute after its `[` through the matching `]`: whether
    /// its path ends in `tool` (`tool`, `tool(...)`, `tool_runtime::tool`).
    /// `None` when the file ends first.
    fn attribute_is_tool(&mut self) -> Option<bool> {
        let mut last_word = None;
        let mut in_path = true;
        let mut depth = 1;
        while depth > 0 {
            match self.next()? {
                Token::Word(word) if in_path => last_word = Some(word),
                Token::Punct(b':') if in_path => {}
                Token::Punct(b'[' | b'(' | b'{') => {
                    in_path = false;
                    depth += 1;
                }
                Token::Punct(b']' | b')' | b'}') => depth -= 1,
                _ => in_path = false,
            }
        }
        Some(last_word == Some("tool"))
    }

    fn next(&mut self) -> Option<Token<'a>> {
        loop {
            let b = *self.text.get(self.at)?;
            match b {
                b if b.is_ascii_whitespace() => self.at += 1,
                b'/' if self.byte(1) == b'/' => {
                    while self.at < self.text.len() && self.text[self.at] != b'\n' {
                        self.at += 1;
                    }
                }
                b'/' if self.byte(1) == b'*' => self.block_comment(),
                b'"' => self.string(),
                b'\'' => self.quote(),
                b'r' if self.byte(1) == b'#' && is_word_start(self.byte(2)) => {
                    let start = self.at;
                    self.at += 2;
                    return Some(self.word(start));
                }
                b'r' if matches!(self.byte(1), b'"' | b'#') => self.raw_string(1),
                b'b' if self.byte(1) == b'r' && matches!(self.byte(2), b'"' | b'#') => self.raw_string(2),
                b'b' | b'c' if self.byte(1) == b'"' => {
                    self.at += 1;
                    self.string();
                }
                b'b' if self.byte(1) == b'\'' => {
                    self.at += 1;
                    self.quote();
                }
                b if is_word_start(b) || b.is_ascii_digit() => {
                    let start = self.at;
                    return Some(self.word(start));
                }
                _ => {
                    self.at += 1;
                    return Some(Token::Punct(b));
                }
            }
        }
    }

    fn word(&mut self, start: usize) -> Token<'a> {
        while self.at < self.text.len() && (is_word_start(self.text[self.at]) || self.text[self.at].is_ascii_digit()) {
            self.at += 1;
        }
        // Only ASCII and whole UTF-8 sequences were taken: valid `str`.
        Token::Word(std::str::from_utf8(&self.text[start..self.at]).unwrap_or(""))
    }

    fn block_comment(&mut self) {
        self.at += 2;
        let mut depth = 1;
        while depth > 0 && self.at < self.text.len() {
            if self.byte(0) == b'/' && self.byte(1) == b'*' {
                depth += 1;
                self.at += 2;
            } else if self.byte(0) == b'*' && self.byte(1) == b'/' {
                depth -= 1;
                self.at += 2;
            } else {
                self.at += 1;
            }
        }
    }

    /// A string from its opening `"` through the closing one.
    fn string(&mut self) {
        self.at += 1;
        while self.at < self.text.len() {
            match self.text[self.at] {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    return;
                }
                _ => self.at += 1,
            }
        }
    }

    /// `r"..."`, `r#"..."#`, `br"..."`: `prefix` letters, then hashes.
    fn raw_string(&mut self, prefix: usize) {
        self.at += prefix;
        let hashes = self.text[self.at..].iter().take_while(|b| **b == b'#').count();
        self.at += hashes;
        if self.byte(0) != b'"' {
            return;
        }
        self.at += 1;
        while self.at < self.text.len() {
            if self.text[self.at] == b'"'
                && self.text[self.at + 1..].iter().take_while(|b| **b == b'#').count() >= hashes
            {
                self.at += 1 + hashes;
                return;
            }
            self.at += 1;
        }
    }

    /// A character literal (`'x'`, `'\n'`, `'\''`, `'é'`), or the quote of
    /// a lifetime or label (`'a`), which leaves the name to be read as a word.
    fn quote(&mut self) {
        if self.byte(1) == b'\\' {
            // Past the quote, the backslash and the escaped character (a
            // quote or backslash itself, or the `u`, `x` of a longer escape),
            // then on to the closing quote.
            self.at += 3;
            while self.at < self.text.len() && self.text[self.at] != b'\'' {
                self.at += 1;
            }
            self.at += 1;
            return;
        }
        let width = match self.byte(1) {
            0..0x80 => 1,
            0xC0..0xE0 => 2,
            0xE0..0xF0 => 3,
            _ => 4,
        };
        self.at += if self.byte(1 + width) == b'\'' { 2 + width } else { 1 };
    }
}

/// Whether the functions named `name` under a `tool` attribute all sit in
/// an `impl` block or trait: `Some(true)`; `Some(false)` when one is free;
/// `None` when there is none.
fn placed_in_impl(index: &Index, name: &str) -> Option<bool> {
    let found = index.get(name)?;
    Some(found.free == 0)
}

#[derive(Default)]
pub struct Found {
    free: usize,
    associated: usize,
}

fn is_word_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_impl(source: &str, name: &str) -> Option<bool> {
        placed_in_impl(&index(source)?, name)
    }

    #[test]
    fn a_tool_in_an_impl_block_is_found() {
        let source = "struct Notes;\nimpl Notes {\n    /// Search.\n    #[tool]\n    async fn search(q: String) -> String { q }\n}\n";
        assert_eq!(in_impl(source, "search"), Some(true));
    }

    #[test]
    fn free_tools_are_left_alone() {
        let source = "#[tool]\nasync fn search(q: String) -> String { q }\nmod m { #[tool_runtime::tool] fn list() {} }\nfn main() { #[tool] fn local() {} }";
        assert_eq!(in_impl(source, "search"), Some(false));
        assert_eq!(in_impl(source, "list"), Some(false));
        assert_eq!(in_impl(source, "local"), Some(false));
        assert_eq!(in_impl(source, "missing"), None);
        assert_eq!(in_impl("not rust {", "search"), None);
    }

    #[test]
    fn comments_strings_and_characters_hide_their_brackets() {
        let source = r##"
            impl Notes {
                // a comment with { and fn
                /* a /* nested */ block comment } */
                const A: &str = "a string with } and \" and {";
                const B: &str = r#"a raw "} string"#;
                const C: char = '}';
                const D: u8 = b'{';
                fn lifetime<'a>(x: &'a str) -> &'a str { x }
                #[tool(strict)]
                async fn search(q: String) -> String { q }
            }
            #[tool_runtime::tool]
            fn list() -> impl Fn() { || {} }
            pub(crate) trait Shelf { #[tool] fn shelve(); }
            unsafe impl Send for Notes {}
            fn r#match() {}
        "##;
        assert_eq!(in_impl(source, "search"), Some(true));
        assert_eq!(in_impl(source, "list"), Some(false));
        assert_eq!(in_impl(source, "shelve"), Some(true));
        assert_eq!(in_impl(source, "lifetime"), None);
    }

    fn tokens(source: &str) -> Vec<Token<'_>> {
        let mut lexer = Lexer {
            text: source.as_bytes(),
            at: 0,
        };
        std::iter::from_fn(|| lexer.next()).collect()
    }

    #[test]
    fn escaped_character_literals_end_at_their_closing_quote() {
        // Each literal is followed by one holding a bracket: a literal read
        // short leaves its closing quote to swallow the next one's opening
        // quote, and the bracket is then read as code.
        for literal in [r"'\''", r"'\\'", r"'\u{1F600}'", r"b'\''", r"'\x7f'", r"'\n'"] {
            let source = format!("{literal} '{{' ; x");
            assert_eq!(tokens(&source), [Token::Punct(b';'), Token::Word("x")], "{source}");
        }
        // A lifetime or label is a quote and a word.
        assert_eq!(
            tokens("fn f<'a>(x: &'a str) { 'outer: loop {} }")
                .into_iter()
                .filter(|t| matches!(t, Token::Word(_)))
                .collect::<Vec<_>>(),
            ["fn", "f", "a", "x", "a", "str", "outer", "loop"].map(Token::Word)
        );
        let source = "impl Notes {\n    const Q: [char; 2] = ['\\'','\"'];\n    #[tool]\n    fn search() {}\n}\n#[tool]\nfn list() {}";
        assert_eq!(in_impl(source, "search"), Some(true));
        assert_eq!(in_impl(source, "list"), Some(false));
    }

    #[test]
    fn a_return_position_impl_is_no_impl_block() {
        let source = "#[tool]\nasync fn list() -> impl Serialize { impl Local {} ; #[tool] fn inner() {} }";
        assert_eq!(in_impl(source, "list"), Some(false));
        assert_eq!(in_impl(source, "inner"), Some(false));
    }

    #[test]
    fn a_free_tool_of_the_same_name_wins() {
        let source = "impl A { #[tool] fn search() {} }\n#[tool] fn search() {}";
        assert_eq!(in_impl(source, "search"), Some(false));
    }

    #[test]
    fn the_error_keeps_the_function() {
        let item: syn::ItemFn = syn::parse_quote!(
            /// Search.
            async fn search(#[param(description = "q")] q: String) -> String {
                q
            }
        );
        let source = "impl Notes { #[tool] async fn search(q: String) -> String { q } }";
        let out = associated_fn(&item, |_| index(source).map(Rc::new))
            .unwrap()
            .to_string();
        assert!(out.contains("a tool is a free function"), "{out}");
        assert!(out.contains("async fn search"), "{out}");
        assert!(!out.contains("param"), "{out}");
        assert!(associated_fn(&item, |_| None).is_none());
    }
}
