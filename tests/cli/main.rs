//! The `softgen` binary end to end, one test binary: the commands as a user runs them
//! (`commands`), the bad-input corpus (`bad_input`) and faults injected from outside
//! (`faults`).

mod bad_input;
mod commands;
mod faults;
