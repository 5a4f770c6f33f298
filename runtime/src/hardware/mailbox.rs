//! A latest-value slot between threads: the real-time loop posts and reads without ever
//! blocking (it skips a period instead), the other side takes the newest value.

use std::sync::{Mutex, TryLockError};

/// Holds the newest value posted and a sequence number that grows with every post, so a
/// reader can tell a new value from one it has already seen.
#[derive(Debug)]
pub struct Mailbox<T: Copy> {
    slot: Mutex<(u64, Option<T>)>,
}

impl<T: Copy> Default for Mailbox<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy> Mailbox<T> {
    /// An empty mailbox.
    pub fn new() -> Self {
        Mailbox { slot: Mutex::new((0, None)) }
    }

    /// Replaces the value unless the other side holds the slot right now; returns whether
    /// it was posted. Never blocks, never allocates.
    pub fn try_post(&self, value: T) -> bool {
        match self.slot.try_lock() {
            Ok(mut slot) => {
                slot.0 += 1;
                slot.1 = Some(value);
                true
            }
            Err(TryLockError::Poisoned(poisoned)) => {
                let mut slot = poisoned.into_inner();
                slot.0 += 1;
                slot.1 = Some(value);
                true
            }
            Err(TryLockError::WouldBlock) => false,
        }
    }

    /// Replaces the value, waiting for the slot if the other side holds it (for threads
    /// without a deadline).
    pub fn post(&self, value: T) {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        slot.0 += 1;
        slot.1 = Some(value);
    }

    /// The newest value and its sequence number, unless the slot is busy or empty. Never
    /// blocks.
    pub fn try_latest(&self) -> Option<(u64, T)> {
        let slot = match self.slot.try_lock() {
            Ok(slot) => slot,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        slot.1.map(|v| (slot.0, v))
    }

    /// The newest value and its sequence number, waiting for the slot if it is busy.
    pub fn latest(&self) -> Option<(u64, T)> {
        let slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        slot.1.map(|v| (slot.0, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn newest_value_wins_and_sequence_grows() {
        let mailbox = Mailbox::new();
        assert_eq!(mailbox.try_latest(), None);
        assert!(mailbox.try_post(1.0));
        mailbox.post(2.0);
        assert_eq!(mailbox.latest(), Some((2, 2.0)));
        assert_eq!(mailbox.try_latest(), Some((2, 2.0)));
    }

    #[test]
    fn posting_never_blocks_while_the_reader_holds_the_slot() {
        let mailbox = Arc::new(Mailbox::new());
        let guard = mailbox.slot.lock().unwrap();
        assert!(!mailbox.try_post(5_u32));
        assert_eq!(mailbox.try_latest(), None);
        drop(guard);
        assert!(mailbox.try_post(5_u32));
        let reader = Arc::clone(&mailbox);
        let seen = std::thread::spawn(move || reader.latest()).join().unwrap();
        assert_eq!(seen, Some((1, 5)));
    }
}
