//! Built-in applications.
