//! Compile-time checks of `#[tool]` and `#[derive(ToolParam)]`: what must
//! build and run (`ui/pass`), and what must fail with the error and span
//! recorded in each `.stderr` (`ui/fail`, one misuse a file).
//!
//! After a deliberate change to a diagnostic, regenerate with
//! `TRYBUILD=overwrite cargo test --test ui` and review `git diff tests/ui`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
