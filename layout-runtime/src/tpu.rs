//! The TPU tiling chooser of SPEC.md §6.
