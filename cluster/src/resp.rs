//! RESP2 replies read from a socket under a deadline and a byte budget.
//!
//! The syncer's round trip has one deadline for all its replies (a server
//! that drips one byte at a time cannot stretch it: each read waits only
//! for what is left of it), and one budget of bytes: a reply larger than
//! [`MAX_REPLY_BYTES`] (a bulk string's announced length, an array's
//! announced count) is refused before anything is allocated for it.

use std::io::{self, Read};
use std::time::Instant;

/// The most one round trip's replies may hold, like the agent's cap on a
/// console's body. A sync of 100 points reads about 200 KiB.
pub(crate) const MAX_REPLY_BYTES: usize = 4 << 20;

/// One reply of Redis (RESP2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Reply {
    Status(String),
    /// An error reply of one command: that command failed, not the link.
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Reply>>),
    /// A command the server applied whose reply the `redis` crate did not
    /// give back (a Redis Cluster pipeline in which another command failed).
    Applied,
}

impl Reply {
    /// The reply as an unsigned count, as a hash field holds one; `None`
    /// for anything else (`abc`, `-5`, `1.5`, a number past `u64`).
    pub(crate) fn count(&self) -> Option<u64> {
        match self {
            Reply::Bulk(Some(bytes)) => std::str::from_utf8(bytes).ok()?.parse().ok(),
            Reply::Int(n) => u64::try_from(*n).ok(),
            _ => None,
        }
    }
}

/// A socket whose reads can be bounded by a time (the remaining part of a
/// deadline is set as the read timeout before each read).
pub(crate) trait Timed: Read {
    fn set_read_timeout(&self, timeout: Option<std::time::Duration>) -> io::Result<()>;
}

/// What is left of `deadline`, or a timeout error when nothing is.
pub(crate) fn remaining(deadline: Instant) -> io::Result<std::time::Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "timed out: timeout_ms passed before the reply",
        ));
    }
    Ok(left)
}

/// Buffered reads of replies from a socket, each read bounded by the
/// deadline, all of them together by the byte budget.
pub(crate) struct Wire {
    buf: Vec<u8>,
    start: usize,
    end: usize,
    budget: usize,
}

impl Wire {
    pub(crate) fn new() -> Wire {
        Wire {
            buf: vec![0; 16 << 10],
            start: 0,
            end: 0,
            budget: MAX_REPLY_BYTES,
        }
    }

    /// `count` replies, within `deadline` and [`MAX_REPLY_BYTES`].
    pub(crate) fn read_replies(
        &mut self,
        socket: &mut dyn Timed,
        count: usize,
        deadline: Instant,
    ) -> io::Result<Vec<Reply>> {
        self.budget = MAX_REPLY_BYTES;
        let mut replies = Vec::with_capacity(count.min(MAX_REPLY_BYTES / 3));
        for _ in 0..count {
            replies.push(self.reply(socket, deadline, 0)?);
        }
        Ok(replies)
    }

    fn reply(&mut self, socket: &mut dyn Timed, deadline: Instant, depth: u8) -> io::Result<Reply> {
        let line = self.line(socket, deadline)?;
        let (kind, rest) = line
            .split_first()
            .ok_or_else(|| protocol("an empty line"))?;
        let text = || String::from_utf8_lossy(rest).into_owned();
        let number = || -> io::Result<i64> {
            std::str::from_utf8(rest)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| protocol("a length or integer that is no number"))
        };
        Ok(match kind {
            b'+' => Reply::Status(text()),
            b'-' => Reply::Error(text()),
            b':' => Reply::Int(number()?),
            b'$' => match number()? {
                -1 => Reply::Bulk(None),
                n if n < 0 => return Err(protocol("a negative bulk length")),
                n => {
                    let n = self.spend(n as u64)?;
                    let bytes = self.exact(socket, deadline, n + 2)?;
                    if !bytes.ends_with(b"\r\n") {
                        return Err(protocol("a bulk string not ended by CRLF"));
                    }
                    Reply::Bulk(Some(bytes[..n].to_vec()))
                }
            },
            b'*' => match number()? {
                -1 => Reply::Array(None),
                n if n < 0 => return Err(protocol("a negative array length")),
                // Nested arrays: our commands' replies are one level deep.
                _ if depth >= 4 => return Err(protocol("arrays nested too deep")),
                n => {
                    // Each element takes at least 3 bytes: announced past
                    // the budget, refused before allocating (saturated: a
                    // count near 2^63 must not wrap to a few bytes).
                    let n = self.spend((n as u64).saturating_mul(3))? / 3;
                    // Room for what arrives, not for what is announced: a
                    // 12-byte `*1398101` would reserve 44 MB at once.
                    let mut items = Vec::with_capacity(n.min(1024));
                    for _ in 0..n {
                        items.push(self.reply(socket, deadline, depth + 1)?);
                    }
                    Reply::Array(Some(items))
                }
            },
            other => {
                return Err(protocol(&format!(
                    "an unknown reply type {:?}",
                    *other as char
                )))
            }
        })
    }

    /// Takes `n` bytes from the budget.
    fn spend(&mut self, n: u64) -> io::Result<usize> {
        if n > self.budget as u64 {
            return Err(protocol(&format!(
                "a reply larger than {MAX_REPLY_BYTES} bytes"
            )));
        }
        self.budget -= n as usize;
        Ok(n as usize)
    }

    /// One line without its CRLF (counted in the budget).
    fn line(&mut self, socket: &mut dyn Timed, deadline: Instant) -> io::Result<Vec<u8>> {
        let mut scanned = 0;
        loop {
            let ready = &self.buf[self.start..self.end];
            if let Some(i) = ready[scanned..].windows(2).position(|w| w == b"\r\n") {
                let end = scanned + i;
                let line = ready[..end].to_vec();
                self.spend(end as u64 + 2)?;
                self.start += end + 2;
                return Ok(line);
            }
            scanned = ready.len().saturating_sub(1);
            if ready.len() > self.budget {
                return Err(protocol(&format!(
                    "a reply line longer than {MAX_REPLY_BYTES} bytes"
                )));
            }
            self.fill(socket, deadline)?;
        }
    }

    /// Exactly `n` bytes (already counted in the budget).
    fn exact(
        &mut self,
        socket: &mut dyn Timed,
        deadline: Instant,
        n: usize,
    ) -> io::Result<Vec<u8>> {
        while self.end - self.start < n {
            self.fill(socket, deadline)?;
        }
        let bytes = self.buf[self.start..self.start + n].to_vec();
        self.start += n;
        Ok(bytes)
    }

    /// Reads more into the buffer, waiting at most for what is left of
    /// `deadline`; grows the buffer only as far as the data announced.
    fn fill(&mut self, socket: &mut dyn Timed, deadline: Instant) -> io::Result<()> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            let grown = (self.buf.len() * 2).min(MAX_REPLY_BYTES + 64);
            if grown == self.buf.len() {
                return Err(protocol("a reply larger than the budget"));
            }
            self.buf.resize(grown, 0);
        }
        socket.set_read_timeout(Some(remaining(deadline)?))?;
        match socket.read(&mut self.buf[self.end..]) {
            Ok(0) => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            )),
            Ok(n) => {
                self.end += n;
                Ok(())
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "timed out: timeout_ms passed before the reply",
                ))
            }
            Err(e) => Err(e),
        }
    }
}

fn protocol(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("protocol error: {what}"),
    )
}

// Properties on generated bytes, in a file of their own.
#[cfg(test)]
#[path = "../tests/unit/resp_props.rs"]
mod props;

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Bytes handed out `step` at a time.
    struct Bytes {
        data: Vec<u8>,
        at: usize,
        step: usize,
    }

    impl Read for Bytes {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(out.len()).min(self.data.len() - self.at);
            if n == 0 && self.at == self.data.len() {
                return Err(io::Error::new(io::ErrorKind::WouldBlock, "no more"));
            }
            out[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    impl Timed for Bytes {
        fn set_read_timeout(&self, _: Option<Duration>) -> io::Result<()> {
            Ok(())
        }
    }

    fn read(data: &[u8], count: usize) -> io::Result<Vec<Reply>> {
        let mut bytes = Bytes {
            data: data.to_vec(),
            at: 0,
            step: 1,
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        Wire::new().read_replies(&mut bytes, count, deadline)
    }

    #[test]
    fn replies_are_read_byte_by_byte() {
        let replies = read(
            b"+OK\r\n:42\r\n-ERR bad\r\n*3\r\n$1\r\n7\r\n$-1\r\n$3\r\nabc\r\n",
            4,
        );
        assert_eq!(
            replies.unwrap(),
            vec![
                Reply::Status("OK".into()),
                Reply::Int(42),
                Reply::Error("ERR bad".into()),
                Reply::Array(Some(vec![
                    Reply::Bulk(Some(b"7".to_vec())),
                    Reply::Bulk(None),
                    Reply::Bulk(Some(b"abc".to_vec())),
                ])),
            ]
        );
    }

    #[test]
    fn counts_are_unsigned_integers_only() {
        let count = |b: &[u8]| Reply::Bulk(Some(b.to_vec())).count();
        assert_eq!(count(b"12"), Some(12));
        for bad in [&b"abc"[..], b"-5", b"1.5", b"99999999999999999999", b""] {
            assert_eq!(count(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn a_huge_reply_is_a_protocol_error_before_any_allocation() {
        for huge in [&b"$1000000000\r\n"[..], b"*1000000000\r\n"] {
            let e = read(huge, 1).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidData);
            assert_eq!(
                e.to_string(),
                "protocol error: a reply larger than 4194304 bytes"
            );
        }
        // Many replies that are small each: the budget is the round trip's.
        let many = b"$1048576\r\n"
            .iter()
            .copied()
            .chain(vec![b'x'; 1 << 20])
            .chain(*b"\r\n");
        let many: Vec<u8> = many.collect::<Vec<u8>>().repeat(5);
        let e = read(&many, 5).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{e}");
    }

    #[test]
    fn garbage_is_a_protocol_error() {
        for garbage in [&b"?\r\n"[..], b"$abc\r\n", b"$3\r\nabcd\r\n", b"\r\n"] {
            let e = read(garbage, 1).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{e}");
        }
    }
}
