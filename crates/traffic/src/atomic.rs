//! Files that appear whole or not at all: written under a hidden temporary name in the target's directory
//! and renamed into place by [`AtomicFile::commit`]. A file dropped before that (an error, a full disk)
//! is removed; a signal runs no destructor, so every temporary is also listed in a process-wide registry
//! that a signal handler empties with [`abandon_all`]. Files get the usual mode (0666 less the umask).

use std::fs::Permissions;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use tempfile::TempPath;

/// The temporaries not yet committed or dropped, in creation order.
static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn registry() -> MutexGuard<'static, Vec<PathBuf>> {
    // A panic while holding the lock leaves the list itself consistent (every operation is one push or
    // one retain), so a poisoned lock is still usable.
    TEMPORARIES.lock().unwrap_or_else(|e| e.into_inner())
}

/// A file being written: bytes go to a temporary next to the target until [`AtomicFile::commit`].
pub struct AtomicFile {
    target: PathBuf,
    temp: Option<TempPath>,
    out: Box<dyn Write + Send>,
}

impl AtomicFile {
    /// Start writing `target`: create `.rxlab-XXXXXX` in its directory, with the target's extension.
    pub fn create(target: impl AsRef<Path>) -> io::Result<AtomicFile> {
        let target = target.as_ref().to_path_buf();
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let mut list = registry();
        let suffix = target.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
        let (file, temp) = tempfile::Builder::new()
            .prefix(".rxlab-")
            .suffix(&suffix)
            .permissions(Permissions::from_mode(0o666))
            .tempfile_in(dir)?
            .into_parts();
        list.push(temp.to_path_buf());
        Ok(AtomicFile { target, temp: Some(temp), out: Box::new(file) })
    }

    /// An atomic file whose bytes go to `out` instead of its temporary (which stays empty): a test's
    /// failing writer, standing in for a full disk.
    #[cfg(test)]
    pub(crate) fn with_writer(target: impl AsRef<Path>, out: impl Write + Send + 'static) -> io::Result<AtomicFile> {
        let mut file = AtomicFile::create(target)?;
        file.out = Box::new(out);
        Ok(file)
    }

    /// The file's final name.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The temporary's name, for writers that open files by name (e.g. an image encoder).
    pub fn temp_path(&self) -> &Path {
        self.temp.as_deref().expect("a temporary until committed")
    }

    /// Flush the bytes and rename the temporary to the target.
    pub fn commit(mut self) -> io::Result<()> {
        self.out.flush()?;
        let temp = self.temp.take().expect("a temporary until committed");
        let mut list = registry();
        let path = temp.to_path_buf();
        list.retain(|p| *p != path);
        temp.persist(&self.target).map_err(|e| e.error)
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if let Some(temp) = self.temp.take() {
            let mut list = registry();
            let path = temp.to_path_buf();
            list.retain(|p| *p != path);
            drop(temp);
        }
    }
}

/// Write `bytes` to `target` atomically.
pub fn write(target: impl AsRef<Path>, bytes: impl AsRef<[u8]>) -> io::Result<()> {
    let mut f = AtomicFile::create(target)?;
    f.write_all(bytes.as_ref())?;
    f.commit()
}

/// Remove every temporary not yet committed and keep any other from being created, committed or
/// dropped from now on (those threads wait forever): for a process about to exit on a signal. Returns
/// the temporaries removed.
pub fn abandon_all() -> Vec<PathBuf> {
    let list = registry();
    let removed: Vec<PathBuf> = list.iter().filter(|p| std::fs::remove_file(p).is_ok()).cloned().collect();
    std::mem::forget(list);
    removed
}

/// A disk that fills after `room` bytes, for tests of what a full disk does to a writer.
#[cfg(test)]
pub(crate) struct FullAfter {
    /// Bytes that still fit.
    pub room: usize,
}

#[cfg(test)]
impl Write for FullAfter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.room == 0 {
            return Err(io::Error::from(io::ErrorKind::StorageFull));
        }
        let n = buf.len().min(self.room);
        self.room -= n;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<PathBuf> {
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect()
    }

    #[test]
    fn commit_renames_and_drop_removes() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.txt");
        write(&target, "whole").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "whole");
        let mut f = AtomicFile::create(dir.path().join("b.txt")).unwrap();
        f.write_all(b"half").unwrap();
        assert!(registry().contains(&f.temp_path().to_path_buf()));
        drop(f);
        assert_eq!(entries(dir.path()), [target]);
    }

    #[test]
    fn a_full_disk_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = AtomicFile::with_writer(dir.path().join("c.bin"), FullAfter { room: 10 }).unwrap();
        let e = f.write_all(&[0; 64]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
        drop(f);
        assert!(entries(dir.path()).is_empty());
    }
}
