//! Unit tests of the table: name packing, and the probe bound counted
//! bucket by bucket.

use super::*;

#[test]
fn a_tail_packs_like_a_zero_padded_little_endian_word() {
    let bytes = [0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77];
    for n in 0..=7 {
        let mut padded = [0u8; 8];
        padded[..n].copy_from_slice(&bytes[..n]);
        assert_eq!(
            tail_word(&bytes[..n]),
            u64::from_le_bytes(padded),
            "{n} bytes"
        );
    }
}

#[test]
fn names_of_every_length_differing_in_any_byte_are_distinct() {
    let slots: [Slot; 32] = core::array::from_fn(|_| Slot::new());
    let table = PointTable::new(&slots[..]).unwrap();
    let base = [b'a'; 20];
    for len in 1..=20 {
        let id = table.insert(&base[..len]).unwrap();
        for at in 0..len {
            let mut other = base;
            other[at] = b'b';
            assert_eq!(
                table.lookup(&other[..len]),
                Ok(None),
                "len {len}, byte {at}"
            );
        }
        assert_eq!(table.lookup(&base[..len]), Ok(Some(id)), "len {len}");
    }
}

use std::format;
use std::vec::Vec;

/// Point names alike but for a counter, as services name them, land
/// evenly over the parts of the hash a table reads (home bucket: high
/// bits; stride: low half; tag: bits 32 to 47), and one bit flipped
/// anywhere in a name changes about half the hash's bits.
#[test]
fn the_name_hash_spreads_names_that_differ_in_a_few_bytes() {
    let names: Vec<Vec<u8>> = (0..16_384)
        .map(|i| format!("orderService.process-{i}").into_bytes())
        .collect();
    type Part = fn(u64) -> usize;
    let parts: [(&str, Part); 3] = [
        ("home", |h| ((h as u128 * 64) >> 64) as usize),
        ("stride", |h| (((h & 0xffff_ffff) * 64) >> 32) as usize),
        ("tag", |h| (h >> 32) as usize % 64),
    ];
    for (part, of) in parts {
        let mut counts = [0u32; 64];
        for name in &names {
            counts[of(hash(name))] += 1;
        }
        // 256 a cell on average, a standard deviation of 16.
        assert!(
            counts.iter().all(|c| (192..=320).contains(c)),
            "{part}: {counts:?}"
        );
    }
    let (mut flipped, mut flips) = (0u32, 0u32);
    for name in names.iter().step_by(256) {
        for at in 0..name.len() {
            for bit in 0..8 {
                let mut other = name.clone();
                other[at] ^= 1 << bit;
                let changed = (hash(name) ^ hash(&other)).count_ones();
                assert!(changed >= 8, "{name:?} byte {at} bit {bit}: {changed}");
                flipped += changed;
                flips += 1;
            }
        }
    }
    let mean = flipped as f64 / flips as f64;
    assert!((30.0..=34.0).contains(&mean), "{mean}");
}

fn table(capacity: usize) -> PointTable<Vec<Slot>> {
    PointTable::new((0..capacity).map(|_| Slot::new()).collect()).unwrap()
}

/// Buckets read by `op`.
fn probes<T>(table: &PointTable<Vec<Slot>>, op: impl FnOnce() -> T) -> (T, u64) {
    let before = table.probes.load(Ordering::Relaxed);
    let result = op();
    (result, table.probes.load(Ordering::Relaxed) - before)
}

/// Inserts `name-0`, `name-1`, ... until the table is full to its last
/// slot; the names that made it, in slot order by id.
fn fill_completely(table: &PointTable<Vec<Slot>>) -> Vec<(Vec<u8>, PointId)> {
    let mut placed = Vec::new();
    let mut n = 0u64;
    while table.len() < table.capacity() {
        let name = format!("name-{n}").into_bytes();
        n += 1;
        let (result, read) = probes(table, || table.insert(&name));
        assert!(read <= PROBE_BUCKETS as u64, "{read} buckets");
        if let Ok(id) = result {
            placed.push((name, id));
        }
    }
    placed
}

#[test]
fn a_miss_and_a_new_name_in_a_full_large_table_read_at_most_the_probe_bound() {
    let capacity = 1 << 16;
    let t = table(capacity);
    let placed = fill_completely(&t);
    assert_eq!((t.len(), placed.len()), (capacity, capacity));
    assert_eq!(
        t.state().longest_probe.load(Ordering::Relaxed),
        PROBE_BUCKETS as u32
    );
    let slot_reads = t.slot_reads.load(Ordering::Relaxed);
    for n in 0..100 {
        let absent = format!("absent-{n}").into_bytes();
        assert_eq!(
            probes(&t, || t.lookup(&absent)),
            (Ok(None), PROBE_BUCKETS as u64)
        );
        assert_eq!(
            probes(&t, || t.insert(&absent)),
            (
                Err(Error::TableFull { capacity: 1 << 16 }),
                PROBE_BUCKETS as u64
            )
        );
        assert_eq!(
            t.stats(&absent, 0).map(|s| s.visit),
            Ok(0),
            "stats of an absent name"
        );
    }
    // 200 misses over 8 buckets of 32 slots: the tags let a slot be read
    // only when 16 bits of its hash match (1 in 32 768).
    let read = t.slot_reads.load(Ordering::Relaxed) - slot_reads;
    assert!(read <= 10, "{read} slots read past their tags");
    // Every name already in resolves, by lookup and by insert, within the bound.
    for (name, id) in &placed {
        let (found, read) = probes(&t, || t.lookup(name));
        assert_eq!(found, Ok(Some(*id)));
        assert!(read <= PROBE_BUCKETS as u64);
        assert_eq!(t.insert(name), Ok(*id));
    }
    assert_eq!(t.len(), capacity);
}

#[test]
fn a_table_of_up_to_256_slots_fills_to_exactly_its_capacity() {
    for capacity in 1..=PROBE_BUCKETS * BUCKET {
        let t = table(capacity);
        for n in 0..capacity {
            assert!(t.insert(format!("p{n}").as_bytes()).is_ok(), "{capacity}");
        }
        assert_eq!(t.len(), capacity);
        let capacity = capacity as u32;
        assert_eq!(t.insert(b"one more"), Err(Error::TableFull { capacity }));
    }
}

#[test]
fn a_lookup_reads_no_further_than_the_longest_insert() {
    let t = table(1 << 12);
    assert_eq!(probes(&t, || t.lookup(b"x")), (Ok(None), 0));
    t.insert(b"first").unwrap();
    assert_eq!(t.state().longest_probe.load(Ordering::Relaxed), 1);
    // Its home bucket has free slots: a miss stops at the first one.
    assert_eq!(probes(&t, || t.lookup(b"x")), (Ok(None), 1));
}

#[test]
fn points_lists_every_point_once_with_its_whole_name() {
    let slots: [Slot; 64] = core::array::from_fn(|_| Slot::new());
    let table = PointTable::new(&slots[..]).unwrap();
    let long = [b'z'; MAX_NAME_LEN];
    let names: [&[u8]; 5] = [b"a", b"seven77", b"eight888", b"nine-nine", &long];
    for (n, name) in names.iter().enumerate() {
        let id = table.insert(name).unwrap();
        for _ in 0..n {
            table.point(id).unwrap().enter(1_000, Flags::NONE);
        }
    }
    let mut seen: [Option<(usize, u64)>; 5] = [None; 5];
    let mut count = 0;
    for (id, name, point) in table.points() {
        count += 1;
        let n = names
            .iter()
            .position(|x| *x == name.as_bytes())
            .expect("a known name");
        assert!(seen[n].is_none(), "seen twice: {name:?}");
        assert_eq!(table.lookup(name.as_bytes()), Ok(Some(id)));
        seen[n] = Some((n, point.stats(1_000).visit));
    }
    assert_eq!(count, 5);
    for (n, entry) in seen.iter().enumerate() {
        assert_eq!(*entry, Some((n, n as u64)));
    }
}
