//! TLS (`rediss://` URLs) through the `redis` crate's rustls support, with
//! the `ring` crypto provider: nothing of the system's OpenSSL is needed to
//! build or to run. The provider and the reading of PEM files are the
//! workspace's `sds-tls`, shared with the agent.

use std::io;
use std::sync::Arc;

use redis::{ClientTlsConfig, TlsCertificates};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ClientConfig, RootCertStore};

use crate::{Config, Error};

/// Whether `config` names any certificate or key file.
fn has_files(config: &Config) -> bool {
    config.tls_ca_file.is_some() || config.tls_cert_file.is_some() || config.tls_key_file.is_some()
}

/// Checks the TLS fields at start: the files come in the pairs that make
/// sense, can be read and parsed, and only go with `rediss://` URLs.
pub(crate) fn validate(config: &Config) -> Result<(), Error> {
    let bad = |m: String| Err(Error::InvalidConfig(m));
    if config.tls_cert_file.is_some() != config.tls_key_file.is_some() {
        return bad("tls_cert_file and tls_key_file go together (mutual TLS)".into());
    }
    if !has_files(config) {
        return Ok(());
    }
    if let Some(i) = config.urls.iter().position(|u| !u.starts_with("rediss://")) {
        return bad(format!(
            "urls[{i}]: TLS files are given, so every URL must be rediss://"
        ));
    }
    // Read and parse now: a bad file is a configuration error, not a sync
    // failure found later. The CA file is checked on its own first, so its
    // error names it.
    if let Some(path) = &config.tls_ca_file {
        sds_tls::ca_certificates("tls_ca_file", path)
            .map_err(|e| Error::InvalidConfig(e.to_string()))?;
    }
    let certificates = certificates(config).map_err(|e| Error::InvalidConfig(e.to_string()))?;
    if let Some(certificates) = certificates {
        if let Err(e) = redis::Client::build_with_tls(config.urls[0].as_str(), certificates) {
            return bad(format!("TLS files: {e}"));
        }
    }
    client_config(config).map_err(|e| Error::InvalidConfig(format!("TLS files: {e}")))?;
    Ok(())
}

/// The rustls client configuration of a connection to one server, from
/// the files read now (a renewed file is used by the next connection;
/// each one read only if it is a regular file of bounded size, so a file
/// swapped for a FIFO never blocks a reconnect): the CA file's
/// certificates or the system's roots, and the client certificate.
pub(crate) fn client_config(config: &Config) -> io::Result<Arc<ClientConfig>> {
    sds_tls::install_provider();
    let anchors = match &config.tls_ca_file {
        Some(path) => sds_tls::ca_certificates("tls_ca_file", path)?,
        None => sds_tls::system_roots()?,
    };
    let mut roots = RootCertStore::empty();
    roots.add_parsable_certificates(anchors);
    let builder = ClientConfig::builder().with_root_certificates(roots);
    let invalid = |field: &str, why: String| {
        io::Error::new(io::ErrorKind::InvalidData, format!("{field}: {why}"))
    };
    let tls = match (&config.tls_cert_file, &config.tls_key_file) {
        (Some(cert), Some(key)) => {
            let chain =
                CertificateDer::pem_slice_iter(&sds_tls::read_config_file("tls_cert_file", cert)?)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| invalid("tls_cert_file", format!("not PEM: {e}")))?;
            let key =
                PrivateKeyDer::from_pem_slice(&sds_tls::read_config_file("tls_key_file", key)?)
                    .map_err(|e| invalid("tls_key_file", format!("no PEM private key: {e}")))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| invalid("tls_cert_file and tls_key_file", e.to_string()))?
        }
        _ => builder.with_no_client_auth(),
    };
    Ok(Arc::new(tls))
}

/// The certificates for the `redis` crate, read now (so a renewed file
/// is used by the next connection), or `None` without TLS files (then
/// `rediss://` trusts the system's roots).
pub(crate) fn certificates(config: &Config) -> std::io::Result<Option<TlsCertificates>> {
    if !has_files(config) {
        return Ok(None);
    }
    let root_cert = match &config.tls_ca_file {
        Some(path) => Some(sds_tls::read_config_file("tls_ca_file", path)?),
        None => None,
    };
    let client_tls = match (&config.tls_cert_file, &config.tls_key_file) {
        (Some(cert), Some(key)) => Some(ClientTlsConfig {
            client_cert: sds_tls::read_config_file("tls_cert_file", cert)?,
            client_key: sds_tls::read_config_file("tls_key_file", key)?,
        }),
        _ => None,
    };
    Ok(Some(TlsCertificates {
        client_tls,
        root_cert,
    }))
}
