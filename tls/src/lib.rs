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

/// The largest configuration file [`read_config_file`] reads: a PEM bundle
/// of every public root is about 200 KiB, so 1 MiB holds any real one.
pub const MAX_CONFIG_FILE_BYTES: u64 = 1 << 20;

/// The bytes of a file named by a setting (a CA, a certificate, a key):
/// only a regular file of at most [`MAX_CONFIG_FILE_BYTES`]. It is opened
/// without blocking (a FIFO would block the open until a writer comes) and
/// checked on the opened file, so a path swapped for a FIFO or a device
/// (`/dev/zero` never ends) is refused, never waited on or read without end.
/// The error names `field` (the setting that gave the path), the path and
/// the reason.
pub fn read_config_file(field: &str, path: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let named = |e: io::Error| io::Error::new(e.kind(), format!("{field} {}: {e}", path.display()));
    let refused = |why: String| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{field} {}: {why}", path.display()),
        )
    };
    let file = open_without_blocking(path).map_err(named)?;
    let meta = file.metadata().map_err(named)?;
    if !meta.is_file() {
        return Err(refused(format!("not a regular file ({})", kind_of(&meta))));
    }
    if meta.len() > MAX_CONFIG_FILE_BYTES {
        return Err(refused(format!(
            "{} bytes, more than the {MAX_CONFIG_FILE_BYTES} a configuration file may hold",
            meta.len()
        )));
    }
    // Bounded even if the file grows after the check.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_CONFIG_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(named)?;
    if bytes.len() as u64 > MAX_CONFIG_FILE_BYTES {
        return Err(refused(format!(
            "grew past the {MAX_CONFIG_FILE_BYTES} bytes a configuration file may hold"
        )));
    }
    Ok(bytes)
}

#[cfg(unix)]
fn open_without_blocking(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK: opening a FIFO for reading returns at once instead of
    // waiting for a writer; on a regular file it changes nothing.
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_without_blocking(path: &Path) -> io::Result<std::fs::File> {
    std::fs::File::open(path)
}

fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if meta.is_dir() {
        "a directory"
    } else {
        "not a file"
    }
}

/// The CA certificates of a PEM file, each one checked as a trust anchor:
/// the file must be readable and hold at least one certificate, and every
/// certificate must parse. The error names `field`, the path and the reason.
pub fn ca_certificates(field: &str, path: &Path) -> io::Result<Vec<CertificateDer<'static>>> {
    let pem = read_config_file(field, path)?;
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
    fn only_regular_files_of_bounded_size_are_read() {
        let dir = TempDir::new("sds-tls");
        let refusal = |path: &Path| {
            read_config_file("tls_ca_file", path)
                .unwrap_err()
                .to_string()
        };
        let fifo = dir.path().join("ca.fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // Returns at once: no writer is waited for.
        assert_eq!(
            refusal(&fifo),
            format!(
                "tls_ca_file {}: not a regular file (a FIFO)",
                fifo.display()
            )
        );
        assert_eq!(
            refusal(Path::new("/dev/zero")),
            "tls_ca_file /dev/zero: not a regular file (a character device)"
        );
        assert_eq!(
            refusal(dir.path()),
            format!(
                "tls_ca_file {}: not a regular file (a directory)",
                dir.path().display()
            )
        );
        let big = dir.path().join("big.pem");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_CONFIG_FILE_BYTES + 1)
            .unwrap();
        assert_eq!(
            refusal(&big),
            format!(
                "tls_ca_file {}: 1048577 bytes, more than the 1048576 a configuration file may hold",
                big.display()
            )
        );
        let fine = dir.path().join("fine.pem");
        std::fs::write(&fine, b"pem").unwrap();
        assert_eq!(read_config_file("tls_ca_file", &fine).unwrap(), b"pem");
    }

    #[test]
    fn a_provider_is_installed_once() {
        install_provider();
        install_provider();
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
    }
}
