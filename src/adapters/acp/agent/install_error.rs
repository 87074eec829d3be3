//! Why a managed install failed, each case with the fix to tell the operator, and
//! the classification of npm's failure output into those cases.

use crate::domain::error::{ErrorType, HecateError};

/// A managed launcher install or refresh that did not happen. Nothing was put in
/// place: the previous install (if any) is untouched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InstallError {
    /// The manifest names no npm package.
    #[error("adapter {0} has no managed package")]
    NoPackage(String),
    /// Neither `[agents] cache_dir` nor a user cache directory is known.
    #[error("no cache directory on this system")]
    NoCacheDir,
    /// `npm` is not on PATH.
    #[error("npm was not found on PATH")]
    NpmMissing,
    /// The registry has the package but not the requested version.
    #[error("npm install {spec}: no such version (npm {code})")]
    VersionNotFound {
        /// The package spec asked for.
        spec: String,
        /// npm's error code.
        code: String,
    },
    /// The registry (or the local tarball) does not have the package.
    #[error("npm install {spec}: package not found (npm {code})")]
    PackageNotFound {
        /// The package spec asked for.
        spec: String,
        /// npm's error code.
        code: String,
    },
    /// The registry could not be reached.
    #[error("npm install {spec}: the registry is unreachable (npm {code})")]
    Network {
        /// The package spec asked for.
        spec: String,
        /// npm's error code.
        code: String,
    },
    /// npm failed for another reason; `tail` is the end of its stderr.
    #[error("npm install {spec} failed ({status}): {tail}")]
    Failed {
        /// The package spec asked for.
        spec: String,
        /// npm's exit.
        status: String,
        /// The last lines of npm's stderr.
        tail: String,
    },
    /// npm did not finish within the install timeout.
    #[error("npm install {0} timed out")]
    Timeout(String),
    /// The package installed but has no bin of the expected name.
    #[error("npm installed {spec} but it has no bin named {bin}")]
    NoBin {
        /// The package spec asked for.
        spec: String,
        /// The bin looked for.
        bin: String,
    },
    /// A file system step (staging directory, rename) failed.
    #[error("{0}")]
    Io(String),
}

impl InstallError {
    /// A failed file system step: `what` was being done to `path`.
    pub fn io(what: &str, path: &std::path::Path, e: std::io::Error) -> Self {
        Self::Io(format!("cannot {what} {}: {e}", path.display()))
    }

    /// A short stable reason code for error details.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::NoPackage(_) => "no_managed_package",
            Self::NoCacheDir => "no_cache_dir",
            Self::NpmMissing => "npm_missing",
            Self::VersionNotFound { .. } => "version_not_found",
            Self::PackageNotFound { .. } => "package_not_found",
            Self::Network { .. } => "registry_unreachable",
            Self::Failed { .. } => "npm_failed",
            Self::Timeout(_) => "npm_timeout",
            Self::NoBin { .. } => "no_bin",
            Self::Io(_) => "io",
        }
    }

    /// What the operator should do about it.
    pub fn fix(&self, adapter_id: &str) -> String {
        match self {
            Self::NoPackage(_) => format!(
                "{adapter_id} has no npm package Hecate can install: install its command yourself so that it is on PATH, or add `package` to its manifest."
            ),
            Self::NoCacheDir => "Set `[agents] cache_dir` in the config.".into(),
            Self::NpmMissing => {
                "Install Node.js with npm (https://nodejs.org) so that `npm` is on PATH, then retry."
                    .into()
            }
            Self::VersionNotFound { .. } => format!(
                "Fix `package_version` in the {adapter_id} manifest to a published version (`npm view <package> versions`)."
            ),
            Self::PackageNotFound { .. } => format!(
                "Check `package` in the {adapter_id} manifest (a registry name or a tarball path) and the npm registry setting."
            ),
            Self::Network { .. } => {
                "Check the network and the npm registry (npm_config_registry, proxy settings), then retry."
                    .into()
            }
            Self::Failed { .. } | Self::Timeout(_) => {
                "Read npm's output in the error, fix npm, then retry.".into()
            }
            Self::NoBin { .. } => format!(
                "Set `bin` in the {adapter_id} manifest to the package's executable name."
            ),
            Self::Io(_) => "Check that the cache directory is writable, then retry.".into(),
        }
    }

    /// Converts to the domain error: a missing package is an invalid request,
    /// everything else a gateway error; details carry the reason and adapter.
    pub fn into_hecate(self, adapter_id: &str) -> HecateError {
        let error_type = match self {
            Self::NoPackage(_) => ErrorType::InvalidRequest,
            _ => ErrorType::GatewayError,
        };
        HecateError::new(error_type, format!("{adapter_id}: install failed: {self}"))
            .with_user_message(format!(
                "Installing the external agent {adapter_id} failed."
            ))
            .with_operator_action(self.fix(adapter_id))
            .with_detail("reason", self.reason())
            .with_detail("adapter_id", adapter_id)
    }
}

/// npm's error code in its stderr (`npm error code E404`, older `npm ERR! code`).
pub fn npm_error_code(stderr: &str) -> Option<String> {
    stderr.lines().find_map(|line| {
        let rest = line
            .strip_prefix("npm error code ")
            .or_else(|| line.strip_prefix("npm ERR! code "))?;
        let code = rest.trim();
        (!code.is_empty()).then(|| code.to_string())
    })
}

/// Classifies a failed `npm install` from its stderr.
pub fn classify_failure(spec: &str, status: &str, stderr: &str) -> InstallError {
    let code = npm_error_code(stderr).unwrap_or_default();
    let spec = spec.to_string();
    match code.as_str() {
        "ETARGET" => InstallError::VersionNotFound { spec, code },
        "E404" | "ENOENT" | "EINVALIDPACKAGENAME" => InstallError::PackageNotFound { spec, code },
        "ENOTFOUND" | "EAI_AGAIN" | "ECONNREFUSED" | "ECONNRESET" | "ETIMEDOUT" | "ENETUNREACH"
        | "EHOSTUNREACH" => InstallError::Network { spec, code },
        _ => {
            let lines: Vec<&str> = stderr.lines().collect();
            let tail = lines[lines.len().saturating_sub(20)..].join("\n");
            InstallError::Failed {
                spec,
                status: status.to_string(),
                tail,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npm_failures_are_classified_by_code() {
        let cases = [
            (
                "@x/y@9.9.9",
                "npm error code ETARGET\nnpm error notarget No matching version found for @x/y@9.9.9.\n",
                "version_not_found",
            ),
            (
                "@x/nope",
                "npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/@x%2fnope\n",
                "package_not_found",
            ),
            (
                "@x/y",
                "npm ERR! code ENOTFOUND\nnpm ERR! errno ENOTFOUND\n",
                "registry_unreachable",
            ),
            (
                "@x/y",
                "npm error code ECONNREFUSED\n",
                "registry_unreachable",
            ),
        ];
        for (spec, stderr, reason) in cases {
            let e = classify_failure(spec, "exit 1", stderr);
            assert_eq!(e.reason(), reason, "{stderr}");
        }
        let other = classify_failure("@x/y", "exit 1", "npm error code EACCES\nnpm error denied");
        assert_eq!(other.reason(), "npm_failed");
        assert!(other.to_string().contains("npm error denied"), "{other}");
    }

    #[test]
    fn each_failure_names_a_fix() {
        let e = InstallError::VersionNotFound {
            spec: "p@9".into(),
            code: "ETARGET".into(),
        }
        .into_hecate("codex");
        assert_eq!(e.error_type, ErrorType::GatewayError);
        assert!(e.operator_action.contains("package_version"), "{e:?}");
        let e = InstallError::NoPackage("cursor_agent".into()).into_hecate("cursor_agent");
        assert_eq!(e.error_type, ErrorType::InvalidRequest);
        assert!(InstallError::NpmMissing.fix("x").contains("nodejs.org"));
    }
}
