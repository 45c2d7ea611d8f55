//! TLS to a remote PostgreSQL server: rustls, with the server's certificate always verified.
//!
//! The connection uses TLS when the URL's `sslmode` asks for it (`require`) or the server
//! offers it (`prefer`, the default; a Unix socket never does). Unlike libpq's `require`, the
//! certificate is always checked: against the system's roots and, as libpq does, the CA
//! certificates in the PEM file named by `PGSSLROOTCERT` (for a server with its own CA). A
//! certificate that does not verify is a connection error naming it, never a silent fallback.
//! `sslmode=disable` turns TLS off for a server on a trusted network whose certificate cannot
//! be verified.

use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::proto::error::BoardError;

/// libpq's variable naming a PEM file of CA certificates to trust for the server.
pub const ROOT_CERT_ENV: &str = "PGSSLROOTCERT";

/// The TLS connector of every connection to the store (the store's own and the board's LISTEN
/// connection). Errors (`usage`): `PGSSLROOTCERT` names a file that cannot be read or holds no
/// certificate; no root at all could be loaded.
pub fn connector() -> Result<MakeRustlsConnect, BoardError> {
    connector_trusting(std::env::var_os(ROOT_CERT_ENV).as_deref())
}

/// [`connector`] with `root_file` standing for `PGSSLROOTCERT`.
fn connector_trusting(
    root_file: Option<&std::ffi::OsStr>,
) -> Result<MakeRustlsConnect, BoardError> {
    let mut roots = rustls::RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(native.certs);
    if let Some(path) = root_file.filter(|p| !p.is_empty()) {
        let shown = std::path::Path::new(&path).display().to_string();
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
            .and_then(|it| it.collect())
            .map_err(|e| BoardError::usage(format!("{ROOT_CERT_ENV}={shown}: {e}")))?;
        if certs.is_empty() {
            return Err(BoardError::usage(format!(
                "{ROOT_CERT_ENV}={shown} holds no PEM certificate"
            )));
        }
        let (added, _ignored) = roots.add_parsable_certificates(certs);
        if added == 0 {
            return Err(BoardError::usage(format!(
                "{ROOT_CERT_ENV}={shown}: none of its certificates could be used"
            )));
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| BoardError::internal(format!("TLS set-up: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_root_file_without_certificates_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&empty)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(certs.is_empty());
        assert!(connector_trusting(Some(empty.as_os_str())).is_err());
        assert!(connector_trusting(None).is_ok());
    }
}
