//! # sds-tls: what the workspace's TLS clients share
//!
//! The cluster crate (`rediss://`, through the redis crate) and the agent
//! (`https://`, through ureq) both use rustls with the `ring` provider and
//! take PEM files from their configuration. This crate is that common part,
//! written once: the provider installed for the process, PEM files read and
//! checked with an error naming the setting, the path and the reason, and
//! the system's root certificates. It is never shipped on its own.

use std::io;
use std::path::Path;

use rustls::pki_types::pem::PemObject;
use rustls::RootCertStore;

/// A certificate in DER, as the functions here return them.
pub use rustls::pki_types::CertificateDer;

/// Makes `ring` the process's rustls provider unless the process already
/// chose one (another library, or the application): rustls panics at the
/// first TLS connection when no provider was chosen and it cannot pick one
/// from its features alone.
pub fn install_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing a race to another installer is fine: one is installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// A file's bytes; the error names `field` (the setting that gave the
/// path), the path and the reason.
pub fn read(field: &str, path: &Path) -> io::Result<Vec<u8>> {
    std::fs::read(path)
        .map_err(|e| io::Error::new(e.kind(), format!("{field} {}: {e}", path.display())))
}

/// The CA certificates of a PEM file, each one checked as a trust anchor:
/// the file must be readable and hold at least one certificate, and every
/// certificate must parse. The error names `field`, the path and the reason.
pub fn ca_certificates(field: &str, path: &Path) -> io::Result<Vec<CertificateDer<'static>>> {
    let pem = read(field, path)?;
    let invalid = |why: String| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{field} {}: {why}", path.display()),
        )
    };
    let certificates = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(format!("not PEM: {e}")))?;
    if certificates.is_empty() {
        return Err(invalid("holds no PEM certificate".into()));
    }
    let mut store = RootCertStore::empty();
    for (i, certificate) in certificates.iter().enumerate() {
        store.add(certificate.clone()).map_err(|e| {
            // rustls says "invalid peer certificate": name only the reason.
            let why = match e {
                rustls::Error::InvalidCertificate(why) => format!("{why:?}"),
                e => e.to_string(),
            };
            invalid(format!(
                "certificate {} is not a valid certificate: {why}",
                i + 1
            ))
        })?;
    }
    Ok(certificates)
}

/// The system's root certificates (`rustls-native-certs`: the platform's
/// store, or `SSL_CERT_FILE` / `SSL_CERT_DIR`), as the redis crate reads
/// them for `rediss://`. A file of the store that cannot be read is left
/// out; an error only when no certificate at all was found.
pub fn system_roots() -> io::Result<Vec<CertificateDer<'static>>> {
    let found = rustls_native_certs::load_native_certs();
    if !found.certs.is_empty() {
        return Ok(found.certs);
    }
    let why = match found.errors.first() {
        Some(e) => format!(": {e}"),
        None => String::new(),
    };
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        format!("no root certificate found in the system's store{why}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sds_testkit::TempDir;

    #[test]
    fn errors_name_the_field_the_path_and_the_reason() {
        let missing = Path::new("/nonexistent/sds-ca.pem");
        let e = ca_certificates("tls_ca_file", missing).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(
            e.to_string()
                .starts_with("tls_ca_file /nonexistent/sds-ca.pem: No such file"),
            "{e}"
        );

        let dir = TempDir::new("sds-tls");
        let file = dir.path().join("ca.pem");
        let refusal = |text: &str| {
            std::fs::write(&file, text).unwrap();
            ca_certificates("ca", &file).unwrap_err().to_string()
        };
        let name = file.display();
        assert_eq!(
            refusal("no PEM here\n"),
            format!("ca {name}: holds no PEM certificate")
        );
        assert_eq!(
            refusal("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"),
            format!("ca {name}: certificate 1 is not a valid certificate: BadEncoding")
        );
        assert!(
            refusal("-----BEGIN CERTIFICATE-----\nAA!A\n-----END CERTIFICATE-----\n")
                .starts_with(&format!("ca {name}: not PEM: ")),
        );
    }

    #[test]
    fn a_provider_is_installed_once() {
        install_provider();
        install_provider();
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
    }
}
