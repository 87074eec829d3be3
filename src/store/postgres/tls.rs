//! TLS to PostgreSQL with rustls (the ring provider): the libpq `sslmode`
//! (`disable`, `prefer`, `require`, `verify-ca`, `verify-full`) and `sslrootcert`
//! (a PEM file, or `system` for the operating system's roots) of a store URL, the
//! connector they make, and TLS failures put in words with their fix.
//!
//! As in libpq, `prefer` (the default) and `require` encrypt without checking the
//! certificate, and `require` with an `sslrootcert` checks it as `verify-ca` does.

use crate::domain::error::{HecateError, Result};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{WebPkiServerVerifier, verify_server_cert_signed_by_trust_anchor};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_postgres_rustls::MakeRustlsConnect;

/// How much of the server's identity a connection checks (libpq's `sslmode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SslMode {
    /// Plain TCP only.
    Disable,
    /// TLS when the server offers it, else plain; the certificate is not checked.
    Prefer,
    /// TLS or no connection; the certificate is checked only against an `sslrootcert`.
    Require,
    /// TLS with a certificate signed by a trusted root.
    VerifyCa,
    /// TLS with a certificate signed by a trusted root and naming the host.
    VerifyFull,
}

impl SslMode {
    fn parse(value: &str) -> Option<Self> {
        Some(match value {
            "disable" => Self::Disable,
            "prefer" => Self::Prefer,
            "require" => Self::Require,
            "verify-ca" => Self::VerifyCa,
            "verify-full" => Self::VerifyFull,
            _ => return None,
        })
    }

    /// The mode tokio-postgres is given (it knows the first three; the
    /// certificate checks are the connector's).
    fn wire(self) -> &'static str {
        match self {
            Self::Disable => "disable",
            Self::Prefer => "prefer",
            Self::Require | Self::VerifyCa | Self::VerifyFull => "require",
        }
    }
}

/// Where the trusted roots come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Roots {
    /// A PEM file of CA certificates.
    File(PathBuf),
    /// The operating system's trusted roots (`sslrootcert=system`).
    System,
}

/// The TLS settings of a store URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TlsSettings {
    /// The `sslmode` (default `prefer`).
    pub mode: SslMode,
    /// The `sslrootcert`, if any.
    pub roots: Option<Roots>,
}

/// A store URL split into the URL tokio-postgres parses (its `sslmode` one it
/// knows, no `sslrootcert`) and the TLS settings.
#[derive(Debug)]
pub(super) struct SplitUrl {
    /// The URL for `tokio_postgres::Config`.
    pub url: String,
    /// What the connector must do.
    pub tls: TlsSettings,
}

/// Takes `sslmode` and `sslrootcert` out of `url`'s query; `location` (the URL
/// without its password) names it in errors.
pub(super) fn split_url(url: &str, location: &str) -> Result<SplitUrl> {
    // Like tokio-postgres: the credentials end at the first '@', the query starts
    // at the first '?' after them.
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let host_start = url[after_scheme..]
        .find('@')
        .map_or(after_scheme, |i| after_scheme + i + 1);
    let Some(q) = url[host_start..].find('?').map(|i| host_start + i) else {
        return Ok(SplitUrl {
            url: url.to_string(),
            tls: TlsSettings {
                mode: SslMode::Prefer,
                roots: None,
            },
        });
    };
    let mut mode = SslMode::Prefer;
    let mut roots = None;
    let mut kept = Vec::new();
    for pair in url[q + 1..].split('&').filter(|p| !p.is_empty()) {
        let (key, raw) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_encoding::percent_decode_str(raw).decode_utf8_lossy();
        match key {
            "sslmode" => {
                mode = SslMode::parse(&value).ok_or_else(|| {
                    HecateError::invalid(format!(
                        "invalid PostgreSQL store URL {location}: sslmode={value} is not a mode"
                    ))
                    .with_operator_action(
                        "Set sslmode to disable, prefer, require, verify-ca or verify-full.",
                    )
                    .with_detail("database", location.to_string())
                })?;
            }
            "sslrootcert" => {
                roots = Some(if value == "system" {
                    Roots::System
                } else {
                    Roots::File(PathBuf::from(value.as_ref()))
                });
            }
            _ => kept.push(pair.to_string()),
        }
    }
    kept.push(format!("sslmode={}", mode.wire()));
    Ok(SplitUrl {
        url: format!("{}?{}", &url[..q], kept.join("&")),
        tls: TlsSettings { mode, roots },
    })
}

/// The ring provider, whatever default the process installed (the benchmarks and
/// tests install none).
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The connector for `tls`; a root file that cannot be used is an error naming
/// the fix.
pub(super) fn connector(tls: &TlsSettings, location: &str) -> Result<MakeRustlsConnect> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| HecateError::store(format!("cannot set up TLS: {e}")))?;
    let roots = match (&tls.roots, tls.mode) {
        (_, SslMode::Disable | SslMode::Prefer) | (None, SslMode::Require) => None,
        (Some(r), _) => Some(load_roots(r, location)?),
        (None, SslMode::VerifyCa | SslMode::VerifyFull) => {
            Some(load_roots(&default_root_file(location)?, location)?)
        }
    };
    let verifier: Arc<dyn ServerCertVerifier> = match (roots, tls.mode) {
        (Some(roots), SslMode::VerifyFull) => {
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| HecateError::store(format!("cannot set up TLS: {e}")))?
        }
        (roots, _) => Arc::new(CaOnlyVerifier { roots, provider }),
    };
    let config = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// libpq's default root file, `~/.postgresql/root.crt`, when it exists.
fn default_root_file(location: &str) -> Result<Roots> {
    let file = dirs::home_dir().map(|h| h.join(".postgresql").join("root.crt"));
    match file {
        Some(f) if f.is_file() => Ok(Roots::File(f)),
        _ => Err(HecateError::invalid(format!(
            "the PostgreSQL store URL {location} asks to verify the server's certificate \
             but names no root certificate"
        ))
        .with_operator_action(
            "Add sslrootcert=PATH (the PEM file of the CA that signed the server's \
             certificate) or sslrootcert=system to the store URL, or use sslmode=require \
             to encrypt without verifying.",
        )
        .with_detail("database", location.to_string())),
    }
}

fn bad_root(location: &str, what: String) -> HecateError {
    HecateError::invalid(format!(
        "cannot use the sslrootcert of the PostgreSQL store URL {location}: {what}"
    ))
    .with_operator_action(
        "Point sslrootcert at a readable PEM file holding the CA certificate that \
         signed the server's certificate (or use sslrootcert=system).",
    )
    .with_detail("database", location.to_string())
}

fn load_roots(roots: &Roots, location: &str) -> Result<RootCertStore> {
    let mut store = RootCertStore::empty();
    match roots {
        Roots::File(path) => {
            let certs = read_pem_certs(path)
                .map_err(|e| bad_root(location, format!("{}: {e}", path.display())))?;
            let (added, _) = store.add_parsable_certificates(certs);
            if added == 0 {
                return Err(bad_root(
                    location,
                    format!("{} holds no usable certificate", path.display()),
                ));
            }
        }
        Roots::System => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                return Err(bad_root(
                    location,
                    "the system has no trusted root certificates".to_string(),
                ));
            }
        }
    }
    Ok(store)
}

fn read_pem_certs(path: &Path) -> std::result::Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| e.to_string())?
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    Ok(certs)
}

/// The certificate check of a connection: none (libpq's `prefer` and `require`:
/// encrypted, the server unauthenticated) or a chain to a trusted root without
/// the name (`verify-ca`). Handshake signatures are checked either way.
#[derive(Debug)]
struct CaOnlyVerifier {
    /// The trusted roots; `None` accepts any certificate.
    roots: Option<RootCertStore>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for CaOnlyVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        if let Some(roots) = &self.roots {
            let cert = ParsedCertificate::try_from(end_entity)?;
            verify_server_cert_signed_by_trust_anchor(
                &cert,
                roots,
                intermediates,
                now,
                self.provider.signature_verification_algorithms.all,
            )?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// What tokio-postgres says when the server answers the TLS request with "no".
const NO_TLS_ON_SERVER: &str = "server does not support TLS";

/// A connection failure that is about TLS, in words with its fix; `None` when
/// `e` is about something else.
pub(super) fn explain(e: &tokio_postgres::Error, host: &str) -> Option<(String, String)> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(s) = source {
        if s.to_string() == NO_TLS_ON_SERVER {
            return Some((
                "the server does not accept TLS connections".to_string(),
                "Turn TLS on in PostgreSQL (ssl = on, with ssl_cert_file and ssl_key_file), \
                 or remove sslmode (or set sslmode=prefer or disable) from the store URL to \
                 connect without TLS."
                    .to_string(),
            ));
        }
        // std's io::Error hides the error it wraps from `source`.
        let inner = s
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .map(|i| i as &(dyn std::error::Error + 'static));
        if let Some(tls) = inner
            .unwrap_or(s)
            .downcast_ref::<rustls::Error>()
            .or_else(|| s.downcast_ref::<rustls::Error>())
        {
            return Some(explain_rustls(tls, host));
        }
        source = s.source();
    }
    None
}

fn explain_rustls(e: &rustls::Error, host: &str) -> (String, String) {
    match e {
        rustls::Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => (
            format!("the server's certificate is not valid for the host {host}"),
            "Connect with a host name the certificate names, or use sslmode=verify-ca to \
             check only who signed it."
                .to_string(),
        ),
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => (
            "the server's certificate is not signed by a root in sslrootcert".to_string(),
            "Point sslrootcert at the CA certificate that signed the server's certificate, \
             or use sslmode=require to encrypt without verifying."
                .to_string(),
        ),
        other => (
            format!("the TLS handshake failed: {other}"),
            "Check the server's certificate and the sslmode and sslrootcert of the store URL."
                .to_string(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(url: &str) -> SplitUrl {
        split_url(url, "LOC").expect("splits")
    }

    #[test]
    fn the_tls_parameters_leave_the_url_and_the_mode_becomes_one_tokio_postgres_knows() {
        let s = split("postgres://u:p@h:5432/db");
        assert_eq!(s.url, "postgres://u:p@h:5432/db");
        assert_eq!(s.tls.mode, SslMode::Prefer);

        let s = split(
            "postgres://u:p@h/db?application_name=x&sslmode=verify-full&sslrootcert=%2Ftmp%2Fca.pem",
        );
        assert_eq!(
            s.url,
            "postgres://u:p@h/db?application_name=x&sslmode=require"
        );
        assert_eq!(s.tls.mode, SslMode::VerifyFull);
        assert_eq!(s.tls.roots, Some(Roots::File(PathBuf::from("/tmp/ca.pem"))));

        let s = split("postgresql://h/db?sslmode=verify-ca&sslrootcert=system");
        assert_eq!(s.url, "postgresql://h/db?sslmode=require");
        assert_eq!(s.tls.roots, Some(Roots::System));

        // A '?' in the password is not the query.
        let s = split("postgres://u:p?w@h/db?sslmode=disable");
        assert_eq!(s.url, "postgres://u:p?w@h/db?sslmode=disable");
        assert_eq!(s.tls.mode, SslMode::Disable);
    }

    #[test]
    fn an_unknown_mode_is_refused_naming_the_modes() {
        let e = split_url(
            "postgres://u:secret@h/db?sslmode=always",
            "postgres://u:***@h/db",
        )
        .expect_err("refused");
        let text = format!("{e} {}", e.operator_action);
        assert!(
            text.contains("sslmode=always") && text.contains("verify-full"),
            "{text}"
        );
        assert!(!text.contains("secret"), "{text}");
    }

    #[test]
    fn verifying_needs_a_usable_root_file() {
        let tls = TlsSettings {
            mode: SslMode::VerifyFull,
            roots: Some(Roots::File(PathBuf::from("/nonexistent/ca.pem"))),
        };
        let e = connector(&tls, "LOC").err().expect("refused");
        assert!(e.to_string().contains("/nonexistent/ca.pem"), "{e}");
        assert!(e.operator_action.contains("sslrootcert"), "{e:?}");
        let dir = tempfile::tempdir().expect("tmp");
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").expect("write");
        let tls = TlsSettings {
            mode: SslMode::VerifyCa,
            roots: Some(Roots::File(empty)),
        };
        let e = connector(&tls, "LOC").err().expect("refused");
        assert!(e.to_string().contains("no usable certificate"), "{e}");
        for mode in [SslMode::Disable, SslMode::Prefer, SslMode::Require] {
            let tls = TlsSettings { mode, roots: None };
            assert!(connector(&tls, "LOC").is_ok(), "{mode:?}");
        }
    }
}
