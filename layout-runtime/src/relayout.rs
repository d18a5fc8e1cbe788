//! Bulk relayout (see `relayout::pack`).
