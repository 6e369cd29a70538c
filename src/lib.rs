//! End-to-end tests and examples of the tool workspace live in tests/ and examples/.
