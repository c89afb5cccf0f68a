//! `ClientAddress` against std's address parsing: every way peers and
//! proxies write one address gives one key, text std does not read as an
//! address (past the brackets and zone the module documents) is refused,
//! and the `X-Forwarded-For` walk follows its documented rule.
//!
//! The properties run `PROPTEST_CASES` cases each (a few hundred by
//! default); run them long with e.g. `PROPTEST_CASES=100000`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use proptest::prelude::*;
use sds_http::ClientAddress;
use sds_testkit::proptest_config as config;

const NONE: [&str; 0] = [];

/// The address in `text` as the module documents it, read by std: an IPv4
/// or IPv6 address, IPv6 optionally in brackets (RFC 3986) and with a
/// non-empty zone (RFC 4007, `fe80::1%eth0`); an IPv4-mapped IPv6 address
/// is its IPv4 address. Spaces around are not part of it.
fn oracle(text: &str) -> Option<IpAddr> {
    let text = text.trim();
    let (v6_text, bracketed) = match text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        Some(inner) => (inner, true),
        None => (text, false),
    };
    let (address, zone) = match v6_text.split_once('%') {
        Some((address, zone)) => (address, Some(zone)),
        None => (v6_text, None),
    };
    let address = if bracketed || zone.is_some() {
        if zone == Some("") {
            return None;
        }
        IpAddr::V6(address.parse::<Ipv6Addr>().ok()?)
    } else {
        text.parse::<IpAddr>().ok()?
    };
    Some(match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        v4 => v4,
    })
}

/// The key of `address` masked to its family's prefix: the network's text,
/// with `/bits` unless every bit counts.
fn oracle_key(address: IpAddr, v4_bits: u8, v6_bits: u8) -> String {
    // The top `bits` of a `width`-bit address.
    let keep = |bits: u8, width: u8| match bits {
        0 => 0,
        _ => (u128::MAX << (128 - bits)) >> (128 - width),
    };
    let (net, bits, width) = match address {
        IpAddr::V4(a) => {
            let net = (u128::from(u32::from(a)) & keep(v4_bits, 32)) as u32;
            (IpAddr::V4(Ipv4Addr::from(net)), v4_bits, 32)
        }
        IpAddr::V6(a) => {
            let net = u128::from(a) & keep(v6_bits, 128);
            (IpAddr::V6(Ipv6Addr::from(net)), v6_bits, 128)
        }
    };
    if bits == width {
        net.to_string()
    } else {
        format!("{net}/{bits}")
    }
}

/// An IPv4-mapped address as IPv4, as the module documents.
fn plain(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        v4 => v4,
    }
}

fn within(address: IpAddr, network: IpAddr, bits: u8) -> bool {
    match (address, network) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let keep = if bits == 0 {
                0
            } else {
                u32::MAX << (32 - bits)
            };
            u32::from(a) & keep == u32::from(n) & keep
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let keep = if bits == 0 {
                0
            } else {
                u128::MAX << (128 - bits)
            };
            u128::from(a) & keep == u128::from(n) & keep
        }
        _ => false,
    }
}

/// An address, with small pools so that proxies and clients meet.
fn address() -> impl Strategy<Value = IpAddr> {
    prop_oneof![
        any::<[u8; 4]>().prop_map(|o| IpAddr::V4(o.into())),
        any::<[u16; 8]>().prop_map(|s| IpAddr::V6(s.into())),
        (0u8..4).prop_map(|d| IpAddr::V4(Ipv4Addr::new(10, 0, 0, d))),
        (0u16..4).prop_map(|d| IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, d))),
        (0u16..3, any::<u16>())
            .prop_map(|(g, d)| IpAddr::V6(Ipv6Addr::new(0xfe80, 0, 0, g, 0, 0, d, 1))),
        // Zeros and ones in runs: `::`, `::1`, mapped and compatible forms.
        any::<[bool; 8]>().prop_map(|z| {
            let mut s = [0u16; 8];
            for (i, zero) in z.iter().enumerate() {
                s[i] = if *zero { 0 } else { 0xffff };
            }
            IpAddr::V6(s.into())
        }),
    ]
}

/// One way to write `address` (`seed` chooses), and whether it is IPv6
/// text (which brackets and zones belong to).
fn spell(address: IpAddr, seed: u32) -> String {
    let v6_text = match address {
        IpAddr::V4(v4) => match seed % 4 {
            0 | 1 => return v4.to_string(),
            2 => v4.to_ipv6_mapped().to_string(),
            _ => {
                let o = v4.octets();
                format!(
                    "::FFFF:{:x}:{:X}",
                    u16::from_be_bytes([o[0], o[1]]),
                    u16::from_be_bytes([o[2], o[3]])
                )
            }
        },
        IpAddr::V6(v6) => match seed % 4 {
            0 | 1 => v6.to_string(),
            2 => v6
                .segments()
                .iter()
                .map(|s| format!("{s:04X}"))
                .collect::<Vec<_>>()
                .join(":"),
            _ => v6
                .segments()
                .iter()
                .map(|s| format!("{s:x}"))
                .collect::<Vec<_>>()
                .join(":"),
        },
    };
    let zoned = match (seed >> 2) % 3 {
        0 => v6_text,
        1 => format!("{v6_text}%eth0"),
        _ => format!("{v6_text}%25"),
    };
    if (seed >> 4) % 2 == 0 {
        format!("[{zoned}]")
    } else {
        zoned
    }
}

/// Text near addresses: pieces of them, ports, brackets, zones, spaces.
fn near_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[0-9a-fA-F:.\\[\\]%/ ,+\\-]{0,24}",
        (address(), any::<u32>(), "[:%\\]\\[ ]?[0-9a-z]{0,3}")
            .prop_map(|(a, seed, tail)| format!("{}{tail}", spell(a, seed))),
        (address(), 0u16..=65535)
            .prop_map(|(a, port)| std::net::SocketAddr::new(a, port).to_string()),
        any::<String>(),
    ]
}

proptest! {
    #![proptest_config(config(256))]

    /// Every spelling of an address is that address's key.
    #[test]
    fn one_address_one_key(
        a in address(),
        seed in any::<u32>(),
        v4_bits in 0u8..=32,
        v6_bits in 0u8..=128,
        pad in "[ \t]{0,2}",
    ) {
        let keys = ClientAddress::new(v4_bits, v6_bits, &NONE).unwrap();
        let text = format!("{pad}{}{pad}", spell(a, seed));
        let mapped = oracle(&text);
        prop_assert_eq!(mapped, Some(plain(a)), "oracle on {:?}", text);
        prop_assert_eq!(keys.key(&text, &[]), Ok(oracle_key(plain(a), v4_bits, v6_bits)), "{:?}", text);
    }

    /// Text std does not read as an address (with a port, say) is refused;
    /// text it does gives the address's key.
    #[test]
    fn peers_agree_with_std(text in near_text()) {
        let keys = ClientAddress::default();
        match oracle(&text) {
            Some(a) => prop_assert_eq!(keys.key(&text, &[]), Ok(oracle_key(a, 32, 64)), "{:?}", text),
            None => prop_assert!(keys.key(&text, &[]).is_err(), "{:?} taken", text),
        }
    }

    /// A trusted network is an address and a prefix length in decimal
    /// digits, at most its family's bits (a mapped address being IPv4, its
    /// bits count as IPv4's); it trusts exactly the addresses within it.
    #[test]
    fn trusted_networks_agree_with_std(
        network in prop_oneof![
            near_text(),
            (address(), any::<u32>(), "(/|/\\+|/0|/ )?[0-9]{0,3}").prop_map(|(a, seed, bits)| format!("{}{bits}", spell(a, seed))),
        ],
        peer in address(),
    ) {
        let want = match network.split_once('/') {
            Some((address, bits)) => {
                let family_bits = |a: IpAddr| if a.is_ipv4() { 32 } else { 128 };
                let bits = if !bits.is_empty() && bits.bytes().all(|b| b.is_ascii_digit()) {
                    bits.parse::<u8>().ok()
                } else {
                    None
                };
                oracle(address).zip(bits).filter(|&(a, bits)| bits <= family_bits(a))
            }
            None => oracle(&network).map(|a| (a, if a.is_ipv4() { 32 } else { 128 })),
        };
        let got = ClientAddress::new(32, 128, &[network.as_str()]);
        prop_assert_eq!(got.is_ok(), want.is_some(), "{:?}", network);
        if let (Ok(keys), Some((net, bits))) = (got, want) {
            // A trusted peer hands over to the hop it names.
            let client = "192.0.2.1";
            let key = keys.key(&peer.to_string(), &[client]).unwrap();
            let trusted = within(plain(peer), net, bits);
            let want = if trusted { client.to_string() } else { oracle_key(plain(peer), 32, 128) };
            prop_assert_eq!(key, want, "peer {} network {:?}", peer, network);
        }
    }

    /// The walk from the right: past every trusted address; an entry that
    /// is no address stops it at the hop that wrote it.
    #[test]
    fn forwarded_for_walks_as_documented(
        peer in address(),
        hops in prop::collection::vec(prop_oneof![
            4 => (address(), any::<u32>()).prop_map(|(a, seed)| spell(a, seed)),
            1 => near_text(),
            1 => Just(String::new()),
        ], 0..6),
        cuts in prop::collection::vec(any::<bool>(), 6),
        trusted in prop::collection::vec((address(), 0u8..=128), 0..4),
        pad in "[ \t]{0,2}",
    ) {
        let trusted: Vec<String> = trusted
            .iter()
            .map(|&(a, bits)| {
                // A mapped address is IPv4: its bits are IPv4's.
                let a = plain(a);
                format!("{a}/{}", if a.is_ipv4() { bits % 33 } else { bits })
            })
            .collect();
        let keys = ClientAddress::new(32, 64, &trusted).unwrap();
        let networks: Vec<(IpAddr, u8)> = trusted
            .iter()
            .map(|t| {
                let (a, bits) = t.split_once('/').unwrap();
                (oracle(a).unwrap(), bits.parse().unwrap())
            })
            .collect();
        // The hops as headers: each a comma-separated list, split where
        // `cuts` says.
        let mut headers = vec![String::new()];
        for (i, hop) in hops.iter().enumerate() {
            if i > 0 {
                if cuts[i] {
                    headers.push(String::new());
                } else {
                    headers.last_mut().unwrap().push(',');
                }
            }
            headers.last_mut().unwrap().push_str(&format!("{pad}{hop}{pad}"));
        }
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        let entries: Vec<&str> = hops
            .iter()
            .flat_map(|h| h.split(','))
            .map(str::trim)
            .filter(|h| !h.is_empty())
            .collect();
        let mut client = plain(peer);
        for entry in entries.iter().rev() {
            if !networks.iter().any(|&(net, bits)| within(client, net, bits)) {
                break;
            }
            match oracle(entry) {
                Some(a) => client = a,
                None => break,
            }
        }
        let got = keys.key(&peer.to_string(), &headers);
        prop_assert_eq!(got, Ok(oracle_key(client, 32, 64)), "{:?} trusted {:?}", headers, trusted);
    }
}
