//! What a conversion must give: the batches of seed 000's fixtures, built from their generating rules in
//! `seed-schemas` (never by the converter), and where a converted batch differs from one, every row and every
//! column compared.

use arrow::array::{Array, ArrayRef, RecordBatch};
use arrow::util::display::array_value_to_string;

pub use seed_schemas::fixture::{logs, metrics, traces};

/// Where `got` differs from `expected`: the first column that does, in the schema's order, at its first row
/// that does; or where their schemas or row counts differ.
pub fn first_difference(got: &RecordBatch, expected: &RecordBatch) -> Option<String> {
    if got.schema() != expected.schema() {
        return Some(format!("the batch's schema is {}, not the seed's {}", got.schema(), expected.schema()));
    }
    if got.num_rows() != expected.num_rows() {
        return Some(format!("{} rows, where the request held {}", got.num_rows(), expected.num_rows()));
    }
    for (c, field) in expected.schema().fields().iter().enumerate() {
        let (ours, theirs) = (got.column(c), expected.column(c));
        if ours.to_data() == theirs.to_data() {
            continue;
        }
        let row = (0..ours.len()).find(|&r| ours.slice(r, 1).to_data() != theirs.slice(r, 1).to_data())?;
        let show = |a: &ArrayRef| match a.is_null(row) {
            true => "null".to_string(),
            false => array_value_to_string(a, row).unwrap_or_else(|e| format!("({e})")),
        };
        return Some(format!(
            "row {row}, column `{}`: `{}`, where the fixture's rules give `{}`",
            field.name(),
            show(ours),
            show(theirs)
        ));
    }
    None
}
