//! Where a plan runs: on the calling thread, or in chunks on rayon's
//! thread pool (feature `rayon`), as its [`Threads`] say.

use super::plan::RelayoutPlan;
use super::{RelayoutError, Threads};

impl<T: Copy> RelayoutPlan<'_, T> {
    /// [`run`](Self::run) on `threads`.
    pub(super) fn run_on(
        &self,
        threads: Threads,
        src: &[T],
        dst: &mut [T],
    ) -> Result<(), RelayoutError>
    where
        T: Send + Sync,
    {
        match threads {
            Threads::One => self.run(src, dst),
            #[cfg(feature = "rayon")]
            Threads::Pool => par_run(self, src, dst),
        }
    }
}

/// Chunks per thread: enough for the pool to even out uneven chunks.
#[cfg(feature = "rayon")]
const CHUNKS_PER_THREAD: usize = 4;
/// Below this many destination bytes a chunk is not worth a task.
#[cfg(feature = "rayon")]
const MIN_CHUNK_BYTES: usize = 256 * 1024;

/// Runs `plan` in chunks of about equal work on rayon's current pool;
/// whole when the destination is too small to pay for tasks.
#[cfg(feature = "rayon")]
pub(super) fn par_run<T: Copy + Send + Sync>(
    plan: &RelayoutPlan<'_, T>,
    src: &[T],
    dst: &mut [T],
) -> Result<(), RelayoutError> {
    let bytes = dst.len().saturating_mul(core::mem::size_of::<T>());
    let n = (rayon::current_num_threads() * CHUNKS_PER_THREAD).min(bytes / MIN_CHUNK_BYTES);
    if n <= 1 {
        return plan.run(src, dst);
    }
    // Both lengths are checked here, in `run`'s order, so no chunk can fail.
    plan.run_checks(src.len())?;
    let chunks = plan.chunks_mut(n, dst)?;
    rayon::scope(|s| {
        for (chunk, part) in chunks {
            s.spawn(move |_| {
                let _ = chunk.run(src, part);
            });
        }
    });
    Ok(())
}
