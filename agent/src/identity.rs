//! This instance's ip and host name as SDS's client finds them.

use std::ffi::CStr;
use std::net::Ipv4Addr;

/// The last non-loopback IPv4 address of the host's interfaces that are up,
/// in the order the system lists them (SDS's client keeps the last one it
/// sees too); `127.0.0.1` when there is none.
pub fn detect_ip() -> String {
    let mut found: Option<Ipv4Addr> = None;
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: `getifaddrs` writes a list head into `list`, freed below.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        return Ipv4Addr::LOCALHOST.to_string();
    }
    let mut at = list;
    while !at.is_null() {
        // SAFETY: `at` is a node of the list `getifaddrs` returned, alive
        // until `freeifaddrs`.
        let node = unsafe { &*at };
        let up = node.ifa_flags & libc::IFF_UP as u32 != 0;
        if up && !node.ifa_addr.is_null() {
            // SAFETY: a non-null `ifa_addr` points to a sockaddr of its family.
            let family = unsafe { (*node.ifa_addr).sa_family };
            if i32::from(family) == libc::AF_INET {
                // SAFETY: an AF_INET address is a `sockaddr_in`.
                let sin = unsafe { &*(node.ifa_addr as *const libc::sockaddr_in) };
                let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
                if !ip.is_loopback() {
                    found = Some(ip);
                }
            }
        }
        at = node.ifa_next;
    }
    // SAFETY: `list` came from `getifaddrs` and is freed once.
    unsafe { libc::freeifaddrs(list) };
    found.unwrap_or(Ipv4Addr::LOCALHOST).to_string()
}

/// The system's host name; `"localhost"` when it cannot be read.
pub fn detect_hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` has `buf.len()` writable bytes; the last stays NUL.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len() - 1) };
    if rc != 0 {
        return "localhost".into();
    }
    CStr::from_bytes_until_nul(&buf)
        .ok()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_an_ipv4_address_and_a_host_name() {
        let ip = detect_ip();
        assert!(ip.parse::<Ipv4Addr>().is_ok(), "{ip}");
        assert!(ip.len() <= crate::config::MAX_IP_LEN);
        assert!(!detect_hostname().is_empty());
    }
}
