//! [`Conn`]: the connection to one Redis server (TCP, TLS or a Unix
//! socket), whose every use is bounded by one deadline: connecting, the
//! TLS handshake, AUTH and SELECT, and each round trip's writes and reads
//! together (not each socket read: a server that drips a byte now and then
//! would stretch a per-read timeout without end). Replies are read by
//! [`crate::resp`], within [`crate::resp::MAX_REPLY_BYTES`].

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
#[cfg(unix)]
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redis::{ConnectionAddr, IntoConnectionInfo};
use rustls::pki_types::ServerName;
use rustls::{ClientConnection, StreamOwned};

use crate::resp::{remaining, Reply, Timed, Wire};
use crate::Config;

enum Stream {
    Tcp(TcpStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
    #[cfg(unix)]
    Unix(UnixStream),
}

impl Stream {
    fn set_timeouts(&self, timeout: Duration) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_write_timeout(Some(timeout)),
            Stream::Tls(s) => s.sock.set_write_timeout(Some(timeout)),
            #[cfg(unix)]
            Stream::Unix(s) => s.set_write_timeout(Some(timeout)),
        }?;
        self.set_read_timeout(Some(timeout))
    }
}

impl Read for Stream {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(out),
            Stream::Tls(s) => s.read(out),
            #[cfg(unix)]
            Stream::Unix(s) => s.read(out),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(bytes),
            Stream::Tls(s) => s.write(bytes),
            #[cfg(unix)]
            Stream::Unix(s) => s.write(bytes),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
            #[cfg(unix)]
            Stream::Unix(s) => s.flush(),
        }
    }
}

impl Timed for Stream {
    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(timeout),
            Stream::Tls(s) => s.sock.set_read_timeout(timeout),
            #[cfg(unix)]
            Stream::Unix(s) => s.set_read_timeout(timeout),
        }
    }
}

/// Where a stop finds the socket of the connection in use, to shut it down
/// so that a read blocked on it returns at once; once stopped, a new
/// connection is shut down as soon as it is made.
pub(crate) type Interrupt = Arc<Mutex<Slot>>;

/// See [`Interrupt`].
#[derive(Default)]
pub(crate) struct Slot {
    sock: Option<TcpStream>,
    stopped: bool,
}

/// A live connection to one server.
pub(crate) struct Conn {
    stream: Stream,
    wire: Wire,
}

impl Conn {
    /// Connects to `url` with `config`'s TLS files, and sends AUTH and
    /// SELECT if the URL has them, all before `deadline`. A TCP socket is
    /// left in `interrupt` for a stop to shut down.
    pub(crate) fn open(
        url: &str,
        config: &Config,
        deadline: Instant,
        interrupt: Option<&Interrupt>,
    ) -> io::Result<Conn> {
        let info = url
            .into_connection_info()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        let stream = match info.addr() {
            ConnectionAddr::Tcp(host, port) => Stream::Tcp(tcp(host, *port, deadline, interrupt)?),
            ConnectionAddr::TcpTls { host, port, .. } => {
                let tls = crate::tls::client_config(config)?;
                let sock = tcp(host, *port, deadline, interrupt)?;
                let name = ServerName::try_from(host.clone())
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
                let mut session = ClientConnection::new(tls, name).map_err(io::Error::other)?;
                let mut sock = sock;
                while session.is_handshaking() {
                    let left = remaining(deadline)?;
                    sock.set_read_timeout(Some(left))?;
                    sock.set_write_timeout(Some(left))?;
                    session
                        .complete_io(&mut sock)
                        .map_err(timed_out_as_deadline)?;
                }
                Stream::Tls(Box::new(StreamOwned::new(session, sock)))
            }
            #[cfg(unix)]
            ConnectionAddr::Unix(path) => Stream::Unix(UnixStream::connect(path)?),
            _ => return Err(io::Error::other("this kind of address is not supported")),
        };
        let mut conn = Conn {
            stream,
            wire: Wire::new(),
        };
        let settings = info.redis_settings();
        let mut setup = Vec::new();
        if let Some(password) = settings.password() {
            let mut auth = redis::cmd("AUTH");
            if let Some(user) = settings.username() {
                auth.arg(user);
            }
            auth.arg(password);
            setup.push(auth);
        }
        if settings.db() != 0 {
            setup.push(redis::cmd("SELECT").arg(settings.db()).clone());
        }
        if !setup.is_empty() {
            let mut packed = Vec::new();
            for cmd in &setup {
                cmd.write_packed_command(&mut packed);
            }
            for reply in conn.round_trip(&packed, setup.len(), deadline)? {
                if let Reply::Error(e) = reply {
                    // The server's words only: never the password.
                    return Err(io::Error::new(io::ErrorKind::PermissionDenied, e));
                }
            }
        }
        Ok(conn)
    }

    /// Sends `packed` (`count` commands) and reads their `count` replies,
    /// all before `deadline`. An error reply is one command's answer; an
    /// `Err` means the link is unusable (timed out, closed, a protocol
    /// error, a reply over the budget).
    pub(crate) fn round_trip(
        &mut self,
        packed: &[u8],
        count: usize,
        deadline: Instant,
    ) -> io::Result<Vec<Reply>> {
        self.stream.set_timeouts(remaining(deadline)?)?;
        self.stream
            .write_all(packed)
            .and_then(|()| self.stream.flush())
            .map_err(timed_out_as_deadline)?;
        self.wire.read_replies(&mut self.stream, count, deadline)
    }
}

/// A TCP connection to `host:port` within `deadline` (each address tried
/// with what is left of it). Name resolution is the system's and is not
/// bounded by the deadline: use an IP address where it matters.
fn tcp(
    host: &str,
    port: u16,
    deadline: Instant,
    interrupt: Option<&Interrupt>,
) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, format!("{host}: no address"));
    for addr in (host, port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&addr, remaining(deadline)?) {
            Ok(sock) => {
                sock.set_nodelay(true)?;
                if let Some(Ok(mut slot)) = interrupt.map(|i| i.lock()) {
                    if slot.stopped {
                        return Err(io::Error::other("stopped"));
                    }
                    slot.sock = sock.try_clone().ok();
                }
                return Ok(sock);
            }
            Err(e) => last = timed_out_as_deadline(e),
        }
    }
    Err(last)
}

/// Shuts the socket in `interrupt` down (a stop): a read blocked on it
/// returns at once.
pub(crate) fn interrupt(slot: &Interrupt) {
    if let Ok(mut slot) = slot.lock() {
        slot.stopped = true;
        if let Some(sock) = slot.sock.take() {
            let _ = sock.shutdown(Shutdown::Both);
        }
    }
}

/// Whether a stop came: a connection that failed after it was shut down by
/// it, not by the server.
pub(crate) fn stopped(slot: &Interrupt) -> bool {
    slot.lock().is_ok_and(|slot| slot.stopped)
}

/// Forgets the socket in `slot` (its connection was dropped): the copy
/// would keep the connection open.
pub(crate) fn forget(slot: &Interrupt) {
    if let Ok(mut slot) = slot.lock() {
        slot.sock = None;
    }
}

fn timed_out_as_deadline(e: io::Error) -> io::Error {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => io::Error::new(
            io::ErrorKind::TimedOut,
            "timed out: timeout_ms passed before the reply",
        ),
        _ => e,
    }
}
