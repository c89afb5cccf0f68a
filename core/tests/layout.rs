//! The shared layout: sizes pinned (a change must bump `LAYOUT_VERSION`),
//! all-zero memory is a fresh table, the table's state lives next to its
//! slots, and the descriptor names what differs.

use std::mem::{align_of, size_of};

use sds_core::{
    Error, ErrorCode, LayoutDescriptor, LayoutField, Point, PointTable, Slot, TableState,
    LAYOUT_VERSION, MAX_NAME_LEN,
};

#[test]
fn sizes_and_alignments_are_pinned() {
    assert_eq!((size_of::<Slot>(), align_of::<Slot>()), (3072, 64));
    assert_eq!(
        (size_of::<TableState>(), align_of::<TableState>()),
        (64, 64)
    );
    assert_eq!((size_of::<Point>(), align_of::<Point>()), (2640, 8));
    assert_eq!(size_of::<LayoutDescriptor>(), 4 * LayoutField::ALL.len());
    assert_eq!(LAYOUT_VERSION, 7);
}

/// Where a name lands is part of the layout: a process hashing names
/// another way would not find the points another process made, and would
/// make them again. The slots of a few names in a fresh table are pinned;
/// a new name hash must bump `LAYOUT_VERSION` and these slots together.
#[test]
fn the_slots_names_hash_to_are_pinned() {
    let table = PointTable::new((0..4096).map(|_| Slot::new()).collect::<Vec<_>>()).unwrap();
    let names: [&[u8]; 5] = [
        b"a",
        b"orderService",
        b"orderService.process",
        b"payment.refund.v2.partner-42",
        b"inventory.reserve.warehouse-eu-west-3.v7",
    ];
    let slots: Vec<u32> = names
        .iter()
        .map(|n| table.insert(n).unwrap().index())
        .collect();
    assert_eq!(
        slots,
        [384, 800, 1952, 608, 385],
        "LAYOUT_VERSION {LAYOUT_VERSION}"
    );
}

/// The bytes of `v`. Every type read here is made of integer atomics with no
/// padding (the sizes above add up), so every byte is initialised.
fn bytes<T>(v: &T) -> &[u8] {
    // SAFETY: `v` is a live reference to `size_of::<T>()` initialised bytes,
    // and nothing writes them while the slice is read.
    unsafe { std::slice::from_raw_parts((v as *const T).cast::<u8>(), size_of::<T>()) }
}

#[test]
fn a_fresh_table_is_all_zero_bytes() {
    assert!(bytes(&Slot::new()).iter().all(|&b| b == 0));
    assert!(bytes(&TableState::new()).iter().all(|&b| b == 0));
}

#[test]
fn two_views_over_one_state_find_each_others_deep_names() {
    let state = TableState::new();
    let slots: Vec<Slot> = (0..1024).map(|_| Slot::new()).collect();
    let a = PointTable::over(&state, &slots).unwrap();
    let b = PointTable::over(&state, &slots).unwrap();
    // At 85 % load many names sit beyond their home bucket.
    let names: Vec<String> = (0..870).map(|i| format!("svc{i}.method")).collect();
    let ids: Vec<_> = names
        .iter()
        .map(|n| a.insert(n.as_bytes()).unwrap())
        .collect();
    assert_eq!(b.len(), 870, "the count is the table's, not the view's");
    for (name, id) in names.iter().zip(&ids) {
        assert_eq!(b.lookup(name.as_bytes()), Ok(Some(*id)), "{name}");
    }
    assert_eq!(b.insert(b"from b"), a.lookup(b"from b").map(Option::unwrap));
    assert_eq!(a.len(), 871);
}

#[test]
fn the_descriptor_names_the_first_difference() {
    let ours = LayoutDescriptor::for_capacity(4096);
    assert_eq!(ours.first_difference(&ours), None);
    assert_eq!(ours.check(&ours), Ok(()));
    assert_eq!(ours.capacity, 4096);
    assert_eq!(ours.slot_size, 3072);
    assert_eq!(ours.slot_align, 64);
    assert_eq!(ours.state_size, 64);
    assert_eq!(ours.max_name_len, MAX_NAME_LEN as u32);
    assert_eq!(
        (
            ours.counter_bucket_ms,
            ours.counter_buckets,
            ours.counter_ring
        ),
        (1000, 10, 30)
    );
    assert_eq!((ours.peak_cycle_ms, ours.peak_ring), (10_000, 3));
    assert_eq!(ours.pointer_width, usize::BITS);
    assert_eq!(ours.byte_order.to_ne_bytes(), 0x0102_0304u32.to_ne_bytes());

    let mut theirs = LayoutDescriptor::for_capacity(1024);
    assert_eq!(
        ours.first_difference(&theirs),
        Some(("capacity", 4096, 1024))
    );
    theirs.capacity = 4096;
    theirs.byte_order = theirs.byte_order.swap_bytes();
    theirs.atomic_u64_size = 4;
    assert_eq!(
        ours.first_difference(&theirs),
        Some(("byte_order", 0x0102_0304, 0x0403_0201))
    );
    let err = ours.check(&theirs).unwrap_err();
    assert_eq!(err, Error::LayoutMismatch(LayoutField::ByteOrder));
    assert_eq!(err.code(), ErrorCode::LayoutMismatch);
    assert_eq!(err.code().as_u32(), 15);
    assert_eq!(err.as_str(), "SDS_LAYOUT_MISMATCH");
    assert_eq!(
        err.to_string(),
        "shared table has another layout: byte_order differs"
    );
    for (i, f) in LayoutField::ALL.iter().enumerate() {
        let mut other = ours;
        // The descriptor's i-th u32 is the i-th field.
        assert_eq!(bytes(&ours)[4 * i..4 * i + 4], ours.get(*f).to_ne_bytes());
        match f {
            LayoutField::LayoutVersion => other.layout_version ^= 1,
            LayoutField::Capacity => other.capacity ^= 1,
            LayoutField::SlotSize => other.slot_size ^= 1,
            LayoutField::SlotAlign => other.slot_align ^= 1,
            LayoutField::StateSize => other.state_size ^= 1,
            LayoutField::StateAlign => other.state_align ^= 1,
            LayoutField::CounterBucketMs => other.counter_bucket_ms ^= 1,
            LayoutField::CounterBuckets => other.counter_buckets ^= 1,
            LayoutField::CounterRing => other.counter_ring ^= 1,
            LayoutField::PeakCycleMs => other.peak_cycle_ms ^= 1,
            LayoutField::PeakRing => other.peak_ring ^= 1,
            LayoutField::MaxNameLen => other.max_name_len ^= 1,
            LayoutField::StrategyFields => other.strategy_fields ^= 1,
            LayoutField::PointerWidth => other.pointer_width ^= 1,
            LayoutField::ByteOrder => other.byte_order ^= 1,
            LayoutField::AtomicU32Size => other.atomic_u32_size ^= 1,
            LayoutField::AtomicU64Size => other.atomic_u64_size ^= 1,
        }
        assert_eq!(ours.differing_field(&other), Some(*f));
        assert_eq!(ours.first_difference(&other).unwrap().0, f.as_str());
    }
}
