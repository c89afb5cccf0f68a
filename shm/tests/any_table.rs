//! `AnyTable`: background work written once reaches private and shared
//! tables alike.

mod common;

use common::TempDir;
use sds_core::{Flags, Strategy};
use sds_shm::{AnyTable, Options, Role};

fn visits(n: i64) -> Strategy {
    Strategy::from_json(format!(r#"{{"visitThreshold":{n}}}"#).as_str()).unwrap()
}

/// Sets a strategy through `Points`, enters once, and lists the points.
fn exercise(table: &AnyTable) -> Vec<(String, Option<Strategy>, u64)> {
    table
        .with_points(|t| {
            t.set_strategy(b"limited", &visits(3)).unwrap();
            let id = t.insert(b"plain").unwrap();
            t.point(id).unwrap().enter(5_000, Flags::NONE);
            let mut seen = Vec::new();
            t.for_each_point(&mut |_, name, point| {
                seen.push((
                    String::from_utf8(name.to_vec()).unwrap(),
                    point.strategy(),
                    point.stats(5_000).visit,
                ))
            });
            seen.sort_by(|a, b| a.0.cmp(&b.0));
            seen
        })
        .unwrap()
}

#[test]
fn private_and_shared_tables_answer_alike() {
    let private = AnyTable::private(16).unwrap();
    let dir = TempDir::new("any-table");
    let shared = AnyTable::shared(dir.join("t"), 16, &Options::new()).unwrap();
    let expected = vec![
        ("limited".to_string(), Some(visits(3)), 0),
        ("plain".to_string(), None, 1),
    ];
    assert_eq!(exercise(&private), expected);
    assert_eq!(exercise(&shared), expected);
    assert_eq!(private.capacity(), 16);
    assert_eq!(private.path(), None);
    assert_eq!(shared.path(), Some(dir.join("t").as_path()));
}

#[test]
fn roles_are_always_held_on_a_private_table_and_exclusive_on_a_shared_one() {
    let private = AnyTable::private(8).unwrap();
    let a = private.try_take_role(Role::Reporter).unwrap();
    let b = private.try_take_role(Role::Reporter).unwrap();
    assert!(a.is_some() && b.is_some());
    let dir = TempDir::new("any-table-roles");
    let one = AnyTable::shared(dir.join("t"), 8, &Options::new()).unwrap();
    let two = AnyTable::shared(dir.join("t"), 8, &Options::new()).unwrap();
    let held = one.try_take_role(Role::Syncer).unwrap();
    assert!(held.is_some());
    assert!(two.try_take_role(Role::Syncer).unwrap().is_none());
    drop(held);
    assert!(two.try_take_role(Role::Syncer).unwrap().is_some());
}

#[test]
fn a_bad_capacity_is_refused() {
    assert!(matches!(
        AnyTable::private(0),
        Err(sds_shm::Error::InvalidCapacity { capacity: 0 })
    ));
}
