//! Batches without replacement by a partial Fisher–Yates shuffle (O(|B|) per batch).

use alloc::vec::Vec;
use rand_core::Rng;

use crate::rng::below;

#[derive(Clone, Debug)]
pub(crate) struct Batcher {
    perm: Vec<usize>,
    size: usize,
}

impl Batcher {
    pub(crate) fn new(n: usize, size: usize) -> Self {
        Self {
            perm: (0..n).collect(),
            size,
        }
    }
    /// A uniformly random `size`-subset of `0..n` (any starting arrangement of `perm` gives
    /// a uniform subset after the partial shuffle).
    pub(crate) fn draw<R: Rng + ?Sized>(&mut self, rng: &mut R) -> &[usize] {
        let n = self.perm.len();
        for i in 0..self.size {
            let j = i + below(rng, n - i);
            self.perm.swap(i, j);
        }
        &self.perm[..self.size]
    }
}
