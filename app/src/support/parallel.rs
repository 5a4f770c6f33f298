//! Independent runs spread over every core: each worker takes the next run until none are
//! left, and the results come back in the runs' order.

use std::sync::atomic::{AtomicUsize, Ordering};

/// `run(item)` for every item on all cores; a worker that panicked leaves its items as
/// `Err("not run")`.
pub fn run_all<T: Sync, O: Send>(items: &[T], run: impl Fn(&T) -> Result<O, String> + Sync) -> Vec<Result<O, String>> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(items.len().max(1));
    let next = AtomicUsize::new(0);
    let mut results: Vec<Result<O, String>> = items.iter().map(|_| Err("not run".to_string())).collect();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { return done };
                        done.push((i, run(item)));
                    }
                })
            })
            .collect();
        for done in handles.into_iter().filter_map(|handle| handle.join().ok()) {
            done.into_iter().for_each(|(i, outcome)| results[i] = outcome);
        }
    });
    results
}
