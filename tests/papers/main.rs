//! The seed papers' robots against the papers and against independent models, one test
//! binary with a module per paper (the experiments themselves run as commands in the CLI
//! tests).

mod modular_snake;
mod panda_soft_finger;
mod pinniped;
mod soft_snake;
mod underwater_snake;
mod wpi_snake;
