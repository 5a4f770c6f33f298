//! The `softgen` binary end to end, one test binary: the commands as a user runs them
//! (`commands`) and the bad-input corpus (`bad_input`).

mod bad_input;
mod commands;
