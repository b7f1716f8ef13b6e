//! benchhost's integration tests, one binary with a module per topic (as ripgrep's are): on 2 cores, one link
//! instead of fifteen (see each module for its topic). They drive the `benchhost` binary as a user would; the
//! records they read back go through `benchhost-record`.

mod support;

mod abi;
mod accept;
mod authoring;
mod bisect;
mod bisect_bench;
mod cli;
mod committed;
mod compare;
mod conditions;
mod examples;
mod faults;
mod fleet;
mod fresh_clone;
mod habits;
mod heap;
mod history;
mod html;
mod input;
mod instructions;
mod interleave;
mod kafka;
mod kill;
mod lakehouse;
mod layouts;
mod pairing;
mod refusals;
mod review;
mod shard;
mod tour;
mod transcripts;
mod trend;
mod trust;
mod verify;
