//! The subcommands of the `softgen` binary, one file each: their clap arguments and the
//! handler that turns them into a call of the library. Shared here: values given on the
//! command line. The papers' own commands are registered by the papers
//! (`softgen::papers::PaperCommand`).

pub(crate) mod eval;
pub(crate) mod experiment;
pub(crate) mod list;
pub(crate) mod run;
pub(crate) mod simulate;
pub(crate) mod sweep;
pub(crate) mod values;
pub(crate) mod view;
