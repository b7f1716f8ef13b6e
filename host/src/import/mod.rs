//! Other tools' results brought into records: Criterion's output directory. Reads their files, writes no
//! stream (the command appends what it returns).

pub(crate) mod criterion;
