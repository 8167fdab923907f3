//! FNV-1a, 64 bit (Fowler–Noll–Vo; the parameters of draft-eastlake-fnv, offset basis
//! `0xcbf29ce484222325`, prime `0x100000001b3`): the workspace's one fingerprint hash, for
//! configuration fingerprints and pinned-output checks. Not cryptographic and not keyed:
//! never use it where an adversary chooses the input and a collision matters.
//!
//! Floats are hashed by their little-endian bytes (`f64::to_le_bytes`, i.e. their bits), so
//! a fingerprint is the same on every target.
//!
//! ```
//! use dpinfer_math::Fnv1a;
//! assert_eq!(Fnv1a::of(b"foobar"), 0x85944171f73967e8);
//! let mut h = Fnv1a::new();
//! h.write(b"foo");
//! h.write(b"bar");
//! assert_eq!(h.finish(), 0x85944171f73967e8);
//! ```

/// A running FNV-1a 64 hash.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Self::new()
    }
}

impl Fnv1a {
    /// The offset basis (the hash of no bytes).
    pub const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    /// The 64-bit FNV prime.
    pub const PRIME: u64 = 0x0100_0000_01b3;

    /// The hash of no bytes.
    #[must_use]
    pub const fn new() -> Self {
        Self(Self::OFFSET_BASIS)
    }

    /// Continues from a previously finished hash `state`.
    #[must_use]
    pub const fn from_state(state: u64) -> Self {
        Self(state)
    }

    /// Mixes in `bytes`.
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }

    /// Mixes in the little-endian bytes of `x`.
    pub fn write_u64(&mut self, x: u64) {
        self.write(&x.to_le_bytes());
    }

    /// Mixes in the little-endian bytes of each float (its bits: `-0.0` and `0.0` differ,
    /// NaN payloads count).
    pub fn write_f64s(&mut self, xs: &[f64]) {
        for x in xs {
            self.write(&x.to_le_bytes());
        }
    }

    /// The hash so far.
    #[must_use]
    pub const fn finish(&self) -> u64 {
        self.0
    }

    /// The hash of `bytes`.
    #[must_use]
    pub fn of(bytes: &[u8]) -> u64 {
        let mut h = Self::new();
        h.write(bytes);
        h.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::Fnv1a;

    /// Test vectors of the FNV reference (draft-eastlake-fnv, "FNV-1a 64").
    #[test]
    fn reference_vectors() {
        assert_eq!(Fnv1a::of(b""), 0xcbf29ce484222325);
        assert_eq!(Fnv1a::of(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(Fnv1a::of(b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn floats_hash_by_little_endian_bits() {
        let xs = [1.5, -0.0, f64::INFINITY];
        let mut a = Fnv1a::new();
        a.write_f64s(&xs);
        let mut b = Fnv1a::new();
        for x in xs {
            b.write_u64(x.to_bits());
        }
        assert_eq!(a, b);
        let mut c = Fnv1a::new();
        c.write_f64s(&[1.5, 0.0, f64::INFINITY]);
        assert_ne!(a, c);
        let mut d = Fnv1a::from_state(Fnv1a::of(b"foo"));
        d.write(b"bar");
        assert_eq!(d.finish(), Fnv1a::of(b"foobar"));
    }
}
