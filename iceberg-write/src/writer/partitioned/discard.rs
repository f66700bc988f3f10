//! Discarding what a [`DataFileWriter`] wrote: [`DataFileWriter::abort`], and the same in the
//! background when a writer is dropped before it was closed.

use super::DataFileWriter;
use crate::error::Result;

impl DataFileWriter {
    /// Discards every open file and deletes every file already closed (dropping the writer
    /// does the same in the background).
    ///
    /// # Errors
    /// The first IO error met; the other files are still attempted.
    pub async fn abort(mut self) -> Result<()> {
        let mut first_error = None;
        // A round left running puts its files back first (even when it failed).
        let _ = self.settle_round().await;
        // The spill's folder goes once a run still being written is done.
        if let Some(mut spill) = self.spill.take() {
            let _ = spill.finish_writing().await;
        }
        // Files finishing in the background land first, then go with the closed ones; a
        // failed close may still have left its object.
        while let Some((path, task)) = self.closing.pop_front() {
            match task.await {
                Ok(Ok(file)) => self.closed.push(file),
                _ => {
                    if let Err(e) = self.io.delete(&path).await {
                        first_error.get_or_insert(e.into());
                    }
                }
            }
        }
        for (_, open) in self.open.drain() {
            let path = open.file.path().to_string();
            if let Err(e) = open.file.abort().await {
                // The upload may have completed already: remove what is there.
                if self.io.delete(&path).await.is_err() {
                    first_error.get_or_insert(e);
                }
            }
        }
        let paths: Vec<String> = self.closed.drain(..).map(|f| f.file_path).collect();
        if !paths.is_empty()
            && let Err(e) = self.io.delete_many(paths).await
        {
            first_error.get_or_insert(e.into());
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// A writer dropped before [`DataFileWriter::close`] or [`DataFileWriter::abort`] (a timeout,
/// a cancelled task) discards what it wrote: its open files abort their uploads themselves
/// (`iceberg_io::FileWriter`), and the files finishing in the background or already closed
/// are deleted by a detached task once their closes are done, so no file is left that no
/// snapshot will reference. The spill's local folder goes with the writer, or once a run
/// still being written in a task is done. Without a runtime the closes are aborted and
/// nothing is deleted.
impl Drop for DataFileWriter {
    fn drop(&mut self) {
        let closing: Vec<_> = self.closing.drain(..).collect();
        let mut paths: Vec<String> = self.closed.drain(..).map(|f| f.file_path).collect();
        if closing.is_empty() && paths.is_empty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            for (_, task) in closing {
                task.abort();
            }
            return;
        };
        let io = self.io.clone();
        drop(runtime.spawn(async move {
            for (path, task) in closing {
                // Whatever the close did, its object may exist by now.
                let _ = task.await;
                paths.push(path);
            }
            let _ = io.delete_many(paths).await;
        }));
    }
}
