//! Optional Java arguments (`null`: none) as Rust values, for the setup
//! calls of the agent and the cluster.

use std::path::PathBuf;

use jni::objects::JString;
use jni::refs::Reference;
use jni::Env;

use crate::boundary::Fail;

/// A Java string, or `None` for `null`.
pub(crate) fn optional_text(env: &Env, text: &JString) -> Result<Option<String>, Fail> {
    if text.is_null() {
        return Ok(None);
    }
    Ok(Some(text.try_to_string(env)?))
}

/// A path from a Java `String` (the caller's `Path.toString()`); `null` is
/// no file.
pub(crate) fn optional_path(env: &Env, path: &JString) -> Result<Option<PathBuf>, Fail> {
    Ok(optional_text(env, path)?.map(PathBuf::from))
}
