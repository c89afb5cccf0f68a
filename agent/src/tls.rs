//! What `https://` servers are reached with, read and checked at start: the
//! roots their certificates must chain to and, for mutual TLS, the client
//! certificate and key. Every file a config names is read through
//! `sds_tls`, only if it is a regular file of at most
//! [`crate::MAX_CONFIG_FILE_BYTES`]: a FIFO would block the start forever
//! and `/dev/zero` would read until memory runs out.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::config::{AgentConfig, StartError};

/// The client certificate chain and its key, in DER.
pub struct ClientIdentity {
    pub chain: Vec<CertificateDer<'static>>,
    /// The key file's PEM, as ureq takes it (rustls parsed it at start).
    pub key_pem: Vec<u8>,
}

/// The TLS side of a config, checked.
#[derive(Default)]
pub struct TlsFiles {
    /// The certificates `https://` servers must chain to; empty without an
    /// `https://` server.
    pub roots: Vec<CertificateDer<'static>>,
    /// The client identity for mutual TLS, if configured.
    pub client: Option<ClientIdentity>,
}

fn refused(message: String) -> StartError {
    StartError(message)
}

/// The bytes of a file the config names, through `sds_tls` (a regular
/// file of at most [`crate::MAX_CONFIG_FILE_BYTES`]), as the cluster reads its own.
fn read_config_file(field: &str, path: &Path) -> Result<Vec<u8>, StartError> {
    sds_tls::read_config_file(field, path).map_err(|e| refused(e.to_string()))
}

/// Reads and checks the TLS files of `config` for the server list `urls`:
/// the files are refused without an `https://` server, the certificate and
/// the key go together and must match. Installs the process's rustls
/// provider when a server is `https://`.
pub fn tls_files(urls: &[String], config: &AgentConfig) -> Result<TlsFiles, StartError> {
    if config.tls_cert_file.is_some() != config.tls_key_file.is_some() {
        return Err(refused(
            "tls_cert_file and tls_key_file go together (mutual TLS)".into(),
        ));
    }
    let https = urls.iter().any(|url| url.starts_with("https://"));
    if !https {
        if config.tls_ca_file.is_some() {
            return Err(refused(
                "tls_ca_file is given but no server is an https:// URL (the CA file only verifies HTTPS servers)".into(),
            ));
        }
        if config.tls_cert_file.is_some() {
            return Err(refused(
                "tls_cert_file is given but no server is an https:// URL (the client certificate is only shown to HTTPS servers)".into(),
            ));
        }
        return Ok(TlsFiles::default());
    }
    let roots = match &config.tls_ca_file {
        Some(path) => sds_tls::ca_certificates("tls_ca_file", path),
        None => sds_tls::system_roots().map_err(|e| {
            std::io::Error::other(format!("https:// servers without tls_ca_file: {e}"))
        }),
    }
    .map_err(|e| refused(e.to_string()))?;
    let client = match (&config.tls_cert_file, &config.tls_key_file) {
        (Some(cert), Some(key)) => Some(client_identity(cert, key)?),
        _ => None,
    };
    sds_tls::install_provider();
    Ok(TlsFiles { roots, client })
}

/// The client certificate chain and key, parsed and checked to belong
/// together (rustls compares the key with the certificate's public key), so
/// a wrong pair is refused at start rather than failing every handshake.
fn client_identity(cert: &Path, key: &Path) -> Result<ClientIdentity, StartError> {
    let pem = read_config_file("tls_cert_file", cert)?;
    let chain = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| refused(format!("tls_cert_file {}: not PEM: {e}", cert.display())))?;
    if chain.is_empty() {
        return Err(refused(format!(
            "tls_cert_file {}: holds no PEM certificate",
            cert.display()
        )));
    }
    let pem = read_config_file("tls_key_file", key)?;
    let private = PrivateKeyDer::from_pem_slice(&pem).map_err(|e| {
        refused(format!(
            "tls_key_file {}: holds no PEM private key ({e})",
            key.display()
        ))
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| refused(format!("TLS: {e}")))?
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_client_auth_cert(chain.clone(), private)
        .map_err(|e| {
            refused(format!(
                "tls_cert_file {} and tls_key_file {}: {e}",
                cert.display(),
                key.display()
            ))
        })?;
    Ok(ClientIdentity {
        chain,
        key_pem: pem,
    })
}
