//! `benchhost bisect`: from a regression between two commits to the commit that made it. The search
//! (`search`), the call on each step (`judge`), the repository and its builds (`git`, `builds`), each step's
//! measurement (`step`) and the commands they wait for (`child`); `cli/bisect.rs` puts them together.

pub mod builds;
pub mod child;
pub mod git;
pub mod judge;
pub mod search;
pub mod step;
