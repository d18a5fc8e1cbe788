//! Relayouts on rayon's thread pool (feature `rayon`).

use super::{RelayoutError, RelayoutPlan};
use crate::{AnyLayout, Layout};

/// Chunks per thread: enough for the pool to even out uneven chunks.
const CHUNKS_PER_THREAD: usize = 4;
/// Below this many destination bytes a chunk is not worth a task.
const MIN_CHUNK_BYTES: usize = 256 * 1024;

impl Layout {
    /// [`pack`](Self::pack) on rayon's thread pool (feature `rayon`).
    ///
    /// # Errors
    ///
    /// As [`pack`](Self::pack).
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("f32[256,256]{1,0:T(8,128)}").unwrap();
    /// let logical: Vec<f32> = (0..l.len()).map(|x| x as f32).collect();
    /// let (mut a, mut b) = (vec![0.0; l.storage_len()], vec![0.0; l.storage_len()]);
    /// l.par_pack(&logical, &mut a).unwrap();
    /// l.pack(&logical, &mut b).unwrap();
    /// assert_eq!(a, b);
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "rayon")))]
    pub fn par_pack<T: Copy + Default + Send + Sync>(
        &self,
        logical_row_major: &[T],
        storage: &mut [T],
    ) -> Result<(), RelayoutError> {
        par_run(&self.pack_plan(T::default())?, logical_row_major, storage)
    }

    /// [`unpack`](Self::unpack) on rayon's thread pool (feature `rayon`).
    ///
    /// # Errors
    ///
    /// As [`unpack`](Self::unpack).
    ///
    /// # Examples
    ///
    /// ```
    /// let l = xla_layout::parse("bf16[64,256]{1,0:T(8,128)(2,1)}").unwrap();
    /// let storage: Vec<u16> = (0..l.storage_len() as u16).collect();
    /// let (mut a, mut b) = (vec![0u16; l.len()], vec![0u16; l.len()]);
    /// l.par_unpack(&storage, &mut a).unwrap();
    /// l.unpack(&storage, &mut b).unwrap();
    /// assert_eq!(a, b);
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "rayon")))]
    pub fn par_unpack<T: Copy + Send + Sync>(
        &self,
        storage: &[T],
        logical_row_major: &mut [T],
    ) -> Result<(), RelayoutError> {
        par_run(&self.unpack_plan()?, storage, logical_row_major)
    }

    /// [`convert_to`](Self::convert_to) on rayon's thread pool (feature
    /// `rayon`), into a run-time `&Layout` or a `layout!` value.
    ///
    /// # Errors
    ///
    /// As [`convert_to`](Self::convert_to).
    ///
    /// # Examples
    ///
    /// ```
    /// let from = xla_layout::parse("f32[300,200]{0,1}").unwrap();
    /// let to = xla_layout::parse("f32[300,200]{1,0:T(8,128)}").unwrap();
    /// let src: Vec<f32> = (0..from.storage_len()).map(|x| x as f32).collect();
    /// let (mut a, mut b) = (vec![0.0; to.storage_len()], vec![0.0; to.storage_len()]);
    /// from.par_convert(&src, &to, &mut a).unwrap();
    /// from.convert_to(&src, &to, &mut b).unwrap();
    /// assert_eq!(a, b);
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "rayon")))]
    pub fn par_convert<T: Copy + Default + Send + Sync, D: AnyLayout>(
        &self,
        storage: &[T],
        to: D,
        to_storage: &mut [T],
    ) -> Result<(), RelayoutError> {
        to.with_layout(|to| par_run(&self.convert_plan(to, T::default())?, storage, to_storage))
    }
}

fn par_run<T: Copy + Send + Sync>(
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
