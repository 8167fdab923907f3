//! Cross-crate and end-to-end tests for dpinfer live in `tests/tests/`.
