// Empty: it exists so that the build-dependencies (features for the
// proc-macro side of the tree) are part of every binding's resolution.
fn main() {}
