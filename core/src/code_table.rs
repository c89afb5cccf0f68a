//! Stable code tables (error codes, downgrade reasons, adaptive algorithms):
//! enums whose numbers and names every binding shows, declared from one
//! list each so a variant, its code and its name are written once.

/// Declares a stable code table: the enum (codes 1, 2, 3, ... in order,
/// each variant with its stable name), `ALL` (every value, in code order),
/// `as_str` (the name), the lookup by code under the name and number type
/// the caller gives, and `Display` as the name.
///
/// The lookup indexes `ALL` by code, so a build-time check refuses codes
/// that are not 1, 2, 3, ... in declaration order: a gap or a reordering
/// fails to compile instead of answering with the wrong value.
macro_rules! code_table {
    (
        $(#[$attr:meta])*
        pub enum $ty:ident: $repr:ident {
            $( $(#[$variant_attr:meta])* $variant:ident = $code:literal => $name:literal, )+
        }
        $(#[$from_attr:meta])*
        pub const fn $from:ident(code: $code_ty:ty);
    ) => {
        $(#[$attr])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
        #[repr($repr)]
        pub enum $ty {
            $( $(#[$variant_attr])* $variant = $code, )+
        }

        impl $ty {
            /// Every value, in code order.
            pub const ALL: [$ty; [$($name),+].len()] = [$($ty::$variant),+];

            /// The stable name, as every binding shows it (C's constants,
            /// Node's and Python's `code`, SDS's reports).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }

            $(#[$from_attr])*
            pub const fn $from(code: $code_ty) -> Option<$ty> {
                // `code >= 1` first: a negative code never reaches the cast.
                if code >= 1 && code as u64 <= $ty::ALL.len() as u64 {
                    Some($ty::ALL[code as usize - 1])
                } else {
                    None
                }
            }
        }

        const _: () = {
            let mut i = 0;
            while i < $ty::ALL.len() {
                assert!(
                    $ty::ALL[i] as usize == i + 1,
                    concat!(stringify!($ty), "'s codes must be 1, 2, 3, ... in order")
                );
                i += 1;
            }
        };

        impl core::fmt::Display for $ty {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
pub(crate) use code_table;
