//! What `enter` returns and `exit` needs: a small `Copy` value the caller
//! holds (no thread-locals, so it survives `await` and thread hops).

/// Marks on a request at `enter`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct Flags(u32);

impl Flags {
    /// Ordinary traffic.
    pub const NONE: Flags = Flags(0);
    /// The request is load-test traffic.
    pub const PRESSURE_TEST: Flags = Flags(1);

    /// Flags from their bits; unknown bits are ignored.
    pub const fn from_bits(bits: u32) -> Flags {
        Flags(bits & 1)
    }

    /// The bits.
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// Whether the request is load-test traffic.
    pub const fn pressure_test(self) -> bool {
        self.0 & 1 != 0
    }
}

/// How a request ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Outcome {
    /// It returned normally.
    Ok = 0,
    /// It failed with an error that counts as an exception.
    Error = 1,
}

pub(crate) const PERMIT: u8 = 1;
pub(crate) const PROBE: u8 = 2;
pub(crate) const DOWNGRADED: u8 = 4;
const STATE_MASK: u8 = PERMIT | PROBE | DOWNGRADED;

/// One request between `enter` and `exit`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub(crate) start_ms: u64,
    pub(crate) point: u32,
    pub(crate) probe_generation: u16,
    pub(crate) state: u8,
    pub(crate) reason: Option<crate::Reason>,
}

/// An entry's fields as plain integers, for bindings that keep entries in
/// their own types (C's `sds_entry`, Node's packed number).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct EntryParts {
    /// The time of `enter`.
    pub start_ms: u64,
    /// The point's index in its table.
    pub point: u32,
    /// Which delay a probe belongs to.
    pub probe_generation: u16,
    /// Bits: 1 permit held, 2 probe, 4 downgraded.
    pub state: u8,
    /// The reason's code, 0 for none.
    pub reason: u8,
}

impl Entry {
    pub(crate) const fn started(start_ms: u64, permit: bool) -> Entry {
        Entry {
            start_ms,
            point: 0,
            probe_generation: 0,
            state: if permit { PERMIT } else { 0 },
            reason: None,
        }
    }

    /// Whether the caller must skip the real work and use its fallback.
    pub const fn downgraded(&self) -> bool {
        self.state & DOWNGRADED != 0
    }

    /// Why it was downgraded; `None` when it was not.
    pub const fn reason(&self) -> Option<crate::Reason> {
        self.reason
    }

    /// The time of `enter`.
    pub const fn start_ms(&self) -> u64 {
        self.start_ms
    }

    /// Whether the entry holds a concurrency permit that `exit` returns.
    pub const fn holds_permit(&self) -> bool {
        self.state & PERMIT != 0
    }

    /// Whether the request passed as the probe of a delay.
    pub const fn is_probe(&self) -> bool {
        self.state & PROBE != 0
    }

    /// The point it entered.
    pub const fn point(&self) -> crate::PointId {
        crate::PointId(self.point)
    }

    /// The fields as integers.
    pub const fn into_parts(self) -> EntryParts {
        EntryParts {
            start_ms: self.start_ms,
            point: self.point,
            probe_generation: self.probe_generation,
            state: self.state,
            reason: match self.reason {
                Some(r) => r.code(),
                None => 0,
            },
        }
    }

    /// An entry from its integers; unknown state bits and reason codes are
    /// dropped, so any input gives a well-formed entry.
    pub const fn from_parts(parts: EntryParts) -> Entry {
        Entry {
            start_ms: parts.start_ms,
            point: parts.point,
            probe_generation: parts.probe_generation,
            state: parts.state & STATE_MASK,
            reason: crate::Reason::from_code(parts.reason),
        }
    }
}
