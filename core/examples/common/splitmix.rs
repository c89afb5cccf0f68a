//! splitmix64, the seeded generator `examples/adaptive_sim.rs` draws its
//! model from (tools/adaptive-sim's Java twin replays the same numbers) and
//! `tests/adaptive.rs` its random samples, included by `#[path]`.

pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}
