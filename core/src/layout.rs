//! `LayoutDescriptor`: everything two processes must agree on before they
//! share a table's memory. A crate that maps a table writes the descriptor of
//! its build into the file's header and compares it on attach; a difference
//! is [`Error::LayoutMismatch`], naming the field, and the memory is never
//! reinterpreted.
//!
//! The shared memory is a [`TableState`] followed by `capacity` [`Slot`]s;
//! all zero is a fresh table. Bump [`LAYOUT_VERSION`] on any change to the
//! layout or the meaning of a word that the other fields do not show (a
//! field reordered, a state's encoding changed).

use crate::counters;
use crate::error::Error;
use crate::peak;
use crate::sync::{AtomicU32, AtomicU64};
use crate::table::{Slot, TableState, MAX_NAME_LEN};
use crate::Field;
use core::mem::{align_of, size_of};

/// The version of the shared layout described by [`LayoutDescriptor`].
pub const LAYOUT_VERSION: u32 = 7;

/// Written by the byte order of the machine that writes it: another byte
/// order reads `0x0403_0201`.
const BYTE_ORDER_MARK: u32 = 0x0102_0304;

/// The layout of a shared table, one `u32` per property (`repr(C)`, 68
/// bytes, no padding), in the order of [`LayoutField::ALL`].
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct LayoutDescriptor {
    /// [`LAYOUT_VERSION`].
    pub layout_version: u32,
    /// Slots in the table.
    pub capacity: u32,
    /// `size_of::<Slot>()`.
    pub slot_size: u32,
    /// `align_of::<Slot>()`.
    pub slot_align: u32,
    /// `size_of::<TableState>()`.
    pub state_size: u32,
    /// `align_of::<TableState>()`.
    pub state_align: u32,
    /// Width of a counter bucket, ms.
    pub counter_bucket_ms: u32,
    /// Counter buckets in the sliding window.
    pub counter_buckets: u32,
    /// Counter buckets in the ring.
    pub counter_ring: u32,
    /// Width of a max-concurrency cycle, ms (one bucket per cycle).
    pub peak_cycle_ms: u32,
    /// Max-concurrency cycles in the ring.
    pub peak_ring: u32,
    /// [`MAX_NAME_LEN`].
    pub max_name_len: u32,
    /// Strategy fields stored per copy.
    pub strategy_fields: u32,
    /// Bits of a pointer.
    pub pointer_width: u32,
    /// `0x0102_0304` as the writer's byte order stores it.
    pub byte_order: u32,
    /// `size_of::<AtomicU32>()`.
    pub atomic_u32_size: u32,
    /// `size_of::<AtomicU64>()`.
    pub atomic_u64_size: u32,
}

/// A field of [`LayoutDescriptor`], as [`Error::LayoutMismatch`] names it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum LayoutField {
    /// [`LayoutDescriptor::layout_version`].
    LayoutVersion,
    /// [`LayoutDescriptor::capacity`].
    Capacity,
    /// [`LayoutDescriptor::slot_size`].
    SlotSize,
    /// [`LayoutDescriptor::slot_align`].
    SlotAlign,
    /// [`LayoutDescriptor::state_size`].
    StateSize,
    /// [`LayoutDescriptor::state_align`].
    StateAlign,
    /// [`LayoutDescriptor::counter_bucket_ms`].
    CounterBucketMs,
    /// [`LayoutDescriptor::counter_buckets`].
    CounterBuckets,
    /// [`LayoutDescriptor::counter_ring`].
    CounterRing,
    /// [`LayoutDescriptor::peak_cycle_ms`].
    PeakCycleMs,
    /// [`LayoutDescriptor::peak_ring`].
    PeakRing,
    /// [`LayoutDescriptor::max_name_len`].
    MaxNameLen,
    /// [`LayoutDescriptor::strategy_fields`].
    StrategyFields,
    /// [`LayoutDescriptor::pointer_width`].
    PointerWidth,
    /// [`LayoutDescriptor::byte_order`].
    ByteOrder,
    /// [`LayoutDescriptor::atomic_u32_size`].
    AtomicU32Size,
    /// [`LayoutDescriptor::atomic_u64_size`].
    AtomicU64Size,
}

impl LayoutField {
    /// Every field, in the descriptor's order.
    pub const ALL: [LayoutField; 17] = [
        LayoutField::LayoutVersion,
        LayoutField::Capacity,
        LayoutField::SlotSize,
        LayoutField::SlotAlign,
        LayoutField::StateSize,
        LayoutField::StateAlign,
        LayoutField::CounterBucketMs,
        LayoutField::CounterBuckets,
        LayoutField::CounterRing,
        LayoutField::PeakCycleMs,
        LayoutField::PeakRing,
        LayoutField::MaxNameLen,
        LayoutField::StrategyFields,
        LayoutField::PointerWidth,
        LayoutField::ByteOrder,
        LayoutField::AtomicU32Size,
        LayoutField::AtomicU64Size,
    ];

    /// The field's name, as the descriptor spells it.
    pub const fn as_str(self) -> &'static str {
        match self {
            LayoutField::LayoutVersion => "layout_version",
            LayoutField::Capacity => "capacity",
            LayoutField::SlotSize => "slot_size",
            LayoutField::SlotAlign => "slot_align",
            LayoutField::StateSize => "state_size",
            LayoutField::StateAlign => "state_align",
            LayoutField::CounterBucketMs => "counter_bucket_ms",
            LayoutField::CounterBuckets => "counter_buckets",
            LayoutField::CounterRing => "counter_ring",
            LayoutField::PeakCycleMs => "peak_cycle_ms",
            LayoutField::PeakRing => "peak_ring",
            LayoutField::MaxNameLen => "max_name_len",
            LayoutField::StrategyFields => "strategy_fields",
            LayoutField::PointerWidth => "pointer_width",
            LayoutField::ByteOrder => "byte_order",
            LayoutField::AtomicU32Size => "atomic_u32_size",
            LayoutField::AtomicU64Size => "atomic_u64_size",
        }
    }
}

impl LayoutDescriptor {
    /// The layout of this build's tables of `capacity` slots.
    pub const fn for_capacity(capacity: u32) -> LayoutDescriptor {
        LayoutDescriptor {
            layout_version: LAYOUT_VERSION,
            capacity,
            slot_size: size_of::<Slot>() as u32,
            slot_align: align_of::<Slot>() as u32,
            state_size: size_of::<TableState>() as u32,
            state_align: align_of::<TableState>() as u32,
            counter_bucket_ms: counters::BUCKET_MS as u32,
            counter_buckets: counters::WINDOW as u32,
            counter_ring: counters::RING as u32,
            peak_cycle_ms: peak::CYCLE_MS as u32,
            peak_ring: peak::RING as u32,
            max_name_len: MAX_NAME_LEN as u32,
            strategy_fields: Field::COUNT as u32,
            pointer_width: usize::BITS,
            byte_order: BYTE_ORDER_MARK,
            atomic_u32_size: size_of::<AtomicU32>() as u32,
            atomic_u64_size: size_of::<AtomicU64>() as u32,
        }
    }

    /// The value of `field`.
    pub const fn get(&self, field: LayoutField) -> u32 {
        match field {
            LayoutField::LayoutVersion => self.layout_version,
            LayoutField::Capacity => self.capacity,
            LayoutField::SlotSize => self.slot_size,
            LayoutField::SlotAlign => self.slot_align,
            LayoutField::StateSize => self.state_size,
            LayoutField::StateAlign => self.state_align,
            LayoutField::CounterBucketMs => self.counter_bucket_ms,
            LayoutField::CounterBuckets => self.counter_buckets,
            LayoutField::CounterRing => self.counter_ring,
            LayoutField::PeakCycleMs => self.peak_cycle_ms,
            LayoutField::PeakRing => self.peak_ring,
            LayoutField::MaxNameLen => self.max_name_len,
            LayoutField::StrategyFields => self.strategy_fields,
            LayoutField::PointerWidth => self.pointer_width,
            LayoutField::ByteOrder => self.byte_order,
            LayoutField::AtomicU32Size => self.atomic_u32_size,
            LayoutField::AtomicU64Size => self.atomic_u64_size,
        }
    }

    /// The first field (in the descriptor's order) where `other` differs:
    /// its name, this descriptor's value and `other`'s.
    pub fn first_difference(&self, other: &LayoutDescriptor) -> Option<(&'static str, u64, u64)> {
        self.differing_field(other)
            .map(|f| (f.as_str(), self.get(f) as u64, other.get(f) as u64))
    }

    /// The first field where `other` differs.
    pub fn differing_field(&self, other: &LayoutDescriptor) -> Option<LayoutField> {
        LayoutField::ALL
            .iter()
            .copied()
            .find(|&f| self.get(f) != other.get(f))
    }

    /// `Ok` when `other` (a file's header) describes this layout, else
    /// [`Error::LayoutMismatch`] naming the first field that differs.
    pub fn check(&self, other: &LayoutDescriptor) -> Result<(), Error> {
        match self.differing_field(other) {
            Some(field) => Err(Error::LayoutMismatch(field)),
            None => Ok(()),
        }
    }
}
