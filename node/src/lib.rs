//! Placeholder: filled by its binding issue.
