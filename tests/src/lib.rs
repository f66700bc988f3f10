//! Support for the cross-crate tests: the golden fixture tables and their generator.

pub mod fixtures;
