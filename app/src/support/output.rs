//! Output files written beside their target and renamed into place only once a run has
//! ended normally (or was stopped by a signal), so a run that fails (a bad parameter, a
//! device that does not answer, a state that stops being finite) never truncates or replaces
//! an earlier result; what a failed run wrote is kept as `<stem>.failed.<extension>`.

use std::fs::File;
use std::path::{Path, PathBuf};

/// A file being written at `<target>.partial`: [`PendingFile::commit`] renames it onto the
/// target; dropped without a commit, it is removed and the target is untouched.
#[derive(Debug)]
pub struct PendingFile {
    partial: PathBuf,
    target: PathBuf,
    committed: bool,
}

impl PendingFile {
    /// Creates `<target>.partial` for writing. Fails, naming the path, when the target is a
    /// directory or the partial file cannot be created.
    pub fn create(target: &Path) -> Result<(PendingFile, File), String> {
        if target.is_dir() {
            return Err(format!("{}: is a directory, not a file to write", target.display()));
        }
        let mut name = target
            .file_name()
            .map(|n| n.to_os_string())
            .ok_or_else(|| format!("{}: not a file name", target.display()))?;
        name.push(".partial");
        let partial = target.with_file_name(name);
        let file = File::create(&partial).map_err(|e| format!("{}: {e}", partial.display()))?;
        Ok((PendingFile { partial, target: target.to_path_buf(), committed: false }, file))
    }

    /// Where the output will be.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Replaces the target with what was written (the writer must be flushed and closed),
    /// and removes what an earlier failed run left beside it.
    pub fn commit(mut self) -> Result<(), String> {
        std::fs::rename(&self.partial, &self.target).map_err(|e| format!("{}: {e}", self.target.display()))?;
        self.committed = true;
        let _ = std::fs::remove_file(failed_path(&self.target));
        Ok(())
    }

    /// For a run that failed after it started: keeps what it wrote, for finding out why, at
    /// `<stem>.failed.<extension>` beside the target, which stays as it was. Returns that path.
    pub fn keep_as_failed(mut self) -> Result<PathBuf, String> {
        let failed = failed_path(&self.target);
        std::fs::rename(&self.partial, &failed).map_err(|e| format!("{}: {e}", failed.display()))?;
        self.committed = true;
        Ok(failed)
    }
}

/// Where a failed run's output goes: `run.csv` -> `run.failed.csv`.
fn failed_path(target: &Path) -> PathBuf {
    let stem = target.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    match target.extension() {
        Some(extension) => target.with_file_name(format!("{stem}.failed.{}", extension.to_string_lossy())),
        None => target.with_file_name(format!("{stem}.failed")),
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::PendingFile;
    use std::io::Write;

    #[test]
    fn the_target_changes_only_on_commit() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("run.csv");
        std::fs::write(&target, "earlier result").unwrap();
        {
            let (pending, mut file) = PendingFile::create(&target).unwrap();
            writeln!(file, "half a run").unwrap();
            drop(pending);
        }
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "earlier result");
        assert!(!dir.path().join("run.csv.partial").exists(), "an abandoned partial file is removed");
        let (pending, mut file) = PendingFile::create(&target).unwrap();
        write!(file, "new result").unwrap();
        drop(file);
        pending.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new result");
        let error = PendingFile::create(dir.path()).unwrap_err();
        assert!(error.contains("is a directory"), "{error}");
    }

    #[test]
    fn a_failed_run_is_kept_beside_the_untouched_target() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("run.csv");
        std::fs::write(&target, "earlier result").unwrap();
        let (pending, mut file) = PendingFile::create(&target).unwrap();
        write!(file, "up to the failure").unwrap();
        drop(file);
        let failed = pending.keep_as_failed().unwrap();
        assert_eq!(failed, dir.path().join("run.failed.csv"));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "earlier result");
        assert_eq!(std::fs::read_to_string(&failed).unwrap(), "up to the failure");
        let (pending, file) = PendingFile::create(&target).unwrap();
        drop(file);
        pending.commit().unwrap();
        assert!(!failed.exists(), "a run that ends normally removes the last failed run's output");
    }
}
