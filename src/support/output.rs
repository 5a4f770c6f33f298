//! Output files written beside their target and renamed into place only once a run has
//! produced them, so a run that fails at its start (a bad parameter, a device that does not
//! answer, a state that is not finite at t = 0) never truncates or replaces an earlier result.

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

    /// Replaces the target with what was written (the writer must be flushed and closed).
    pub fn commit(mut self) -> Result<(), String> {
        std::fs::rename(&self.partial, &self.target).map_err(|e| format!("{}: {e}", self.target.display()))?;
        self.committed = true;
        Ok(())
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
}
