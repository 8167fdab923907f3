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
