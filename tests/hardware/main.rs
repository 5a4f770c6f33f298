//! The hardware path end to end, one test binary: runs in the loop on the simulated plant
//! (`in_the_loop`) and over the serial board's protocol to its emulator (`serial_board`).

mod in_the_loop;
mod serial_board;
