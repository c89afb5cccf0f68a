//! The console's servers: one form POST at a time to the current one, the
//! next one after any failure.

use std::io::Read;
use std::time::Duration;

use ureq::tls::{Certificate, ClientCert, PrivateKey, RootCerts, TlsConfig};

use crate::config::{MAX_RESPONSE_BYTES, MAX_TIMEOUT_MS};
use crate::protocol::FORM_FIELD;
use crate::tls::TlsFiles;

/// A request that failed, and whether it may have reached the server.
#[derive(Debug)]
pub struct PostError {
    /// The URL and what went wrong.
    pub message: String,
    /// False only when the request was certainly not sent (no connection:
    /// refused, unreachable, no such host, connect timeout, TLS handshake
    /// refused): sending it again cannot make the server process it twice.
    pub maybe_sent: bool,
}

impl std::fmt::Display for PostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Whether `e` came before any byte of the request left (the connection
/// was never made), so the server cannot have seen the request.
fn before_sending(e: &ureq::Error) -> bool {
    use std::io::ErrorKind;
    match e {
        ureq::Error::HostNotFound
        | ureq::Error::ConnectionFailed
        | ureq::Error::Tls(_)
        | ureq::Error::Rustls(_) => true,
        ureq::Error::Timeout(t) => matches!(t, ureq::Timeout::Resolve | ureq::Timeout::Connect),
        ureq::Error::Io(e) => matches!(
            e.kind(),
            ErrorKind::ConnectionRefused
                | ErrorKind::HostUnreachable
                | ErrorKind::NetworkUnreachable
                | ErrorKind::AddrNotAvailable
        ),
        _ => false,
    }
}

pub struct Servers {
    http: ureq::Agent,
    urls: Vec<String>,
    at: usize,
}

impl Servers {
    /// `urls` already checked and shuffled; `tls`: the certificates
    /// `https://` servers must chain to and the client identity, checked.
    pub fn new(urls: Vec<String>, timeout_ms: u64, tls: &TlsFiles) -> Servers {
        // Saturated: a timeout of u64::MAX ms would overflow the deadlines
        // ureq computes from it; MAX_TIMEOUT_MS is over a year.
        let timeout = Some(Duration::from_millis(timeout_ms.min(MAX_TIMEOUT_MS)));
        // ureq's rustls uses the process's provider (sds-tls installed ring
        // when a server is https://) and only these roots.
        let roots = tls
            .roots
            .iter()
            .map(|der| Certificate::from_der(der).to_owned());
        let client = tls.client.as_ref().map(|identity| {
            let chain: Vec<Certificate<'static>> = identity
                .chain
                .iter()
                .map(|der| Certificate::from_der(der).to_owned())
                .collect();
            // The key was parsed from this PEM at start: it parses again.
            let key = PrivateKey::from_pem(&identity.key_pem)
                .expect("the key parsed at start")
                .to_owned();
            ClientCert::new_with_certs(&chain, key)
        });
        let tls = TlsConfig::builder()
            .root_certs(RootCerts::from(roots))
            .client_cert(client)
            .build();
        let config = ureq::Agent::config_builder()
            .tls_config(tls)
            // One timeout bounds the whole exchange, so `stop` waits at most
            // one timeout for a request in flight.
            .timeout_global(timeout)
            .timeout_connect(timeout)
            .http_status_as_error(false)
            .max_redirects(0)
            .build();
        Servers {
            http: config.into(),
            urls,
            at: 0,
        }
    }

    /// The server the next request goes to.
    pub fn current(&self) -> &str {
        &self.urls[self.at]
    }

    /// Posts `client=<json>` to `path` of the current server and reads the
    /// body of a 200 with `read`; on any failure (of the exchange or of
    /// `read`) moves on to the next server and says what went wrong.
    pub fn post<T>(
        &mut self,
        path: &str,
        json: &str,
        read: impl FnOnce(&str) -> Result<T, String>,
    ) -> Result<T, PostError> {
        let url = format!("{}{}", self.current(), path);
        let result = self.exchange(&url, json).and_then(|body| {
            read(&body).map_err(|message| PostError {
                message,
                maybe_sent: true,
            })
        });
        if result.is_err() {
            self.at = (self.at + 1) % self.urls.len();
        }
        result.map_err(|e| PostError {
            message: format!("{url}: {}", e.message),
            maybe_sent: e.maybe_sent,
        })
    }

    fn exchange(&self, url: &str, json: &str) -> Result<String, PostError> {
        let sent = |message: String| PostError {
            message,
            maybe_sent: true,
        };
        let mut response = self
            .http
            .post(url)
            .send_form([(FORM_FIELD, json)])
            .map_err(|e| PostError {
                message: e.to_string(),
                maybe_sent: !before_sending(&e),
            })?;
        let status = response.status().as_u16();
        if status != 200 {
            return Err(sent(format!("HTTP status {status}")));
        }
        // One byte past the limit tells a body that is too long from one
        // that fits exactly, without reading the rest.
        let mut body = Vec::new();
        response
            .body_mut()
            .as_reader()
            .take(MAX_RESPONSE_BYTES + 1)
            .read_to_end(&mut body)
            .map_err(|e| sent(format!("reading the response: {e}")))?;
        if body.len() as u64 > MAX_RESPONSE_BYTES {
            return Err(sent(format!(
                "response body longer than {MAX_RESPONSE_BYTES} bytes"
            )));
        }
        String::from_utf8(body).map_err(|_| sent("response body is not UTF-8".into()))
    }
}
