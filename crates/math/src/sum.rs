//! Compensated summation.

/// Neumaier's improved Kahan–Babuška summation.
///
/// The running error term makes the result accurate to about one ulp of the exact sum for
/// any order of inputs (unless the exact sum cancels catastrophically), at twice the cost of a
/// plain sum. Non-finite inputs propagate as in ordinary summation (`inf + -inf = NaN`).
///
/// ```
/// use dpinfer_math::NeumaierSum;
/// let mut s = NeumaierSum::new();
/// for x in [1.0, 1e100, 1.0, -1e100] {
///     s.add(x);
/// }
/// assert_eq!(s.sum(), 2.0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NeumaierSum {
    sum: f64,
    comp: f64,
}

impl NeumaierSum {
    /// An empty sum (value 0).
    #[must_use]
    pub const fn new() -> Self {
        Self {
            sum: 0.0,
            comp: 0.0,
        }
    }

    /// Adds `x` to the running sum.
    #[inline]
    pub fn add(&mut self, x: f64) {
        let t = self.sum + x;
        // The larger operand first (a select, not a branch: the same bits, and loops of
        // independent sums vectorise).
        let (big, small) = if self.sum.abs() >= x.abs() {
            (self.sum, x)
        } else {
            (x, self.sum)
        };
        self.comp += (big - t) + small;
        self.sum = t;
    }

    /// The compensated total.
    #[inline]
    #[must_use]
    pub fn sum(&self) -> f64 {
        let s = self.sum + self.comp;
        // If the plain sum overflowed or is non-finite, the compensation is meaningless.
        if self.sum.is_finite() { s } else { self.sum }
    }

    /// Sums an iterator with compensation.
    #[must_use]
    pub fn sum_iter<I: IntoIterator<Item = f64>>(it: I) -> f64 {
        let mut s = Self::new();
        for x in it {
            s.add(x);
        }
        s.sum()
    }
}

impl Extend<f64> for NeumaierSum {
    fn extend<T: IntoIterator<Item = f64>>(&mut self, iter: T) {
        for x in iter {
            self.add(x);
        }
    }
}
