//! CoMD's random numbers (CoMD 1.1 `random.c`): a multiplicative congruential generator
//! modulo the Mersenne prime 2⁶¹ − 1, seeded per atom from its global id, so that a run's
//! random displacements (and velocities) do not depend on how atoms are distributed.

/// The modulus 2⁶¹ − 1.
pub const LCG61_MODULUS: u64 = (1 << 61) - 1;
/// The multiplier.
pub const LCG61_MULTIPLIER: u64 = 437_799_614_237_992_725;
/// Knuth's multiplicative hash constant, used to build seeds.
pub const KNUTH_HASH: u32 = 2_654_435_761;
/// The call site CoMD passes when seeding an atom's random displacement (`--delta`).
pub const DISPLACEMENT_CALL_SITE: u32 = 457;
/// The call site CoMD passes when seeding an atom's initial velocity.
pub const VELOCITY_CALL_SITE: u32 = 123;

/// Advances `seed` (`seed ← seed·a mod 2⁶⁴ mod (2⁶¹ − 1)`, the product wrapping as CoMD's
/// unsigned 64-bit arithmetic does) and returns it as a uniform deviate in [0, 1), scaled
/// as CoMD scales it: `seed as f64 · (1.0 / (2⁶¹ − 1) as f64)`.
pub fn lcg61(seed: &mut u64) -> f64 {
    *seed = seed.wrapping_mul(LCG61_MULTIPLIER) % LCG61_MODULUS;
    *seed as f64 * (1.0 / LCG61_MODULUS as f64)
}

/// The seed of atom `id` for one `call_site`: two wrapping 32-bit Knuth hashes, of `id` and
/// of `id + call_site`, in the high and low halves, then ten draws discarded.
pub fn seed_for(id: u32, call_site: u32) -> u64 {
    let high = id.wrapping_mul(KNUTH_HASH) as u64;
    let low = id.wrapping_add(call_site).wrapping_mul(KNUTH_HASH) as u64;
    let mut seed = (high << 32) + low;
    for _ in 0..10 {
        lcg61(&mut seed);
    }
    seed
}

/// A standard Gaussian deviate by CoMD's polar Box–Muller (`gasdev`): draw `v₁, v₂` uniform
/// in [−1, 1] until `q = v₁² + v₂²` is in (0, 1), return `v₂·√(−2 ln q / q)`.
pub fn gasdev(seed: &mut u64) -> f64 {
    loop {
        let v1 = 2.0 * lcg61(seed) - 1.0;
        let v2 = 2.0 * lcg61(seed) - 1.0;
        let q = v1 * v1 + v2 * v2;
        if q < 1.0 && q != 0.0 {
            return v2 * (-2.0 * q.ln() / q).sqrt();
        }
    }
}
