//! The key of a request's client: its address, masked to a prefix.
//!
//! A request's peer is the last hop, which is a proxy's address behind a
//! load balancer. When the peer is a **trusted** proxy, its
//! `X-Forwarded-For` names the hops before it, each appended by the proxy
//! that received it; we walk that list from the right, past every trusted
//! address, and the first address not trusted is the client (what nginx's
//! `real_ip_recursive on` and Express's `trust proxy` with a list do). An
//! entry that is no address stops the walk: the hop that added it is taken
//! as the client, since nothing left of it can be believed. Untrusted peers'
//! headers are ignored: anyone can send one.
//!
//! The address is then masked: IPv4 to `/32` (each address) and IPv6 to
//! `/64` by default, since one IPv6 host usually owns a whole /64 (a
//! limit per /128 is no limit: governor's issue #171). An IPv4-mapped IPv6
//! address (`::ffff:203.0.113.7`, what a dual-stack socket reports) is the
//! IPv4 address. The key is the masked network in its canonical text
//! (`203.0.113.7`, `2001:db8:1:2::/64`), so equal clients get equal keys in
//! every language.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// How a middleware finds a request's client key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientAddress {
    ipv4_prefix: u8,
    ipv6_prefix: u8,
    trusted: Vec<(IpAddr, u8)>,
}

/// An address, a prefix length or a trusted network that is not valid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddressError(pub String);

impl fmt::Display for AddressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AddressError {}

impl Default for ClientAddress {
    fn default() -> ClientAddress {
        ClientAddress {
            ipv4_prefix: 32,
            ipv6_prefix: 64,
            trusted: Vec::new(),
        }
    }
}

impl ClientAddress {
    /// Keys masked to `ipv4_prefix` (0 to 32) and `ipv6_prefix` (0 to 128)
    /// bits, trusting the proxies in `trusted`: addresses or networks in
    /// CIDR form (`10.0.0.0/8`, `::1`, `fd00::/8`).
    pub fn new(
        ipv4_prefix: u8,
        ipv6_prefix: u8,
        trusted: &[impl AsRef<str>],
    ) -> Result<ClientAddress, AddressError> {
        if ipv4_prefix > 32 || ipv6_prefix > 128 {
            return Err(AddressError(format!(
                "prefix lengths must be at most 32 (IPv4) and 128 (IPv6), not {ipv4_prefix} and {ipv6_prefix}"
            )));
        }
        let trusted = trusted
            .iter()
            .map(|network| network_of(network.as_ref()))
            .collect::<Result<_, _>>()?;
        Ok(ClientAddress {
            ipv4_prefix,
            ipv6_prefix,
            trusted,
        })
    }

    /// The client key of a request from `peer` (the socket's address, with
    /// or without brackets or a zone) with the `X-Forwarded-For` values
    /// `forwarded_for` (each header's value; several headers are one list).
    pub fn key(&self, peer: &str, forwarded_for: &[&str]) -> Result<String, AddressError> {
        let mut client = parse(peer)
            .ok_or_else(|| AddressError(format!("peer address {peer:?} is not an IP address")))?;
        let hops = forwarded_for.iter().flat_map(|value| value.split(','));
        let hops: Vec<&str> = hops.map(str::trim).filter(|h| !h.is_empty()).collect();
        for hop in hops.iter().rev() {
            if !self.trusts(client) {
                break;
            }
            match parse(hop) {
                Some(address) => client = address,
                None => break,
            }
        }
        Ok(self.mask(client))
    }

    fn trusts(&self, address: IpAddr) -> bool {
        self.trusted
            .iter()
            .any(|&(network, bits)| masked(address, bits) == Some(network))
    }

    fn mask(&self, address: IpAddr) -> String {
        let bits = match address {
            IpAddr::V4(_) => self.ipv4_prefix,
            IpAddr::V6(_) => self.ipv6_prefix,
        };
        let network = masked(address, bits).expect("the prefix fits its family");
        let full = if address.is_ipv4() { 32 } else { 128 };
        if bits == full {
            network.to_string()
        } else {
            format!("{network}/{bits}")
        }
    }
}

/// `address` with only its first `bits` bits; `None` when `bits` is longer
/// than the family's addresses.
fn masked(address: IpAddr, bits: u8) -> Option<IpAddr> {
    match address {
        IpAddr::V4(v4) if bits <= 32 => {
            let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            Some(IpAddr::V4(Ipv4Addr::from(u32::from(v4) & mask)))
        }
        IpAddr::V6(v6) if bits <= 128 => {
            let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            Some(IpAddr::V6(Ipv6Addr::from(u128::from(v6) & mask)))
        }
        _ => None,
    }
}

/// An address as peers and proxies write it: `203.0.113.7`, `2001:db8::1`,
/// `[2001:db8::1]`, `fe80::1%eth0`, `::ffff:203.0.113.7` (taken as IPv4).
/// Brackets and a zone go with IPv6 only. A port is not taken: frameworks
/// give it apart.
fn parse(text: &str) -> Option<IpAddr> {
    let text = text.trim();
    let bracketed = text.strip_prefix('[').and_then(|t| t.strip_suffix(']'));
    let address = match bracketed.unwrap_or(text).split_once('%') {
        // A zone names an IPv6 link (RFC 4007): `1.2.3.4%eth0` and
        // `fe80::1%` are no addresses.
        Some((address, zone)) if !zone.is_empty() => IpAddr::V6(address.parse().ok()?),
        Some(_) => return None,
        None => match bracketed {
            // Brackets hold IPv6 only (RFC 3986's IP-literal): not `[1.2.3.4]`.
            Some(inner) => IpAddr::V6(inner.parse().ok()?),
            None => text.parse().ok()?,
        },
    };
    Some(match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        v4 => v4,
    })
}

/// A trusted network: an address (all its bits) or `address/bits`, the
/// bits in decimal digits.
fn network_of(text: &str) -> Result<(IpAddr, u8), AddressError> {
    let bad = || {
        AddressError(format!(
            "trusted proxy {text:?} is not an address or CIDR network"
        ))
    };
    let (address, bits) = match text.split_once('/') {
        // Decimal digits only: `u8`'s parser would take `+8` too.
        Some((address, bits)) if !bits.is_empty() && bits.bytes().all(|b| b.is_ascii_digit()) => {
            (address, Some(bits.parse::<u8>().map_err(|_| bad())?))
        }
        Some(_) => return Err(bad()),
        None => (text, None),
    };
    let address = parse(address).ok_or_else(bad)?;
    let bits = bits.unwrap_or(if address.is_ipv4() { 32 } else { 128 });
    let network = masked(address, bits).ok_or_else(bad)?;
    Ok((network, bits))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: [&str; 0] = [];

    #[test]
    fn ipv6_clients_are_their_64_and_ipv4_their_address() {
        let keys = ClientAddress::default();
        assert_eq!(
            keys.key("2001:db8:1:2:aa::1", &[]).unwrap(),
            "2001:db8:1:2::/64"
        );
        assert_eq!(
            keys.key("[2001:db8:1:2:ffff::9]", &[]).unwrap(),
            "2001:db8:1:2::/64"
        );
        assert_eq!(keys.key("203.0.113.7", &[]).unwrap(), "203.0.113.7");
        assert_eq!(keys.key("::ffff:203.0.113.7", &[]).unwrap(), "203.0.113.7");
        assert_eq!(keys.key("fe80::1%eth0", &[]).unwrap(), "fe80::/64");
        let wide = ClientAddress::new(24, 48, &NONE).unwrap();
        assert_eq!(wide.key("203.0.113.7", &[]).unwrap(), "203.0.113.0/24");
        assert_eq!(wide.key("2001:db8:1:2::1", &[]).unwrap(), "2001:db8:1::/48");
        let whole = ClientAddress::new(0, 128, &NONE).unwrap();
        assert_eq!(whole.key("203.0.113.7", &[]).unwrap(), "0.0.0.0/0");
        assert_eq!(whole.key("2001:db8::1", &[]).unwrap(), "2001:db8::1");
    }

    #[test]
    fn forwarded_for_is_believed_only_from_trusted_proxies() {
        let spoofed = ["198.51.100.1, 192.0.2.9"];
        let untrusting = ClientAddress::default();
        assert_eq!(untrusting.key("10.0.0.5", &spoofed).unwrap(), "10.0.0.5");
        let keys = ClientAddress::new(32, 64, &["10.0.0.0/8", "192.0.2.9"]).unwrap();
        // 10.0.0.5 (trusted) says 192.0.2.9 (trusted) sent it, which says
        // 198.51.100.1 did: the client.
        assert_eq!(keys.key("10.0.0.5", &spoofed).unwrap(), "198.51.100.1");
        // A client's own forged entries stand left of its address: ignored.
        let forged = ["1.1.1.1", "203.0.113.7"];
        assert_eq!(keys.key("10.0.0.5", &forged).unwrap(), "203.0.113.7");
        // Every hop trusted: the leftmost one.
        assert_eq!(keys.key("10.0.0.5", &["10.1.1.1"]).unwrap(), "10.1.1.1");
        // Garbage stops the walk at the hop that wrote it.
        assert_eq!(
            keys.key("10.0.0.5", &["203.0.113.7, unknown"]).unwrap(),
            "10.0.0.5"
        );
        assert_eq!(keys.key("10.0.0.5", &[" , ", ""]).unwrap(), "10.0.0.5");
    }

    #[test]
    fn zones_and_brackets_belong_to_ipv6_and_prefixes_are_digits() {
        let keys = ClientAddress::default();
        for bad in ["10.0.0.1%eth0", "[10.0.0.1]", "fe80::1%", "[fe80::1%]"] {
            assert!(keys.key(bad, &[]).is_err(), "{bad}");
        }
        assert_eq!(keys.key("[fe80::1%eth0]", &[]).unwrap(), "fe80::/64");
        assert_eq!(keys.key("[::ffff:10.0.0.1]", &[]).unwrap(), "10.0.0.1");
        for bad in ["10.0.0.0/+8", "10.0.0.0/", "::/ 0"] {
            assert!(ClientAddress::new(32, 64, &[bad]).is_err(), "{bad}");
        }
        assert!(ClientAddress::new(32, 64, &["10.0.0.0/08"]).is_ok());
    }

    #[test]
    fn bad_input_is_named() {
        let e = ClientAddress::new(33, 64, &NONE).unwrap_err();
        assert!(e.to_string().contains("not 33 and 64"), "{e}");
        let e = ClientAddress::new(32, 64, &["10.0.0.0/40"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"trusted proxy "10.0.0.0/40" is not an address or CIDR network"#
        );
        assert!(ClientAddress::new(32, 64, &["proxy.local"]).is_err());
        let e = ClientAddress::default().key("1.2.3.4:80", &[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"peer address "1.2.3.4:80" is not an IP address"#
        );
    }
}
