//! The two neighbouring relations, by the short names every test module uses.

use dpinfer_accountants::Neighbouring;

/// Add/remove one record.
pub(crate) const AR: Neighbouring = Neighbouring::AddRemove;
/// Replace one record.
pub(crate) const RO: Neighbouring = Neighbouring::ReplaceOne;
