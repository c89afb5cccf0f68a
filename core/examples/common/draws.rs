//! Key draws the keyed benchmarks share (`keyed_vs_governor` here, and
//! sds-shm's `keyed_lookup`, included by `#[path]`): made beforehand into
//! an array read in order, so drawing costs nothing in the timed loop.

/// How many keys a draw holds (read in order, wrapping).
pub const DRAWS: usize = 1 << 20;

/// xorshift64: fast, seeded, the same sequence on every run.
pub struct XorShift(pub u64);

impl XorShift {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in 0..n (multiply-shift: no modulo bias worth naming).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next() as u128 * n as u128) >> 64) as u64
    }
}

/// Keys drawn uniformly from 0..n.
pub fn uniform(n: u64) -> Vec<u64> {
    let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
    (0..DRAWS).map(|_| rng.below(n)).collect()
}

/// Zipf with s = 1 over ranks 0..n (rank r drawn with weight 1 / (r + 1)),
/// by inverting the cumulative weights.
pub fn zipf(n: u64) -> Vec<u64> {
    let mut total = 0.0;
    let cdf: Vec<f64> = (1..=n)
        .map(|r| {
            total += 1.0 / r as f64;
            total
        })
        .collect();
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    (0..DRAWS)
        .map(|_| {
            let u = rng.unit() * total;
            cdf.partition_point(|&c| c <= u).min(n as usize - 1) as u64
        })
        .collect()
}
