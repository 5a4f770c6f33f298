//! Sweeps: a sweep file turned into numbered runs, what one run runs and the figures it
//! gives, running on every core with a journal and shards, and the results table.

pub(crate) mod file;
pub(crate) mod runner;
pub(crate) mod table;
pub(crate) mod target;
