//! The workspace's own package: it owns `examples/` and `tests/`, and runs
//! the README's examples as doctests.
#![doc = include_str!("../README.md")]
