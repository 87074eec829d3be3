//! Workspace rules: a workspace is an existing directory, stored canonicalized.

use crate::domain::error::{ErrorType, HecateError, Result};
use std::path::Path;

/// Canonicalizes `path`, requiring an existing directory.
pub fn canonical_workspace(path: &str) -> Result<String> {
    let p = Path::new(path);
    let canon = p.canonicalize().map_err(|e| {
        HecateError::new(
            ErrorType::WorkspaceRequired,
            format!("workspace {path:?} cannot be resolved: {e}"),
        )
        .with_detail("workspace", path)
    })?;
    if !canon.is_dir() {
        return Err(HecateError::new(
            ErrorType::WorkspaceRequired,
            format!("workspace {path:?} is not a directory"),
        )
        .with_detail("workspace", path));
    }
    Ok(canon.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requires_an_existing_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("f.txt");
        std::fs::write(&file, "x").expect("writes");
        let canon = canonical_workspace(&format!("{}/./", dir.path().display())).expect("dir");
        assert!(!canon.ends_with('.'));
        let e = canonical_workspace(&file.display().to_string()).expect_err("file");
        assert_eq!(e.error_type, ErrorType::WorkspaceRequired);
        let e = canonical_workspace("/definitely/not/here").expect_err("missing");
        assert_eq!(e.error_type, ErrorType::WorkspaceRequired);
    }
}
