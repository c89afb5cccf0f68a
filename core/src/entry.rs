//! What `enter` returns and `exit` needs: a small `Copy` value the caller
//! holds (no thread-locals, so it survives `await` and thread hops).

use crate::error::{ArgumentRule, Error};

/// Marks on a request at `enter`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct Flags(u32);

impl Flags {
    /// Ordinary traffic.
    pub const NONE: Flags = Flags(0);
    /// The request is load-test traffic.
    pub const PRESSURE_TEST: Flags = Flags(1);

    /// Every bit a flag uses.
    pub const KNOWN_BITS: u32 = 1;

    /// Flags from their bits; unknown bits are ignored.
    pub const fn from_bits(bits: u32) -> Flags {
        Flags(bits & Flags::KNOWN_BITS)
    }

    /// Flags from their bits as a caller gave them: any bit outside
    /// [`Flags::KNOWN_BITS`] is [`ArgumentRule::UnknownFlags`]. (A Java `int`
    /// or a C `uint32_t` converts with `as u32`: a negative one has unknown
    /// bits.)
    pub const fn from_known_bits(bits: u32) -> Result<Flags, Error> {
        if bits & !Flags::KNOWN_BITS != 0 {
            Err(Error::InvalidArgument(ArgumentRule::UnknownFlags))
        } else {
            Ok(Flags(bits))
        }
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

/// How a request ended, for exit (`sds_exit` in C).
// `repr(u32)`: cbindgen makes C's `sds_outcome` of it, a `uint32_t`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Outcome {
    /// It returned normally.
    Ok = 0,
    /// It failed with an error that counts as an exception.
    Error = 1,
    /// The caller lost the entry without exiting it (a binding exits an
    /// entry garbage-collected open with this). Its permit is returned; a
    /// request that was not downgraded counts as an exception (it never
    /// said it succeeded), a probe as a failed one. When it ended is
    /// unknown, so it is no timeout and no sample of an adaptive limit.
    Abandoned = 2,
}

impl Outcome {
    /// The outcome with this code (0 ok, 1 error, 2 abandoned); any other number is
    /// [`ArgumentRule::UnknownOutcome`]. Takes `i64` so that a C `uint32_t`,
    /// a Java `int` and a whole JavaScript number all fit unchanged.
    pub const fn from_code(code: i64) -> Result<Outcome, Error> {
        match code {
            0 => Ok(Outcome::Ok),
            1 => Ok(Outcome::Error),
            2 => Ok(Outcome::Abandoned),
            _ => Err(Error::InvalidArgument(ArgumentRule::UnknownOutcome)),
        }
    }
}

pub(crate) const PERMIT: u8 = EntryParts::PERMIT;
pub(crate) const PROBE: u8 = EntryParts::PROBE;
pub(crate) const DOWNGRADED: u8 = EntryParts::DOWNGRADED;
const STATE_MASK: u8 = PERMIT | PROBE | DOWNGRADED;

/// The layout of [`Entry::pack`], low bit first: state (3 bits, as
/// [`EntryParts::state`]), reason code (4), point index (20), probe
/// generation or, for an entry that is no probe, its wait in ms (16): 43
/// bits, exact in a JavaScript number or a Java `long`.
/// An entry that is not a probe stays below 2^27, a small integer to a
/// JavaScript engine. The start time is not packed: the caller passed it in.
pub mod packed {
    /// Bit set while the entry holds a concurrency permit.
    pub const PERMIT: u64 = 1;
    /// Bit set when the entry is a delay's probe.
    pub const PROBE: u64 = 2;
    /// Bit set when the entry is downgraded.
    pub const DOWNGRADED: u64 = 4;
    /// Shift of the reason code.
    pub const REASON_SHIFT: u32 = 3;
    /// Mask of the reason code once shifted.
    pub const REASON_MASK: u64 = 0xf;
    /// Shift of the point index.
    pub const POINT_SHIFT: u32 = 7;
    /// Width of the point index (holds `MAX_CAPACITY - 1`).
    pub const POINT_BITS: u32 = 20;
    /// Shift of the probe generation (a probe) or the wait (any other entry).
    pub const GENERATION_SHIFT: u32 = 27;
    /// Bits in all: every packed entry is below `1 << BITS`.
    pub const BITS: u32 = 43;
}

const _: () = assert!(crate::table::MAX_CAPACITY <= 1 << packed::POINT_BITS);
const _: () = assert!(crate::Reason::ALL.len() as u64 <= packed::REASON_MASK);
const _: () = assert!(crate::strategy::MAX_QUEUEING_MS <= u16::MAX as i64);

/// One request between `enter` and `exit`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub(crate) start_ms: u64,
    pub(crate) point: u32,
    /// A probe's generation; for any other entry, the ms the caller waits
    /// before it runs the request (pacing never makes a probe wait), so
    /// `Result<Entry, Error>` stays two words.
    pub(crate) probe_generation: u16,
    pub(crate) state: u8,
    pub(crate) reason: Option<crate::Reason>,
}

/// One request between enter and exit as plain integers, for bindings that
/// keep entries in their own types (C's `sds_entry`, Node's packed number).
/// Plain data the caller owns (a local variable, a field of a request
/// struct); copying it is fine. Pass it to exit exactly once, on the table
/// it came from.
// `repr(C)`: cbindgen makes C's `sds_entry` of it.
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct EntryParts {
    /// The `now_ms` of enter.
    pub start_ms: u64,
    /// The point's index in its table.
    pub point: u32,
    /// Which delay a probe belongs to.
    pub probe_generation: u16,
    /// Bits: 1 holds a concurrency permit, 2 is a delay's probe, 4 downgraded.
    pub state: u8,
    /// The reason's code (`sds_reason` in C): 0 (none) unless downgraded.
    pub reason: u8,
    /// Ms to wait before running the request (a paced point): 0 unless
    /// `maxQueueingTimeMs` is set. Never set on a probe.
    pub wait_ms: u16,
}

// The state bits stay out of C's header (`sds_entry.state` documents them).
/// cbindgen:ignore
impl EntryParts {
    /// State bit: the entry holds a concurrency permit.
    pub const PERMIT: u8 = 1;
    /// State bit: the entry is a delay's probe.
    pub const PROBE: u8 = 2;
    /// State bit: the entry is downgraded.
    pub const DOWNGRADED: u8 = 4;
}

impl Entry {
    /// The entry in one integer of [`packed::BITS`] bits, without its start
    /// time (see [`packed`]).
    pub const fn pack(&self) -> u64 {
        let p = self.into_parts();
        let high = if p.state & PROBE != 0 {
            p.probe_generation
        } else {
            p.wait_ms
        };
        p.state as u64
            | (p.reason as u64) << packed::REASON_SHIFT
            | (p.point as u64) << packed::POINT_SHIFT
            | (high as u64) << packed::GENERATION_SHIFT
    }

    /// The entry [`Entry::pack`] made, given its start time; `None` for an
    /// integer no entry packs to (at or above `1 << packed::BITS`).
    pub const fn unpack(bits: u64, start_ms: u64) -> Option<Entry> {
        if bits >> packed::BITS != 0 {
            return None;
        }
        let high = (bits >> packed::GENERATION_SHIFT) as u16;
        let probe = bits & packed::PROBE != 0;
        Some(Entry::from_parts(EntryParts {
            start_ms,
            point: ((bits >> packed::POINT_SHIFT) & ((1 << packed::POINT_BITS) - 1)) as u32,
            probe_generation: if probe { high } else { 0 },
            state: (bits & 7) as u8,
            reason: ((bits >> packed::REASON_SHIFT) & packed::REASON_MASK) as u8,
            wait_ms: if probe { 0 } else { high },
        }))
    }

    pub(crate) const fn started(start_ms: u64, permit: bool) -> Entry {
        Entry {
            start_ms,
            point: 0,
            probe_generation: 0,
            state: if permit { PERMIT } else { 0 },
            reason: None,
        }
    }

    /// Ms the caller must wait before it runs the request: a paced point
    /// (`maxQueueingTimeMs`) spaces its requests evenly at its rate. The core
    /// never sleeps; 0 for every other entry.
    pub const fn wait_ms(&self) -> u64 {
        match self.is_probe() {
            true => 0,
            false => self.probe_generation as u64,
        }
    }

    /// When the request may start: `start_ms + wait_ms`. A timeout is
    /// measured from here, so time spent queueing is not a slow call.
    pub const fn run_at_ms(&self) -> u64 {
        self.start_ms.saturating_add(self.wait_ms())
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
        let probe = self.is_probe();
        EntryParts {
            start_ms: self.start_ms,
            point: self.point,
            probe_generation: if probe { self.probe_generation } else { 0 },
            state: self.state,
            reason: match self.reason {
                Some(r) => r.code(),
                None => 0,
            },
            wait_ms: if probe { 0 } else { self.probe_generation },
        }
    }

    /// An entry from its integers; unknown state bits and reason codes are
    /// dropped, so any input gives a well-formed entry.
    pub const fn from_parts(parts: EntryParts) -> Entry {
        Entry {
            start_ms: parts.start_ms,
            point: parts.point,
            // A probe has no wait: the field is its generation's.
            probe_generation: if parts.state & PROBE != 0 {
                parts.probe_generation
            } else {
                parts.wait_ms
            },
            state: parts.state & STATE_MASK,
            reason: crate::Reason::from_code(parts.reason),
        }
    }
}
