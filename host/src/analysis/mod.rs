//! Conclusions drawn from records: verdicts against a baseline, between interleaved arms or builds, and this
//! host's noise floor; the change points of a nightly history; which acknowledgements cover a verdict. Pure: records in, verdicts and change points out.

pub(crate) mod accepted_steps;
pub(crate) mod acknowledgements;
pub(crate) mod between_runs;
pub(crate) mod calibrate;
pub(crate) mod change_points;
pub(crate) mod compare;
pub(crate) mod decision;
pub(crate) mod duel;
pub(crate) mod instructions;
pub(crate) mod layout_floor;
pub(crate) mod layouts;
pub(crate) mod rounds;
mod scan_windows;
pub(crate) mod series_changes;
pub(crate) mod setup_order;
