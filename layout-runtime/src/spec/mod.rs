//! The spec: text to a validated layout. The lexer and parser read the
//! grammar, validation checks every rule about values, and errors carry
//! byte ranges into the text for the reports that show them.

pub(crate) mod attributes;
pub(crate) mod element;
pub(crate) mod error;
pub(crate) mod lexer;
pub(crate) mod padding;
pub(crate) mod parser;
pub(crate) mod report;
pub(crate) mod tile;
pub(crate) mod validate;
