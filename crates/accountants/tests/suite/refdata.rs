//! Reading the committed reference files under `tests/data/` (written by the generator scripts
//! beside them): comma-separated rows whose first field names the case kind, `#` comments.

/// The rows of `data` whose first field is `kind`, split at commas.
pub(crate) fn rows<'a>(
    data: &'static str,
    kind: &'a str,
) -> impl Iterator<Item = Vec<&'static str>> + 'a {
    data.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(move |f| f[0] == kind)
}

/// A decimal field.
pub(crate) fn num(s: &str) -> f64 {
    s.parse().unwrap()
}

/// An integer field.
pub(crate) fn int(s: &str) -> u64 {
    s.parse().unwrap()
}

/// Compositions built once per case key and reused: the reference files query one
/// composition at several ε or δ.
#[derive(Default)]
pub(crate) struct Composed(Vec<(String, dpinfer_accountants::pld_numeric::ComposedPld)>);

impl Composed {
    /// The composition of case `key`, built by `build` the first time the key is asked for.
    pub(crate) fn get(
        &mut self,
        key: &str,
        build: impl FnOnce() -> dpinfer_accountants::pld_numeric::ComposedPld,
    ) -> &dpinfer_accountants::pld_numeric::ComposedPld {
        let i = match self.0.iter().position(|(k, _)| k == key) {
            Some(i) => i,
            None => {
                self.0.push((key.to_owned(), build()));
                self.0.len() - 1
            }
        };
        &self.0[i].1
    }
}

/// δ(ε) of one release at `h = 10⁻⁴` against the exact value of case `case`: never below it
/// and at most 10⁻⁴ relative + 10⁻¹⁰ above it.
pub(crate) fn check_one_release(
    composed: &dpinfer_accountants::pld_numeric::ComposedPld,
    eps: f64,
    exact: f64,
    case: &[&str],
) {
    let d = composed.delta(eps).unwrap().delta;
    assert!(d >= exact, "{case:?}: ours {d} < exact {exact}");
    assert!(d <= exact * (1.0 + 1e-4) + 1e-10, "{case:?}: ours {d}");
}

/// Checks every `exact` row of `data` with [`check_one_release`]: fields `1..=params` name
/// the case (its one-release composition is built once, by `build` from those fields), the
/// next two are ε and the exact δ(ε). Returns the number of rows checked.
pub(crate) fn one_release_rows(
    data: &'static str,
    params: usize,
    build: impl Fn(&[&str]) -> dpinfer_accountants::pld_numeric::ComposedPld,
) -> usize {
    let mut cache = Composed::default();
    let mut n = 0;
    for f in rows(data, "exact") {
        let case = &f[1..=params];
        let composed = cache.get(&case.join(","), || build(case));
        check_one_release(composed, num(f[params + 1]), num(f[params + 2]), &f);
        n += 1;
    }
    n
}
