//! Which acknowledgements (`benchhost accept`) of a stream stand: those no later record revokes.

use crate::Record;

/// The acknowledgements that hold among `records`: every acknowledgement record that no later record revokes,
/// in stream order.
pub fn standing_acknowledgements(records: &[Record]) -> Vec<&Record> {
    let revoked: std::collections::HashSet<&str> =
        records.iter().filter_map(|r| r.acknowledgement.as_ref()?.revokes.as_deref()).collect();
    records
        .iter()
        .filter(|r| r.acknowledgement.as_ref().is_some_and(|a| a.revokes.is_none() && !revoked.contains(a.id.as_str())))
        .collect()
}
