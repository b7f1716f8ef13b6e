//! Conclusions drawn from records: verdicts against a baseline, between interleaved arms or builds, and this
//! host's noise floor. Pure: records in, verdict records out.

pub(crate) mod calibrate;
pub(crate) mod compare;
pub(crate) mod decision;
pub(crate) mod duel;
pub(crate) mod instructions;
pub(crate) mod rounds;
