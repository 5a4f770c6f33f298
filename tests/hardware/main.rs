//! The hardware path end to end, one test binary: runs in the loop on the simulated plant
//! (`in_the_loop`) and over the serial board's protocol to its emulator (`serial_board`).

mod in_the_loop;
mod serial_board;

/// One real-time run at a time in this binary: each runs a 1 kHz loop (with a plant, and for
/// the board's tests an emulator process, a planner and a NatNet reader besides), and two
/// at once on a two-core machine miss their deadlines for the machine's sake, not the
/// code's. A CI run of the whole binary, a board-and-NatNet run beside an in-loop run, had
/// the wheeled snake's filter fault on a streak of late-stamped motion-capture frames (twice
/// in CI, never alone here). As on a robot's computer, the runs take turns.
pub(crate) fn one_real_time_run() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
